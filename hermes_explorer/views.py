"""Project-level views: the health check (of the state.db, the app database and the cache)."""

from __future__ import annotations

import logging
import os
import sqlite3
import time

from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, connections
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from . import store, stores

logger = logging.getLogger(__name__)


def _check(one: stores.Store) -> dict:
    """Whether ``one`` reads right now: shape, journal mode and size, or the error."""
    try:
        with stores.using(one):
            shape = store.shape()
            store.rows("SELECT id FROM sessions ORDER BY started_at DESC LIMIT 1")
            found = {
                "readable": True,
                "shape": shape.label,
                # "wal", or a rollback journal ("delete"), where reads are cut short for Hermes.
                "journal_mode": store.journal_mode(),
            }
        try:
            found["size"] = os.path.getsize(one.path)
        except OSError:
            found["size"] = None
        return found
    except (DatabaseError, sqlite3.Error) as exc:
        stores.REGISTRY.failed(one, exc)
        return {"readable": False, "error": str(exc)}
    finally:
        store.close(one.alias)


def _listed(request, served, checked) -> list[dict]:
    """Every store's health; named only to a user who may see it (a monitor signed out gets
    the list without names, and a user restricted to some profiles learns of no other)."""
    from profiles_app.access import for_request

    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return [checked[one.name] for one in served]
    visible = {one.name for one in for_request(request)}
    return [{"profile": n, **found} for n, found in checked.items() if n in visible]


@never_cache
@require_GET
def healthz(request):
    """Liveness, and whether each store can be read right now (503 when none can).

    ``state_db`` is the default store (what a single-store explorer always reported);
    ``stores`` names every store served, by profile.
    """
    started = time.monotonic()
    body: dict = {"status": "ok", "demo": settings.HERMES_DEMO}
    served = stores.all_stores()
    checked = {one.name: _check(one) for one in served}
    default = stores.default_store(served)
    if default is not None:
        body["state_db"] = checked[default.name]
    body["stores"] = _listed(request, served, checked)
    readable = any(found["readable"] for found in checked.values())
    if not readable:
        body["status"] = "error"
    status = 200 if readable else 503
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
