"""Project-level views: the health check."""

from __future__ import annotations

import sqlite3
import time

from django.conf import settings
from django.db import DatabaseError
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from . import store


@never_cache
@require_GET
def healthz(request):
    """Liveness, and whether the state.db can be read right now (503 when it cannot)."""
    started = time.monotonic()
    body = {"status": "ok", "demo": settings.HERMES_DEMO}
    try:
        shape = store.shape()
        store.rows("SELECT id FROM sessions ORDER BY started_at DESC LIMIT 1")
        body["state_db"] = {
            "readable": True,
            "shape": shape.label,
            # "wal", or a rollback journal ("delete"), where reads are cut short for Hermes.
            "journal_mode": store.journal_mode(),
        }
        status = 200
    except (DatabaseError, sqlite3.Error) as exc:
        body["status"] = "error"
        body["state_db"] = {"readable": False, "error": str(exc)}
        status = 503
    finally:
        store.close()
    body["elapsed_ms"] = round((time.monotonic() - started) * 1000, 2)
    return JsonResponse(body, status=status)
