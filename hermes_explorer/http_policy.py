"""HTTP behaviour every page shares, whichever view answers (:class:`HttpPolicyMiddleware`):
other methods than ``ALLOWED_METHODS`` get a 405, ``HEAD`` is served as ``GET`` without the
body (``require_GET`` would answer 405), and every response (static files aside) is
``private, no-store``: conversation data must not stay in a cache after sign-out.
"""

from __future__ import annotations

import re

from django.http import HttpResponse, HttpResponseNotAllowed, JsonResponse
from django.utils.cache import patch_cache_control

ALLOWED_METHODS = ("GET", "HEAD", "POST", "OPTIONS")
# URLs of the old Datasette API (scripts read them): they answer errors in their own format.
API_PATH = re.compile(r"^/(?:state(?:/[^?]*)?\.(?:json|csv)|-/versions\.json)$")
SIGN_IN = (
    "Sign in: send Authorization: Bearer <token> (make one on your account page) "
    "or Basic credentials."
)


def api_error(path: str, status: int, message: str, *, title=None, challenge=False):
    """The old API's error answer: Datasette's error object for ``.json``, else one plain line
    (``challenge``: with the Basic sign-in challenge)."""
    if path.endswith(".json"):
        body = {"ok": False, "error": message, "status": status, "title": title}
        response = JsonResponse(body, status=status)
    else:
        response = HttpResponse(
            message + "\n", status=status, content_type="text/plain; charset=utf-8"
        )
    if challenge:
        response["WWW-Authenticate"] = 'Basic realm="Hermes Explorer", charset="UTF-8"'
    return response


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
