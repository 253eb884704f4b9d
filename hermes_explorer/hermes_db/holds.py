"""How long each statement on the state.db kept its read lock: a probe for tests and benchmarks.

In rollback-journal mode a reader's SHARED lock lasts from a statement's first step until
SQLite resets it, and while it lasts Hermes cannot commit.  The cursor (``base.py``) reports
every statement here, from the start of ``execute`` until the statement is known to be done:
its rows are read to the end, the cursor is closed or runs another statement.  That is an
upper bound of the lock's life (SQLite may have let go a little earlier), which is what a
test that asserts "no statement held the lock longer than X" wants.

Nothing is recorded unless someone is watching, so the cost in production is one truth test
per statement.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Hold:
    sql: str
    seconds: float
    thread: int


_watchers: list[list[Hold]] = []
_lock = threading.Lock()


def watching() -> bool:
    return bool(_watchers)


def report(sql: str, seconds: float) -> None:
    hold = Hold(sql=sql, seconds=seconds, thread=threading.get_ident())
    with _lock:
        for seen in _watchers:
            seen.append(hold)


@contextlib.contextmanager
def watch() -> Iterator[list[Hold]]:
    """Collect the holds of every statement run (in any thread) inside the block."""
    seen: list[Hold] = []
    with _lock:
        _watchers.append(seen)
    try:
        yield seen
    finally:
        with _lock:
            _watchers.remove(seen)
