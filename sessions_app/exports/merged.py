"""Session and message exports with a first ``profile`` column when several stores are served
(on a profile's own page too: every file has the same shape).  Each profile's rows come in turn
(name order, the default first); the columns are those of any store (empty where it lacks one).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator

from django.db import DatabaseError

from hermes_explorer import stores as registry
from hermes_explorer.stores import Store

from .. import exports
from ..merged_list import chosen_stores
from .http import stream_for
from .plans import MESSAGE_FIELDS, SESSION_FIELDS, TablePlan, output_columns


def export_parts(request) -> list[Store] | None:
    """The stores an export reads: None when one store is served (the export as it was)."""
    if not registry.multi():
        return None
    if getattr(request, "store_scoped", False):
        return [request.store]
    return chosen_stores(request) or []


def merged_export(
    request,
    parts: list[Store],
    plan_for: Callable[[], TablePlan | None],
    *,
    noun: str,
    filename_bits=(),
    preview: bool = False,
):
    """The download of ``plan_for()`` (called reading each store; None: skip the store)."""
    plans: list[tuple[Store, TablePlan]] = []
    for store in parts:
        try:
            with registry.using(store):
                plan = plan_for()
        except (DatabaseError, sqlite3.Error) as exc:
            # An unavailable store is left out of the file (the list page names it).
            registry.REGISTRY.failed(store, exc)
            continue
        if plan is not None:
            plans.append((store, plan))
    every = output_columns(SESSION_FIELDS if noun == "sessions" else MESSAGE_FIELDS)
    present = {c for _store, plan in plans for c in plan.columns}
    columns = [c for c in every if c in present]
    # Columns another app adds (the team's annotations) follow, in their plans' order.
    for _store, plan in plans:
        columns += [c for c in plan.columns if c not in every and c not in columns]

    def chunks() -> Iterator[list[tuple]]:
        for store, plan in plans:
            where = [plan.columns.index(c) if c in plan.columns else None for c in columns]
            pieces = plan.chunks()
            while True:
                with registry.using(store):
                    chunk = next(pieces, None)
                if chunk is None:
                    break
                name = store.name
                yield [(name, *(row[i] if i is not None else None for i in where)) for row in chunk]

    fmt = exports.requested_format(request) or "csv"
    bits = list(filename_bits) + ([parts[0].name] if len(parts) == 1 else [])
    filename = exports.export_filename(noun, bits, fmt, preview=preview)
    return stream_for(request, ["profile", *columns], chunks(), fmt, filename, preview=preview)
