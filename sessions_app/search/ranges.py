"""An indexed search page in short statements over message-id ranges (rollback-journal files).

On a file in rollback-journal mode Hermes cannot commit while one of our statements runs, and
one indexed search statement can run for a second or two: ranking every match of a common word,
or walking down the index for a page of newest hits that a filter keeps rejecting.  There the
same page is put together from statements over id ranges (``lo <= id < hi``; FTS5 and the
messages table both seek to such a range), each range sized by a
:class:`hermes_explorer.store.ChunkClock` so that a statement stays short:

* newest first walks the ranges downwards and stops once it has a page;
* relevance order ranks every range (FTS5's ``rank`` does not depend on the range: its
  statistics are the whole index's) and keeps the best rows over all ranges, in ascending id
  order of the ranges so that ties keep FTS5's own order;
* counting matches (is relevance order affordable?) adds up ranges until it passes the cap.

FTS5 pays one fixed cost per ranked statement, a count of each word's matches over the whole
index, so relevance order in ranges only stays short for words with few enough matches: that
is why the cap on ranking is lower on such files (``SHORT_READ_RANK_MATCH_CAP``).

The whole walk has the page's budget: past it, :class:`QueryTimeout` is raised exactly as the
single statement would have, and the engine's fallbacks apply.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from hermes_explorer import store
from hermes_explorer.hermes_db.deadline import QueryTimeout

# First range widths, in message ids (the clock sizes the next ones), and the narrowest range:
# narrower would only repeat each statement's fixed cost (FTS5 counts the whole index's
# matches of each phrase once per ranked statement).
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
    """The ``need`` best rows of ``low <= id <= high`` by ``rank_of(row)``, smallest first.

    ``run`` returns each range's rows already in FTS5's rank order."""
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
    """How many rows ``low <= id <= high`` have, counting no further than past ``cap``.

    ``run`` returns ``[(count,)]`` for a range, counting at most ``limit``."""
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
