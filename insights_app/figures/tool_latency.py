"""Tool latency (ours): per tool, the seconds from each call (its assistant message's
``timestamp``) to its ``tool`` row; the calls of one message run in parallel, so their times
overlap.  Over several profiles the figures come from all their calls (a median of medians is
no median)."""

from __future__ import annotations

import heapq
import math
import statistics
from array import array
from collections.abc import Iterable

from redaction import redact

SLOWEST = 10

# (seconds, session id, message id, profile or None)
Call = tuple[float, str, int, str | None]


def can_time(shape) -> bool:
    """Whether the file records what pairs a result with its call, and when each was."""
    return all(shape.has_column("messages", c) for c in ("timestamp", "tool_call_id"))


def gather(calls: Iterable[tuple]):
    """``(tool, seconds, session id, message id[, profile])`` of calls → per tool (redacted),
    its times and its slowest calls."""
    times: dict[str, array] = {}
    slowest: dict[str, list[Call]] = {}
    names: dict[str, str] = {}
    for raw, seconds, session_id, message_id, *profile in calls:
        name = names.get(raw)
        if name is None:
            name = names[raw] = redact(str(raw))
        times.setdefault(name, array("d")).append(seconds)
        call = (seconds, session_id, message_id, profile[0] if profile else None)
        heap = slowest.setdefault(name, [])  # its SLOWEST slowest calls, a min-heap on the time
        if len(heap) < SLOWEST:
            heapq.heappush(heap, call)
        elif seconds > heap[0][0]:
            heapq.heapreplace(heap, call)
    return times, slowest


def latency_rows(times: dict[str, Iterable[float]], slowest: dict[str, list[Call]]) -> list[dict]:
    """A row per tool, most calls first: ``tool``, ``calls``, ``median_s``, ``p95_s``,
    ``max_s``, ``slowest`` (its slowest calls, slowest first)."""
    rows = []
    for tool, values in times.items():
        ordered = sorted(values)
        rows.append(
            {
                "tool": tool,
                "calls": len(ordered),
                "median_s": round(statistics.median(ordered), 3),
                # Nearest rank: the ⌈0.95·n⌉-th smallest.
                "p95_s": round(ordered[max(1, math.ceil(0.95 * len(ordered))) - 1], 3),
                "max_s": round(ordered[-1], 3),
                "slowest": [
                    {
                        "seconds": round(seconds, 3),
                        "session_id": session_id,
                        "message_id": message_id,
                        "profile": profile,
                    }
                    for seconds, session_id, message_id, profile in sorted(
                        slowest.get(tool, []), reverse=True
                    )
                ],
            }
        )
    return sorted(rows, key=lambda r: (-r["calls"], r["tool"]))


def add_calls(tools: list[dict], latency: list[dict] | None) -> None:
    """Each row of Hermes's tool list (``count``: the larger of a tool's result rows and the
    calls its assistant rows name) with ``calls``: its calls as ``docs/tool-calls.md``
    defines them, timed (the latency's count); None when the file cannot pair or time them."""
    calls = {row["tool"]: row["calls"] for row in latency or ()}
    for tool in tools:
        tool["calls"] = None if latency is None else calls.get(tool["tool"], 0)
