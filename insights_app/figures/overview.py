"""Hermes's overview block: the window's totals, from the other figures."""

from __future__ import annotations

from typing import Any

from .registry import TOKEN_KEYS, as_int


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
