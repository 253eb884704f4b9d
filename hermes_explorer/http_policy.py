"""HTTP behaviour every page shares, whichever view answers.

* :class:`HeadAsGetMiddleware`: ``HEAD`` answers exactly as ``GET`` would, without the body.
  Django's ``require_GET`` refuses ``HEAD`` with a 405, which breaks link checkers and uptime
  monitors; rather than relying on every view saying ``require_safe``, a ``HEAD`` is served as
  a ``GET`` here and the body dropped (the headers, ``Content-Length`` included, stay those of
  the ``GET``).
* :class:`AllowedMethodsMiddleware`: only ``GET``, ``HEAD``, ``POST`` and ``OPTIONS`` are
  answered; anything else is a 405.
* :class:`NoStoreMiddleware`: ``Cache-Control: private, no-store`` on every response the app
  makes (static files are served before it): pages and downloads show conversation data that
  must not stay in a browser's or a proxy's cache after sign-out.
"""

from __future__ import annotations

from django.http import HttpResponseNotAllowed
from django.utils.cache import patch_cache_control

ALLOWED_METHODS = ("GET", "HEAD", "POST", "OPTIONS")


class AllowedMethodsMiddleware:
    """405 for any method but GET, HEAD, POST and OPTIONS (``TRACE``, ``PUT``…), before any
    view or middleware reads the request."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method not in ALLOWED_METHODS:
            return HttpResponseNotAllowed(ALLOWED_METHODS)
        return self.get_response(request)


class HeadAsGetMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method != "HEAD":
            return self.get_response(request)
        request.method = "GET"
        try:
            response = self.get_response(request)
        finally:
            request.method = "HEAD"
        if response.streaming:
            # The download's own iterator is still closed with the response.
            response.streaming_content = []
        else:
            response.content = b""
        return response


class NoStoreMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if "no-store" not in response.get("Cache-Control", ""):
            patch_cache_control(response, private=True, no_store=True)
        return response
