"""Sign-in for scripts: HTTP Basic and personal tokens (``tokens.py``) on *script URLs* only
(:func:`is_script_url`: the old API and every download, GET or HEAD).  Pages keep the session
sign-in, so a browser that once sent Basic credentials cannot be led to act with them.

Basic goes through ``authenticate``, so django-axes' lockout counts and refuses (429).  Tokens
are read from the header only, never the query string (URLs end up in logs).
"""

from __future__ import annotations

import base64
import binascii
import re

from django.conf import settings
from django.contrib.auth import authenticate

from hermes_explorer.http_policy import API_PATH, SIGN_IN, api_error

from . import tokens

DOWNLOAD_PATH = re.compile(r"\.(?:csv|json|jsonl|md|txt)$")


def is_script_url(request) -> bool:
    if request.method not in ("GET", "HEAD"):
        return False
    path = request.path_info
    return bool(
        API_PATH.search(path)
        or DOWNLOAD_PATH.search(path)
        or "_export" in request.GET
        or path == "/metrics"  # a Prometheus on another host scrapes with a staff token
    )


def _refusal(request, status: int, message: str, *, challenge: bool = False):
    response = api_error(request.path_info, status, message, title="Sign-in", challenge=challenge)
    response["Cache-Control"] = "no-store"
    return response


def _basic(request, value: str):
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        decoded = ""  # malformed, as below
    username, sep, password = decoded.partition(":")
    if not sep or not username:
        return None, _refusal(request, 401, "Malformed Basic credentials.", challenge=True)
    user = authenticate(request, username=username, password=password)
    if getattr(request, "axes_locked_out", False):
        minutes = settings.AXES_COOLOFF_TIME.total_seconds() / 60
        response = _refusal(
            request,
            429,
            f"Too many failed sign-ins for this name from this address: locked for "
            f"{minutes:g} minutes.",
        )
        response["Retry-After"] = str(int(settings.AXES_COOLOFF_TIME.total_seconds()))
        return None, response
    if user is None or not user.is_active:
        return None, _refusal(request, 401, "Wrong user name or password.", challenge=True)
    return user, None


class ScriptAuthMiddleware:
    """Signs a script in from its ``Authorization`` header (before LoginRequiredMiddleware)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not is_script_url(request):
            return self.get_response(request)
        header = request.META.get("HTTP_AUTHORIZATION", "")
        scheme, _, value = header.partition(" ")
        scheme = scheme.lower()
        if scheme in ("basic", "bearer"):
            if settings.BEHIND_TLS_PROXY and not request.is_secure():
                return _refusal(
                    request, 403, "Credentials are only accepted over HTTPS (through the proxy)."
                )
            if scheme == "basic":
                user, refusal = _basic(request, value)
                if refusal is not None:
                    return refusal
            elif (user := tokens.user_for(value)) is None:
                return _refusal(request, 401, "Unknown, revoked or expired token.")
            # For this request only: no session is made, no cookie is set.
            request.user = user
            request._cached_user = user
            request.script_auth = scheme
        elif header:
            return _refusal(request, 401, "Use Basic or Bearer authorization.", challenge=True)
        elif not request.user.is_authenticated and API_PATH.search(request.path_info):
            return _refusal(request, 401, SIGN_IN, challenge=True)
        return self.get_response(request)
