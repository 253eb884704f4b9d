"""Project-level views: the health check (of the state.db, the app database and the cache)."""

from __future__ import annotations

import logging
import sqlite3
import time

from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, connections
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from . import store

logger = logging.getLogger(__name__)


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
    # A load balancer takes an instance that lost its app database out of rotation. Without its
    # cache it still serves every page (slower): "degraded", and kept in rotation. The errors
    # are logged, not shown: this page answers anonymous requests.
    body["app_db"] = {"reachable": _app_db_reachable()}
    body["cache"] = {"reachable": _cache_reachable()}
    if not body["app_db"]["reachable"]:
        body["status"] = "error"
        status = 503
    elif not body["cache"]["reachable"] and body["status"] == "ok":
        body["status"] = "degraded"
    body["elapsed_ms"] = round((time.monotonic() - started) * 1000, 2)
    return JsonResponse(body, status=status)


def _app_db_reachable() -> bool:
    try:
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT 1")
        return True
    except DatabaseError as exc:
        logger.warning("health check: the app database is unreachable: %s", exc)
        return False


def _cache_reachable() -> bool:
    reachable = getattr(cache, "reachable", None)
    if reachable is not None:
        return reachable()
    try:
        cache.get("healthz-probe")
        return True
    except Exception as exc:  # noqa: BLE001 - any cache backend's own error
        logger.warning("health check: the cache is unreachable: %s", exc)
        return False
