"""An indexed search page in short statements over message-id ranges (rollback-journal files).

In rollback-journal mode Hermes cannot commit while our statement runs, and one indexed search
can run for seconds.  There the page is put together from statements over id ranges
(``lo <= id < hi``), each sized by a :class:`hermes_explorer.store.ChunkClock`: newest first
walks the ranges down until it has a page.  The walk has the page's budget: past it,
:class:`QueryTimeout` is raised as the single statement would.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from hermes_explorer import store
from hermes_explorer.hermes_db.deadline import QueryTimeout

# The first range width in message ids (the clock sizes the next), and the narrowest.
NEWEST_FIRST_WIDTH = 65_536
MIN_WIDTH = 1_024

# run(lo, hi, limit, seconds) -> rows of ids lo <= id < hi, at most limit, within seconds.
RangeQuery = Callable[[int, int, int, float], list]


def _remaining(started: float, budget: float) -> float:
    left = budget - (time.monotonic() - started)
    if left <= 0:
        raise QueryTimeout(budget)
    return left


def newest_first(run: RangeQuery, *, low: int, upper: int, need: int, budget: float) -> list:
    """Up to ``need`` rows with ``low <= id < upper``, highest id first."""
    clock = store.ChunkClock(NEWEST_FIRST_WIDTH, minimum=MIN_WIDTH)
    started = time.monotonic()
    rows: list = []
    while upper > low and len(rows) < need:
        left = _remaining(started, budget)
        want = need - len(rows)

        def one(width: int, upper: int = upper, left: float = left, want: int = want) -> list:
            return run(max(low, upper - width), upper, want, left)

        width, found = clock.run(one)
        rows += found
        upper = max(low, upper - width)
    return rows[:need]
