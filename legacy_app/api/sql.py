"""``/state.json?sql=…`` and ``/state.csv?sql=…`` (staff), and the one door to the console.

Custom SQL (a statement, or ``_where`` fragments) never runs on the app's connection:
:func:`run_console` hands it to the SQL console's runner, the only call into the console here.
Values are redacted, and each statement is audited.
"""

from __future__ import annotations

import re

from django.conf import settings

from console_app import isolation
from console_app.readonly import (
    ConsoleBusy,
    ConsoleError,
    ConsoleTimeout,
    ConsoleUnavailable,
    sql_parameters,
)
from console_app.services import record_run, statement_limits
from hermes_explorer import store

from . import policy
from .errors import ApiError
from .query import Statement

SQL_MAX_ROWS = 1000
_ALLOWED = re.compile(
    r"^\s*(?:/\*.*?\*/\s*)*(?:select|with|explain\s+(?:query\s+plan\s+)?(?:select|with))\b",
    re.DOTALL,
)


def run_console(statement, *, budget: float):
    """Columns and rows of ``statement`` through the console's runner (blobs as hex)."""
    limits = statement_limits(
        budget, max_rows=SQL_MAX_ROWS + 1, max_bytes=settings.HERMES_SQL_EXPORT_MAX_BYTES
    )
    try:
        result = isolation.run(statement.sql, statement.params, path=store.name(), limits=limits)
    except ConsoleTimeout as exc:
        raise ApiError(str(exc), title="SQL Interrupted") from exc
    except (ConsoleUnavailable, ConsoleBusy) as exc:
        raise ApiError(str(exc), status=503, title="SQL console unavailable") from exc
    except ConsoleError as exc:
        raise ApiError(str(exc), title="Invalid SQL") from exc
    return result.columns, [tuple(r) for r in result.rows]


def sql_data(request, user) -> tuple[dict, int]:
    """Datasette's JSON of a custom query (and its status: 400 when SQLite refused it)."""
    args = request.GET
    sql = args.getlist("sql")[0]
    text = "\n".join(line for line in sql.split("\n") if not line.strip().startswith("--"))
    if not _ALLOWED.match(text.strip().lower()):
        raise ApiError("Statement must be a SELECT", title="Invalid SQL")
    params = {key: args.getlist(key)[0] for key in args if key not in ("sql", "_shape")}
    for name in sql_parameters(sql):
        if not name.startswith("_"):
            params.setdefault(name, "")
    columns, fetched, error = [], [], None
    try:
        columns, fetched = run_console(
            Statement(sql, params), budget=float(settings.HERMES_SQL_TIMEOUT)
        )
    except ApiError as exc:
        if exc.status != 400 or exc.title == "SQL Interrupted":
            raise
        error = exc.message
    record_run(request, sql, params)
    data = {
        "ok": error is None,
        "database": "state",
        "query_name": None,
        "rows": policy.sql_rows(fetched[:SQL_MAX_ROWS]),
        "truncated": len(fetched) > SQL_MAX_ROWS,
        "columns": columns,
        "query": {"sql": sql, "params": params},
        "error": error,
        "private": False,
        "allow_execute_sql": True,
    }
    return data, 400 if error else 200
