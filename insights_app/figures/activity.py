"""Figure ``heatmap``: sessions started per local weekday and hour; Hermes's activity block.

Hermes's weekdays start on Monday.  Day 0 of the epoch, 1970-01-01, was a Thursday, so the
weekday of local day ``n`` is ``(n + 3) % 7``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from ..window import Scope
from .registry import Figure, Part, Row, as_int

WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def parts(scope: Scope) -> list[Part]:
    # The key is weekday * 24 + hour, local.
    return [
        Part(
            "((lt / 86400 + 3) %% 7) * 24 + (lt / 3600) %% 24",
            (("sessions", "COUNT(*)"),),
            "FROM per WHERE lt IS NOT NULL GROUP BY 2",
        )
    ]


def decode(scope: Scope, rows: list[Row]) -> list[list[int]]:
    """Seven rows (Monday first) of 24 counts (midnight first)."""
    grid = [[0] * 24 for _ in range(7)]
    for key, values in rows:
        grid[int(key) // 24][int(key) % 24] = as_int(values["sessions"])
    return grid


FIGURE = Figure("heatmap", parts, decode)


def longest_streak(days: list[dt.date]) -> int:
    """Most consecutive calendar days among ``days``."""
    best = run = 0
    previous = None
    for day in sorted(set(days)):
        run = run + 1 if previous is not None and (day - previous).days == 1 else 1
        best = max(best, run)
        previous = day
    return best


def activity(grid: list[list[int]], active: list[dt.date]) -> dict[str, Any]:
    """Hermes's activity block: weekdays, hours, busiest of each, active days, streak."""
    by_day = [{"day": WEEKDAYS[i], "count": sum(grid[i])} for i in range(7)]
    by_hour = [{"hour": h, "count": sum(grid[d][h] for d in range(7))} for h in range(24)]
    return {
        "by_day": by_day,
        # max() keeps the first of equals: Monday, then midnight, as Hermes does.
        "busiest_day": max(by_day, key=lambda x: x["count"]),
        "by_hour": by_hour,
        "busiest_hour": max(by_hour, key=lambda x: x["count"]),
        "active_days": len(set(active)),
        "max_streak": longest_streak(active),
    }
