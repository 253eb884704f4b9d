"""Figure ``platforms``: the window's sessions per source, with their counters summed; and
the overview made of them."""

from __future__ import annotations

from typing import Any

from ..window import Scope, instant
from .per_session import USAGE
from .registry import TOKEN_KEYS, Figure, Part, Row, as_float, as_int

COLUMNS = (
    ("sessions", "COUNT(*)"),
    ("messages", "SUM(messages)"),
    ("tool_calls", "SUM(tool_calls)"),
    *((name, f"SUM(s_{key})") for _column, _short, key, _zero, name in USAGE),
    ("duration_sum", "SUM(dur)"),
    ("durations", "COUNT(dur)"),
    ("first_started", "MIN({})"),
    ("last_started", "MAX({})"),
    ("included", "SUM(included)"),
    ("unknown", "SUM(unknown)"),
)
KEYS = tuple(name for name, _ in COLUMNS)


def columns() -> tuple[tuple[str, str], ...]:
    """:data:`COLUMNS`, a first and last start counted when it is an instant."""
    start = instant("started_at")
    return tuple((name, sql.format(start)) for name, sql in COLUMNS)


_FLOATS = frozenset({"cost", "actual_cost", "duration_sum"})
_EPOCHS = frozenset({"first_started", "last_started"})


def parts(scope: Scope) -> list[Part]:
    return [Part("source", columns(), "FROM per GROUP BY source")]


def decode(scope: Scope, rows: list[Row]) -> dict[str, dict[str, Any]]:
    """Per source, its sums (numbers as int or float, first and last start as stored)."""
    return {
        source: {
            k: v if k in _EPOCHS else as_float(v) if k in _FLOATS else as_int(v)
            for k, v in values.items()
        }
        for source, values in rows
    }


FIGURE = Figure("platforms", parts, decode)
# The same sums over every source as one row (the previous period's overview), unsorted.
ALL_SOURCES = Figure(
    "platforms", lambda scope: [Part("'all sources'", columns(), "FROM per")], decode
)


def platform_rows(platforms: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Hermes's platforms table, busiest first."""
    return sorted(
        (
            {
                "platform": source,
                "sessions": row["sessions"],
                "messages": row["messages"],
                **{k: row[k] for k in TOKEN_KEYS},
                "total_tokens": sum(row[k] for k in TOKEN_KEYS),
                "tool_calls": row["tool_calls"],
                # Ours.
                "estimated_cost": row["cost"],
            }
            for source, row in platforms.items()
        ),
        key=lambda p: (-p["sessions"], p["platform"]),
    )


def totals(platforms: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The sums over every source (earliest first start, latest last start)."""
    rows = platforms.values()
    out: dict[str, Any] = {k: sum(r[k] for r in rows) for k in KEYS if k not in _EPOCHS}
    firsts = [r["first_started"] for r in rows if r["first_started"] is not None]
    lasts = [r["last_started"] for r in rows if r["last_started"] is not None]
    return {
        **out,
        "first_started": min(firsts, default=None),
        "last_started": max(lasts, default=None),
    }


def overview(
    totals: dict[str, Any], roles: dict[str, int], models: list[dict[str, Any]]
) -> dict[str, Any]:
    """Hermes's overview block: token and cost totals over models (auxiliary usage included)
    when there are any, else the sessions' counters."""
    rows = models or [totals]
    tokens = {k: sum(as_int(r.get(k)) for r in rows) for k in TOKEN_KEYS}
    total_tokens = sum(tokens.values())
    cost = sum(m["cost"] for m in models) if models else totals["cost"]
    n = totals["sessions"]
    durations = totals["durations"]
    return {
        "total_sessions": n,
        "total_messages": totals["messages"],
        "total_tool_calls": totals["tool_calls"],
        **{f"total_{k}": tokens[k] for k in TOKEN_KEYS},
        "total_tokens": total_tokens,
        "estimated_cost": cost,
        "actual_cost": totals["actual_cost"],
        "total_hours": totals["duration_sum"] / 3600 if durations else 0,
        "avg_session_duration": totals["duration_sum"] / durations if durations else 0,
        "avg_messages_per_session": totals["messages"] / n if n else 0,
        "avg_tokens_per_session": total_tokens / n if n else 0,
        "user_messages": roles["user"],
        "assistant_messages": roles["assistant"],
        "tool_messages": roles["tool"],
        "date_range_start": totals["first_started"],
        "date_range_end": totals["last_started"],
        "included_cost_sessions": totals["included"],
        "unknown_cost_sessions": totals["unknown"],
        # Ours.
        "total_reasoning_tokens": sum(m["reasoning_tokens"] for m in models),
        # The sessions' own counters (usage rows may leave reasoning out).
        "stored_reasoning_tokens": totals["reasoning_tokens"],
        "total_api_calls": sum(m["api_calls"] for m in models),
        "stored_messages": roles["stored"],
        "sessions_with_duration": durations,
    }
