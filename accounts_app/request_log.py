"""One log line per request (JSON when ``HERMES_LOG_JSON`` is on): only what any reader of the
logs may see, so the path without its query string, no message text, no header.
"""

from __future__ import annotations

import json
import logging
import time

from .roles import role_of

log = logging.getLogger("hermes_explorer.requests")


class RequestLogMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        user = getattr(request, "user", None)
        signed_in = user is not None and user.is_authenticated
        match = getattr(request, "resolver_match", None)
        store = getattr(request, "store", None)
        fields = {
            "user": user.get_username() if signed_in else "",
            "role": ("superuser" if user.is_superuser else role_of(user) or "")
            if signed_in
            else "",
            "method": request.method,
            "path": request.path,
            "view": match.view_name if match is not None else "",
            "profile": store.name if store is not None else "",
            "status": response.status_code,
            "duration_ms": round((time.perf_counter() - started) * 1000, 1),
        }
        log.info(
            "%(method)s %(path)s %(status)s %(duration_ms)sms %(user)s %(view)s",
            fields,
            extra={"request_fields": fields},
        )
        return response


class JsonFormatter(logging.Formatter):
    """A log record as one JSON object on one line (a request's fields, a traceback)."""

    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            **getattr(record, "request_fields", {}),
        }
        if record.exc_info:
            line["traceback"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)
