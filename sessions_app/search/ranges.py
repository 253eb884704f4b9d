"""An indexed search page in short statements over message-id ranges (rollback-journal files,
where Hermes cannot commit while our statement runs, and one indexed search can run for
seconds).  Past the page's budget, :class:`QueryTimeout` is raised as the single statement would.
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


def newest_first(run: RangeQuery, *, low: int, upper: int, need: int, budget: float) -> list:
    """Up to ``need`` rows with ``low <= id < upper``, highest id first."""
    clock = store.ChunkClock(NEWEST_FIRST_WIDTH, minimum=MIN_WIDTH)
    started = time.monotonic()
    rows: list = []
    while upper > low and len(rows) < need:
        left = budget - (time.monotonic() - started)
        if left <= 0:
            raise QueryTimeout(budget)
        want = need - len(rows)

        def one(width: int, upper: int = upper, left: float = left, want: int = want) -> list:
            return run(max(low, upper - width), upper, want, left)

        width, found = clock.run(one)
        rows += found
        upper = max(low, upper - width)
    return rows[:need]
