"""``per``: the window's sessions, one row each, that every figure of the pass groups.

``lt`` is its local start in ``TIME_ZONE`` as epoch-like seconds (``lt / 86400`` is the local
day, ``lt / 3600 % 24`` the hour); ``s_*`` are the session's own counters (:data:`USAGE`) and
``u_*`` their sums over its ``session_model_usage`` rows (0 without that table).  ``included``
and ``unknown`` are 1 when its cost is included in a subscription, or unknown: Hermes derives
both from its price table at report time; we read what Hermes stored.
"""

from __future__ import annotations

from hermes_explorer import dialect

from ..localtime import OffsetSegments
from ..window import Scope

# ``session_model_usage`` counters: (column, name in ``uses``, sum in ``per``, zero, name in
# the report's tables).
USAGE = (
    ("input_tokens", "i", "in", "0", "input_tokens"),
    ("output_tokens", "o", "out", "0", "output_tokens"),
    ("cache_read_tokens", "cr", "cr", "0", "cache_read_tokens"),
    ("cache_write_tokens", "cw", "cw", "0", "cache_write_tokens"),
    ("reasoning_tokens", "rs", "rs", "0", "reasoning_tokens"),
    ("api_call_count", "api", "api", "0", "api_calls"),
    ("estimated_cost_usd", "cost", "cost", "0.0", "cost"),
    ("actual_cost_usd", "actual", "actual", "0.0", "actual_cost"),
)
COLUMNS = (
    "id",
    "source",
    "model",
    "started_at",
    "lt",
    "dur",
    "messages",
    "tool_calls",
    *(f"s_{key}" for _column, _short, key, _zero, _name in USAGE),
    "included",
    "unknown",
    *(f"u_{key}" for _column, _short, key, _zero, _name in USAGE),
)
_POSITIVE = (
    "s.started_at <> 0 AND s.ended_at IS NOT NULL AND s.ended_at <> 0 AND s.ended_at > s.started_at"
)


def per_session(scope: Scope, segments: OffsetSegments) -> tuple[str, str]:
    """``per``'s columns over ``sessions s`` (one row per window session: counters, usage-row
    sums, local start, positive duration) and its usage join (then grouped by session)."""
    c = scope.scol
    cost = c("estimated_cost_usd", "NULL")
    if scope.shape.has_column("sessions", "cost_status"):
        unknown = (
            f"s.cost_status = 'unknown' OR (s.cost_status IS NULL AND {cost} IS NULL AND {{used}})"
        )
        included = "s.cost_status = 'included'"
    else:
        unknown, included = f"{cost} IS NULL AND {{used}}", "0"
    used = (
        f"COALESCE(s.input_tokens, 0) + COALESCE(s.output_tokens, 0)"
        f" + COALESCE({c('cache_read_tokens')}, 0) + COALESCE({c('cache_write_tokens')}, 0) > 0"
    )
    unknown = unknown.format(used=used)
    if scope.has_usage:
        u = scope.ucol
        usage_cols = ",\n               ".join(
            f"COALESCE(SUM({u(column, 'NULL')}), {zero}) AS u_{key}"
            for column, _short, key, zero, _name in USAGE
        )
        join = "LEFT JOIN session_model_usage u ON u.session_id = s.id"
    else:
        usage_cols = ", ".join(f"{zero} AS u_{key}" for _column, _short, key, zero, _name in USAGE)
        join = ""
    own = ",\n               ".join(
        f"COALESCE({c(column, zero)}, {zero}) AS s_{key}"
        for column, _short, key, zero, _name in USAGE
    )
    local = segments.local_sql("s.started_at")
    columns = f"""s.id AS id, COALESCE(NULLIF(s.source, ''), 'unknown') AS source,
               s.model AS model, s.started_at AS started_at,
               CASE WHEN s.started_at <> 0 AND {local} >= 0
                    THEN {dialect.truncated(local)} END AS lt,
               CASE WHEN {_POSITIVE} THEN s.ended_at - s.started_at END AS dur,
               COALESCE(s.message_count, 0) AS messages,
               COALESCE({c("tool_call_count")}, 0) AS tool_calls,
               {own},
               CASE WHEN {included} THEN 1 ELSE 0 END AS included,
               CASE WHEN {unknown} THEN 1 ELSE 0 END AS unknown,
               {usage_cols}"""
    return columns, join


def per_session_cte(scope: Scope, segments: OffsetSegments) -> str:
    """``per`` as a common table expression over the window (parameters: ``scope.params``)."""
    columns, join = per_session(scope, segments)
    # By rowid, the table's own order (``s.id`` would walk the id index and look every row
    # up); for a narrow window ``+s.rowid`` lets SQLite use the ``started_at`` index instead.
    group = f"GROUP BY {'+' if scope.narrow else ''}{dialect.row_key('s')}" if join else ""
    return f"""per AS MATERIALIZED (
        SELECT {columns}
        FROM sessions s {join} WHERE {scope.where} {group})"""


def usage_cte(scope: Scope) -> str:
    """``uses``: the ``session_model_usage`` rows of the sessions of ``per``, with their
    session's ``lt``; only the models figure reads them, so ``NOT MATERIALIZED`` (10–12% less
    for its grouping).  Missing values are 0."""
    u = scope.ucol
    counters = ",\n               ".join(
        f"COALESCE({u(column, 'NULL')}, {zero}) AS {short}"
        for column, short, _key, zero, _name in USAGE
    )
    return f"""uses AS NOT MATERIALIZED (
        SELECT u.session_id AS sid, u.model AS model,
               {counters},
               p.lt AS lt
        FROM per p JOIN session_model_usage u ON u.session_id = p.id)"""
