"""The views of the API.  Every failure is an answer a script can read: Datasette's error
object with a 4xx for ``.json``, one plain-text line for ``.csv``; never an HTML page.
"""

from __future__ import annotations

import contextlib
import logging
import time

from django.conf import settings
from django.http import JsonResponse
from django.views.decorators.http import require_safe

from accounts_app.roles import can_use_sql
from hermes_explorer import host_slots, store

from . import downloads, meta, policy, shapes, sql, tables
from .errors import ApiError
from .operators import is_search_key

logger = logging.getLogger(__name__)


def served_table(name: str, user):
    """The table a URL names, if the API serves it (full-text index tables and views: no), as
    ``user`` reads it (:func:`policy.keyed_for`)."""
    catalog = store.shape().catalog
    info = catalog.table(name)
    if info is None:
        if name in catalog.views:
            raise ApiError(
                f"{name} is a view: the old API serves tables only (use /state.json?sql=).",
            )
        raise ApiError("Table not found", status=404)
    if name in catalog.hidden or info.virtual:
        raise ApiError(
            f"{name} belongs to a full-text index and is not served: search with "
            "/state/messages.json?_search=… instead.",
        )
    return policy.keyed_for(info, user)


def _answer(fmt: str | None, build):
    """Run ``build`` and turn any refusal or store failure into the format's error; no answer
    is kept by a cache."""
    try:
        response = build()
    except ApiError as error:
        response = shapes.error_response(error, fmt)
    except Exception:  # noqa: BLE001 - a script gets a JSON answer, and the log the traceback
        logger.exception("old API request failed")
        response = shapes.error_response(ApiError("Internal error", status=500), fmt)
    response.setdefault("Cache-Control", "private, no-store")
    return response


def table(request, table: str, fmt: str):
    def build():
        info = served_table(table, request.user)
        refused = policy.refusals(table, request.GET, request.user)
        if refused:
            raise ApiError(" ".join(refused), title="Refused filter")
        policy.audit_secret_reads(request, table)
        if fmt == "csv":
            return downloads.csv_response(request, info, user=request.user)
        started = time.perf_counter()
        # Full-text search is the costly part of this API: a bounded number at once (a slot is
        # taken when host_slots.take is called, so only a search calls it).
        searching = any(map(is_search_key, request.GET))
        limit = settings.HERMES_SEARCH_CONCURRENCY
        try:
            with host_slots.take("search", limit) if searching else contextlib.nullcontext():
                data, _columns, _rows = tables.table_page(request, info, user=request.user)
        except host_slots.Busy:
            raise ApiError(
                "Too many searches are running on this server: retry in a moment.",
                status=429,
                title="Busy",
            ) from None
        return shapes.json_response(data, request.GET, started=started)

    return _answer(fmt, build)


def database(request, fmt: str):
    def build():
        if request.GET.getlist("sql", [""])[0]:
            if not can_use_sql(request.user):
                raise ApiError("Custom SQL is for staff only.", status=403, title="Forbidden")
            if getattr(request, "script_auth", None) is None:
                # A GET carries no CSRF token: only scripts (Authorization header) run SQL here.
                raise ApiError(
                    "Custom SQL through the API needs an Authorization header (a token or "
                    "Basic credentials); in a browser, use the SQL console (/sql/).",
                    status=403,
                    title="Forbidden",
                )
            started = time.perf_counter()
            data, status = sql.sql_data(request, request.user)
            if fmt == "csv":
                if status != 200:
                    raise ApiError(data["error"], title="Invalid SQL")
                return downloads.sql_csv_response(request, data)
            return shapes.json_response(data, request.GET, status=status, started=started)
        if fmt == "csv":
            raise ApiError("The database has no CSV: add ?sql=… or open a table.")
        return shapes.json_response(meta.database_data(request.user), request.GET)

    return _answer(fmt, build)


def row(request, table: str, pk: str):
    def build():
        if store.shape().catalog.table(table) is None and table not in store.shape().catalog.views:
            # Datasette ran the row query and answered SQLite's error.
            raise ApiError(f"no such table: {table}", title="Invalid SQL")
        info = served_table(table, request.user)
        started = time.perf_counter()
        data = meta.row_data(info, pk, request.user)
        if "foreign_key_tables" in request.GET.get("_extras", "").split(","):
            data["foreign_key_tables"] = meta.foreign_key_tables(
                store.shape().catalog, info, data["primary_key_values"]
            )
        return shapes.json_response(data, request.GET, started=started)

    return _answer("json", build)


@require_safe
def versions(request):
    return JsonResponse(meta.versions_data())
