"""``/state.json``, ``/-/versions.json`` and the row URLs, with Datasette's keys; counts are
null when they take too long, as Datasette's were."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import sys
from functools import lru_cache

import django

from accounts_app.roles import can_use_sql
from hermes_explorer import store
from hermes_explorer.hermes_db.catalog import Catalog, TableInfo

from . import policy, query, tokens
from .errors import ApiError
from .operators import Binder, key_equals, quote
from .search import index_for

DATASETTE_VERSION = "0.65.5"  # the release whose API this one follows
TABLE_COUNT_BUDGET = 0.2


def _count(sql: str, params: dict) -> int | None:
    """A count within ``TABLE_COUNT_BUDGET``, None past it (as Datasette's)."""
    statement = query.Statement(sql, params)
    try:
        return query.cached_count(statement, query.run_store, budget=TABLE_COUNT_BUDGET)
    except ApiError:
        return None


def _table_entry(catalog: Catalog, info: TableInfo) -> dict:
    return {
        "name": info.name,
        "columns": list(info.columns),
        "primary_keys": list(info.pks),
        "count": None if info.virtual else _count(f"select count(*) from {quote(info.name)}", {}),
        "hidden": info.name in catalog.hidden,
        "fts_table": index_for(catalog, info.name),
        "foreign_keys": {
            "incoming": catalog.incoming(info.name),
            "outgoing": [
                {k: getattr(fk, k) for k in ("other_table", "column", "other_column")}
                for fk in info.foreign_keys
            ],
        },
        "private": False,
    }


def database_data(user) -> dict:
    catalog = store.shape().catalog
    entries = [_table_entry(catalog, info) for info in catalog.tables.values()]
    entries.sort(key=lambda t: (t["hidden"], t["name"]))
    try:
        size = os.path.getsize(store.path())
    except OSError:
        size = None
    return {
        "database": "state",
        "private": False,
        "path": "/state",
        "size": size,
        "tables": entries,
        "hidden_count": sum(1 for t in entries if t["hidden"]),
        "views": [{"name": v, "private": False} for v in catalog.views],
        "queries": [],
        "allow_execute_sql": can_use_sql(user),
    }


@lru_cache(maxsize=1)
def _sqlite_details() -> dict:
    with contextlib.closing(sqlite3.connect(":memory:")) as conn:
        version = conn.execute("select sqlite_version()").fetchone()[0]
        fts = []
        for name in ("FTS5", "FTS4", "FTS3"):
            with contextlib.suppress(sqlite3.OperationalError):
                conn.execute(f"create virtual table v{name} using {name} (data)")
                fts.append(name)
        extensions = {}
        with contextlib.suppress(sqlite3.Error):
            conn.execute("select json('{}')")
            extensions["json1"] = None
        options = [r[0] for r in conn.execute("pragma compile_options").fetchall()]
    return {
        "version": version,
        "fts_versions": fts,
        "extensions": extensions,
        "compile_options": options,
    }


def versions_data() -> dict:
    return {
        "python": {"version": ".".join(map(str, sys.version_info[:3])), "full": sys.version},
        "datasette": {
            "version": DATASETTE_VERSION,
            "note": "Hermes Explorer: Datasette's API re-implemented on Django",
        },
        "asgi": None,
        "uvicorn": None,
        "sqlite": _sqlite_details(),
        "django": django.get_version(),
    }


def row_data(table: TableInfo, key: str, user) -> dict:
    """Datasette's row JSON for ``/state/<table>/<key>``; a 404 when no row has that key."""
    values = tokens.components(key)
    names = ["rowid"] if table.use_rowid else list(table.pks)
    if len(values) != len(names):
        raise ApiError("Record not found", status=404)
    binder = Binder()
    where = key_equals(names, values, binder)
    select = ("rowid, " if table.use_rowid else "") + "*"
    statement = query.Statement(
        f"select {select} from {quote(table.name)} where {where}", binder.params
    )
    columns, rows = query.run_store(statement, budget=2.0)
    if not rows:
        raise ApiError("Record not found", status=404)
    pol = policy.for_table(user, table.name)
    return {
        "database": "state",
        "table": table.name,
        "rows": pol.rows(columns, rows),
        "columns": columns,
        "primary_keys": names,
        "primary_key_values": values,
        "units": {},
    }


def foreign_key_tables(catalog: Catalog, table: TableInfo, values: list[str]) -> list[dict]:
    """``_extras=foreign_key_tables``: how many rows of other tables point at this one."""
    if len(values) != 1:
        return []
    out = []
    for fk in catalog.incoming(table.name):
        count = _count(
            f"select count(*) from {quote(fk['other_table'])} "
            f"where {quote(fk['other_column'])} = :id",
            {"id": values[0]},
        )
        key = fk["other_column"] + ("__exact" if fk["other_column"].startswith("_") else "")
        link = f"/state/{fk['other_table']}?{key}={values[0]}"
        out.append({**fk, "count": count or 0, "link": link})
    return out
