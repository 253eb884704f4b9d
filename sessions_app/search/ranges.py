"""An indexed search page in short statements over message-id ranges (rollback-journal files).

In rollback-journal mode Hermes cannot commit while our statement runs, and one indexed search
can run for seconds.  There the page is put together from statements over id ranges
(``lo <= id < hi``), each sized by a :class:`hermes_explorer.store.ChunkClock`: newest first
walks the ranges down until it has a page; relevance order ranks every range (FTS5's ``rank``
uses whole-index statistics) and keeps the best rows, ranges in ascending id order so ties
keep FTS5's order; counting matches adds up ranges until it passes the cap.

Each ranked statement pays a count of each word over the whole index, so the ranking cap is
lower on such files (``SHORT_READ_RANK_MATCH_CAP``).  The walk has the page's budget: past it,
:class:`QueryTimeout` is raised as the single statement would, and the engine's fallbacks apply.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from hermes_explorer import store
from hermes_explorer.hermes_db.deadline import QueryTimeout

# First range widths in message ids (the clock sizes the next), and the narrowest range worth
# each ranked statement's fixed cost.
NEWEST_FIRST_WIDTH = 65_536
RANKED_FIRST_WIDTH = 16_384
COUNT_FIRST_WIDTH = 65_536
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


def best_ranked(
    run: RangeQuery, *, low: int, high: int, need: int, budget: float, rank_of: Callable
) -> list:
    """The ``need`` best rows of ``low <= id <= high`` by ``rank_of(row)``, smallest first
    (``run`` returns each range's rows in rank order)."""
    clock = store.ChunkClock(RANKED_FIRST_WIDTH, minimum=MIN_WIDTH)
    started = time.monotonic()
    best: list = []
    lower = low
    while lower <= high:
        left = _remaining(started, budget)

        def one(width: int, lower: int = lower, left: float = left) -> list:
            return run(lower, min(high + 1, lower + width), need, left)

        width, found = clock.run(one)
        if found:
            # A stable sort: rows of equal rank stay in range order, then in FTS5's order.
            best = sorted(best + found, key=rank_of)[:need]
        lower += width
    return best


def count_over(run: RangeQuery, *, low: int, high: int, cap: int, budget: float) -> int:
    """How many rows ``low <= id <= high`` have, counting no further than past ``cap``."""
    clock = store.ChunkClock(COUNT_FIRST_WIDTH, minimum=MIN_WIDTH)
    started = time.monotonic()
    total = 0
    lower = low
    while lower <= high and total <= cap:
        left = _remaining(started, budget)
        want = cap + 1 - total

        def one(width: int, lower: int = lower, left: float = left, want: int = want) -> list:
            return run(lower, min(high + 1, lower + width), want, left)

        width, found = clock.run(one)
        total += found[0][0]
        lower += width
    return total
