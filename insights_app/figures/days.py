"""Figure ``days``: the window's sessions per local start day; and usage per activity day.

A session's usage is, per counter, the larger of its own counter and its usage rows' sum (see
:mod:`.models`), so the days add up to the models table.  The activity-day view reads
``session_daily_usage`` in its own statement, on request, where the file has the table.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from hermes_explorer import store
from hermes_explorer.dialect import greatest

from ..window import Scope
from .per_session import USAGE
from .registry import TOKEN_KEYS, Figure, Part, Row, as_float, as_int

EPOCH_DAY0 = dt.date(1970, 1, 1)


@dataclass
class DayRow:
    day: dt.date  # local day
    sessions: int = 0
    messages: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost: float = 0.0
    tool_calls: int = 0  # the sessions' tool-call counters (the home page's figure)

    @property
    def total_tokens(self) -> int:
        return sum(getattr(self, k) for k in TOKEN_KEYS)

    def as_dict(self) -> dict[str, Any]:
        return {
            "day": self.day.isoformat(),
            "sessions": self.sessions,
            "messages": self.messages,
            **{k: getattr(self, k) for k in TOKEN_KEYS},
            "total_tokens": self.total_tokens,
            "cost": self.cost,
        }


def parts(scope: Scope) -> list[Part]:
    # The key is the local day number since 1970-01-01.
    columns = (
        ("sessions", "COUNT(*)"),
        ("messages", "SUM(messages)"),
        *(
            (name, f"SUM({greatest(f's_{key}', f'u_{key}')})")
            for _column, _short, key, _zero, name in USAGE
            if name in (*TOKEN_KEYS, "cost")
        ),
        ("tool_calls", "SUM(tool_calls)"),
    )
    return [Part("lt / 86400", columns, "FROM per WHERE lt IS NOT NULL GROUP BY 2")]


def decode(scope: Scope, rows: list[Row]) -> list[DayRow]:
    """The start days that have sessions, in order."""
    days = [
        DayRow(
            EPOCH_DAY0 + dt.timedelta(days=int(key)),
            as_int(v["sessions"]),
            as_int(v["messages"]),
            *(as_int(v[k]) for k in TOKEN_KEYS),
            as_float(v["cost"]),
            as_int(v["tool_calls"]),
        )
        for key, v in rows
    ]
    return sorted(days, key=lambda d: d.day)


FIGURE = Figure("days", parts, decode)


def days_by_activity(scope: Scope) -> list[DayRow]:
    """Per local day the usage happened (``session_daily_usage``), for the window's sessions."""
    tokens = "".join(f"SUM(COALESCE({scope.dcol(k)}, 0)), " for k in TOKEN_KEYS)
    cost = scope.dcol("estimated_cost_usd", "NULL")
    sql = f"""SELECT d.day, COUNT(DISTINCT d.session_id), {tokens}SUM(COALESCE({cost}, 0.0))
        FROM session_daily_usage d WHERE d.session_id IN ({scope.session_ids})
        GROUP BY d.day ORDER BY d.day"""
    out = []
    for day, n, *counts, cost in store.rows(sql, scope.params):
        try:
            parsed = dt.date.fromisoformat(str(day))
        except ValueError:
            continue  # not a 'YYYY-MM-DD' day: nothing to place on a calendar
        out.append(DayRow(parsed, as_int(n), 0, *map(as_int, counts), as_float(cost)))
    return out
