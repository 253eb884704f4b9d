"""Figure ``models``: Hermes's models table, per short model name (last path segment).

As Hermes: each model gets every ``session_model_usage`` row of the window's sessions plus,
per session, the *residual* (its counter minus all its usage rows, floored at 0) given to the
session's own model; residual reasoning is 0 where usage rows exist.  A session counts for a
model with a usage row for it or a non-zero residual.  Without usage rows the table comes from
the sessions' counters.  Grouped by local start day too, the rows give the daily cost by
model.  Hermes re-prices usage rows without ``cost_status`` or ``cost_source``; we have no
price table and use the stored estimate (or $0).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hermes_explorer import dialect, store
from redaction import redact
from sessions_app.formatting import short_model

from ..window import Scope
from .days import EPOCH_DAY0
from .per_session import USAGE
from .registry import TOKEN_KEYS, Figure, Part, Row, as_float, as_int

COLUMNS = (
    ("sessions", "COUNT(DISTINCT CASE WHEN counted THEN sid END)"),
    *((name, f"SUM({short})") for _column, short, _key, _zero, name in USAGE),
    ("tool_calls", "SUM(tc)"),
)
_FLOATS = frozenset({"cost", "actual_cost"})
# The columns of a row of the table after its ``model``, in order.
TABLE_KEYS = (
    "sessions",
    *TOKEN_KEYS,
    "reasoning_tokens",
    "total_tokens",
    "api_calls",
    "tool_calls",
    "cost",
    "actual_cost",
)


# Per counter but reasoning, a session's residual: what its counter has beyond its usage rows.
def _residual() -> dict[str, str]:
    return {
        key: dialect.greatest(zero, f"s_{key} - u_{key}")
        for _column, _short, key, zero, _name in USAGE
        if key != "rs"
    }


def parts(scope: Scope) -> list[Part]:
    # Per full model name: usage rows, residuals (which make a session count), tool calls.
    residual = _residual()
    res_cols = ", ".join(f"{expr} AS r_{key}" for key, expr in residual.items())
    has_res = " OR ".join(f"r_{key} > 0" for key in residual)
    # Residual reasoning is 0 with usage rows (Hermes), the session's counter without.
    residual_rs = "0" if scope.has_usage else "s_rs"
    residual_rows = f"""SELECT lt / 86400 AS d, id AS sid, model, r_in AS i, r_out AS o, r_cr AS cr, r_cw AS cw,
                              {residual_rs} AS rs, r_api AS api, r_cost AS cost,
                              r_actual AS actual,
                              tool_calls AS tc, ({has_res}) AS counted
                       FROM (SELECT lt, id, model, tool_calls, s_rs, {res_cols} FROM per) AS r
                       WHERE ({has_res}) OR tool_calls > 0 OR {residual_rs} > 0"""
    if scope.has_usage:
        rows = f"""SELECT lt / 86400 AS d, sid, model, i, o, cr, cw, rs, api, cost, actual,
                          0 AS tc, 1 = 1 AS counted
                   FROM uses UNION ALL {residual_rows}"""
    else:
        rows = residual_rows
    return [Part(dialect.json_pair("d", "model"), COLUMNS, f"FROM ({rows}) AS r GROUP BY d, model")]


@dataclass(frozen=True)
class ModelFigures:
    table: list[dict[str, Any]]  # Hermes's models table
    by_day: list[dict[str, Any]]  # the explorer's estimated cost per start day and model


def decode(scope: Scope, rows: list[Row]) -> ModelFigures:
    """Hermes's models table and the cost per day and model, from the per-day, per-route rows."""
    parsed = [(*json.loads(key), values) for key, values in rows]
    # One row per day and model: each full name is redacted, then shortened, once.
    fulls = dict.fromkeys(full for _, full, _ in parsed)
    names = {full: short_model(redact(full), missing="unknown") for full in fulls}
    return ModelFigures(
        table(scope, [(full, values) for _, full, values in parsed], names),
        day_costs((day, names[full], values["cost"]) for day, full, values in parsed),
    )


def table(
    scope: Scope, rows: list[tuple[str | None, dict[str, Any]]], names: dict[str | None, str]
) -> list[dict[str, Any]]:
    """Merge per-day rows by full model name into Hermes's per-short-name table (``names``)."""
    merged: dict[str, dict[str, Any]] = {}
    fulls: dict[str, dict[str | None, None]] = {}  # the full names counted, in order, once
    for full, values in rows:
        name = names[full]
        entry = merged.setdefault(name, {"model": name, **dict.fromkeys(TABLE_KEYS, 0)})
        if as_int(values["sessions"]):
            fulls.setdefault(name, {})[full] = None
        for key, value in values.items():
            entry[key] += as_float(value) if key in _FLOATS else as_int(value)
    for name, counted in fulls.items():
        if len(counted) > 1 and scope.has_usage:
            # Several full routes share a short name: a session using two of them counts once.
            merged[name]["sessions"] = _distinct_sessions(scope, list(counted))
    for entry in merged.values():
        entry["total_tokens"] = sum(entry[k] for k in TOKEN_KEYS)
    return sorted(merged.values(), key=lambda m: (-m["total_tokens"], -m["sessions"], m["model"]))


def day_costs(rows: Iterable[tuple[int | None, str, Any]]) -> list[dict[str, Any]]:
    """``{"day", "model", "cost"}`` per start day and short model name, non-zero costs only: a
    day's models add up to its cost in ``days``, a model's days to the models table's."""
    merged: dict[tuple, float] = {}
    for day_number, name, cost in rows:
        if day_number is None:
            continue
        day = EPOCH_DAY0 + dt.timedelta(days=int(day_number))
        merged[(day, name)] = merged.get((day, name), 0.0) + as_float(cost)
    return [
        {"day": day.isoformat(), "model": name, "cost": cost}
        for (day, name), cost in sorted(merged.items())
        if cost
    ]


FIGURE = Figure("models", parts, decode, usage_rows=True)


def totals_parts(scope: Scope) -> list[Part]:
    # Over all models a session's rows plus residual are the larger of its counter and their
    # sum, so the totals need no grouping by model.
    residual = _residual()
    summed = {
        name: f"SUM(u_{key} + {residual[key]})"
        for _column, _short, key, _zero, name in USAGE
        if name in (*TOKEN_KEYS, "api_calls", "cost")
    }
    if scope.has_usage:
        reasoning = "SUM(u_rs)"  # residual reasoning is 0 where the file has usage rows
    else:
        has_res = " OR ".join(f"{expr} > 0" for expr in residual.values())
        reasoning = f"SUM(CASE WHEN {has_res} OR tool_calls > 0 OR s_rs > 0 THEN s_rs ELSE 0 END)"
    return [Part("'all'", (*summed.items(), ("reasoning_tokens", reasoning)), "FROM per")]


def totals_decode(scope: Scope, rows: list[Row]) -> dict[str, Any]:
    """The models table's token, API-call and cost sums (what the overview adds up)."""
    values = rows[0][1] if rows else {}
    return {
        name: as_float(values.get(name)) if name in _FLOATS else as_int(values.get(name))
        for name in (*TOKEN_KEYS, "api_calls", "cost", "reasoning_tokens")
    }


# The sums of the models table without its rows (the previous period's overview).
TOTALS = Figure("model_totals", totals_parts, totals_decode)


def _distinct_sessions(scope: Scope, fulls: list[str | None]) -> int:
    """Sessions with a usage row, or a residual, on any of these full model names (a session
    that used two routes of one short name counts once)."""
    u = scope.ucol
    named = [f for f in fulls if f is not None]
    marks = store.marks(named) or "NULL"
    null_model = " OR s.model IS NULL" if None in fulls else ""

    # Per counter but reasoning (as :func:`_residual`): its own against its usage rows' sum.
    residuals = []
    for column, _short, key, zero, _name in USAGE:
        if key != "rs":
            default = "NULL" if zero == "0.0" else "0"
            rows = (
                f"(SELECT COALESCE(SUM({u(column, default)}), 0) FROM session_model_usage u"
                " WHERE u.session_id = s.id)"
            )
            residuals.append(f"COALESCE({scope.scol(column, default)}, 0) > {rows}")
    has_residual = " OR ".join(residuals)
    sql = f"""SELECT COUNT(DISTINCT sid) FROM (
        SELECT u.session_id AS sid FROM session_model_usage u
        WHERE u.model IN ({marks}) AND u.session_id IN ({scope.session_ids})
        UNION ALL
        SELECT s.id FROM sessions s
        WHERE {scope.where} AND (s.model IN ({marks}){null_model}) AND ({has_residual}))
        AS found"""
    return as_int(store.rows(sql, [*named, *scope.params, *scope.params, *named])[0][0])
