"""HTTP behaviour every page shares, whichever view answers (:class:`HttpPolicyMiddleware`).

* Anything but ``GET``, ``HEAD``, ``POST`` and ``OPTIONS`` is a 405, before anything reads
  the request.
* ``HEAD`` is served as ``GET`` with the body dropped (its headers kept): ``require_GET``
  would answer 405, which breaks link checkers and monitors.
* ``Cache-Control: private, no-store`` on every response (static files aside): conversation
  data must not stay in a cache after sign-out.
"""

from __future__ import annotations

from django.http import HttpResponseNotAllowed
from django.utils.cache import patch_cache_control

ALLOWED_METHODS = ("GET", "HEAD", "POST", "OPTIONS")


class HttpPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method not in ALLOWED_METHODS:
            response = HttpResponseNotAllowed(ALLOWED_METHODS)
        elif request.method == "HEAD":
            response = self._head(request)
        else:
            response = self.get_response(request)
        if "no-store" not in response.get("Cache-Control", ""):
            patch_cache_control(response, private=True, no_store=True)
        return response

    def _head(self, request):
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
