"""How long each statement on the state.db kept its read lock: a probe for tests and benchmarks.

The cursor (``base.py``) reports each statement from ``execute`` until it is done: an upper
bound of its lock's life, during which Hermes cannot commit in rollback-journal mode.  Nothing
is recorded unless someone watches; ``HERMES_LOG_LOCK_HOLDS_MS`` logs the long ones.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

from django.conf import settings

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Hold:
    sql: str
    seconds: float


_watchers: list[list[Hold]] = []
_lock = threading.Lock()


def _log_over() -> float | None:
    """Seconds above which a hold is logged (``HERMES_LOG_LOCK_HOLDS_MS``), or None."""
    ms = settings.HERMES_LOG_LOCK_HOLDS_MS
    return None if ms is None else float(ms) / 1000


def watching() -> bool:
    return bool(_watchers) or _log_over() is not None


def report(sql: str, seconds: float) -> None:
    hold = Hold(sql=sql, seconds=seconds)
    with _lock:
        for seen in _watchers:
            seen.append(hold)
    over = _log_over()
    if over is not None and seconds > over:
        # When it started (epoch), so that a slow commit of Hermes can be matched to it.
        logger.warning(
            "a statement held the state.db for %.0f ms from %.3f: %s",
            seconds * 1000,
            time.time() - seconds,
            " ".join(sql.split())[:300],
        )


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
