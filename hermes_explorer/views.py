"""Project-level views: the health check (of the state.db, the app database and the cache)."""

from __future__ import annotations

import ipaddress
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


def check_store(one: stores.Store) -> dict:
    """Whether ``one`` reads right now, with its shape, journal mode and size, or the error."""
    try:
        with stores.using(one):
            shape = store.shape()
            store.rows("SELECT id FROM sessions ORDER BY started_at DESC LIMIT 1")
            found = {
                "readable": True,
                "kind": "postgresql" if one.postgres else "sqlite",
                "shape": shape.label,
                # "wal", a rollback journal ("delete": reads cut short for Hermes) or "mvcc".
                "journal_mode": store.journal_mode(),
            }
            if store.writes():
                found["writes"] = store.writes()
            if (standby := store.standby()) is not None:
                found["standby"] = standby._asdict()
        try:
            found["size"] = None if one.postgres else os.path.getsize(one.path)
        except OSError:
            found["size"] = None
        return found
    except (DatabaseError, sqlite3.Error) as exc:
        stores.REGISTRY.failed(one, exc)
        return {"readable": False, "error": str(exc)}
    finally:
        store.close(one.alias)


def served_to(request) -> tuple[stores.Store, ...]:
    """The stores whose details the request may read (every one for the loopback monitor)."""
    if request.user.is_authenticated:
        return tuple(getattr(request, "visible_stores", ()))
    return stores.all_stores()


# Headers a proxy adds (Caddy sets X-Forwarded-For, -Proto and -Host; others set Forwarded,
# X-Real-IP and the like): a request carrying one came through a proxy, whatever its peer.
FORWARDING_HEADERS = frozenset(
    {"HTTP_FORWARDED", "HTTP_X_REAL_IP", "HTTP_X_CLIENT_IP", "HTTP_CLIENT_IP", "HTTP_VIA"}
    | {"HTTP_TRUE_CLIENT_IP", "HTTP_CF_CONNECTING_IP", "HTTP_X_CLUSTER_CLIENT_IP"}
)


def forwarded(request) -> bool:
    """Whether the request carries any forwarding header (``X-Forwarded-*`` included)."""
    return any(
        key in FORWARDING_HEADERS or key.startswith("HTTP_X_FORWARDED") for key in request.META
    )


def staff_or_local(request) -> bool:
    """Whether the health check may say more than "up": to staff, and to a monitor on the
    loopback address reaching the server directly (no forwarding header of any kind)."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated and user.is_staff:
        return True
    if forwarded(request):
        return False
    try:
        return ipaddress.ip_address(request.META.get("REMOTE_ADDR", "")).is_loopback
    except ValueError:
        return False


@never_cache
@require_GET
def healthz(request):
    """Liveness, and whether every store can be read now (503 when none can); staff and a
    local monitor also get each store's details and the app database's and cache's state."""
    started = time.monotonic()
    served = stores.all_stores()
    checked = {one.name: check_store(one) for one in served}
    readable = any(found["readable"] for found in checked.values())
    app_db = _app_db_reachable()
    cache_ok = _cache_reachable()
    status = "ok" if readable and app_db else "error"
    if status == "ok" and not cache_ok:
        # Without its cache an instance still serves every page (slower): kept in rotation.
        status = "degraded"
    body: dict = {
        "status": status,
        "stores_readable": bool(checked) and all(f["readable"] for f in checked.values()),
    }
    if staff_or_local(request):
        body["demo"] = settings.HERMES_DEMO
        shown = served_to(request)
        default = stores.default_store(shown)
        if default is not None:
            body["state_db"] = checked[default.name]
        names = {one.name for one in shown}
        body["stores"] = [{"profile": n, **f} for n, f in checked.items() if n in names]
        body.update(app_db={"reachable": app_db}, cache={"reachable": cache_ok})
    body["elapsed_ms"] = round((time.monotonic() - started) * 1000, 2)
    return JsonResponse(body, status=200 if readable and app_db else 503)


def _app_db_reachable() -> bool:
    try:
        with connections["default"].cursor() as cursor:
            cursor.execute("SELECT 1")
        return True
    except DatabaseError as exc:
        logger.warning("health check: the app database is unreachable: %s", exc)
        return False


def _cache_reachable() -> bool:
    """Whether a value written to the cache reads back (an unreachable Redis is a silent miss)."""
    probe = os.urandom(8).hex()
    try:
        cache.set("healthz-probe", probe, 10)
        if cache.get("healthz-probe") == probe:
            return True
    except Exception as exc:  # noqa: BLE001 - any cache backend's own error
        logger.warning("health check: the cache is unreachable: %s", exc)
        return False
    logger.warning("health check: the cache did not keep a value")
    return False
