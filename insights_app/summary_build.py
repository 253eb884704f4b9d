"""Building the stored summaries of a whole state.db ahead of time (``manage.py insights_warm``).

:func:`build` records its progress in the app database, so every worker shows it; one build
runs per file across processes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from django.db.models import Q

from . import summaries, summary_store
from .window import Scope, Window, scope_of, window_chunks

log = logging.getLogger(__name__)

# Sessions to compute beyond which a report leaves them to insights_warm.
BACKGROUND_FROM = 1000


def window_sessions(scope: Scope) -> list[tuple]:
    """``(id, message_count, started_at, source, model)`` of the window's sessions."""
    columns = f"s.id, s.message_count, s.started_at, s.source, {scope.scol('model', 'NULL')}"
    return [row for rows in window_chunks(scope, columns) for row in rows]


def stale(key: int, window: Q, rows: list[tuple]) -> list[tuple]:
    """Those of the window's session ``rows`` whose stored summary is missing or stale; the
    stale ones and those of sessions no longer in the window are dropped."""
    stored = summary_store.counts(key, window)
    ids = {r[0] for r in rows}
    found = [r for r in rows if r[0] not in stored or stored[r[0]] != r[1]]
    gone = [sid for sid in stored if sid not in ids]
    summary_store.drop(key, gone + [r[0] for r in found if r[0] in stored])
    return found


def build(key: int, *, progress: Callable[[int, int], None] | None = None) -> int:
    """Compute and store every missing or stale summary, newest first, a chunk at a time, if no
    other build of this file is alive; returns how many."""
    summaries.refresh_high_water()
    rows = window_sessions(scope_of(Window(days=None), time.time()))
    rows.sort(key=lambda r: r[2] if isinstance(r[2], int | float) else float("-inf"), reverse=True)
    todo = stale(key, Q(), rows)
    if not summary_store.claim_build(key, len(todo)):
        return 0
    counts = {r[0]: r[1] for r in todo}
    attributes = {r[0]: r[2:5] for r in todo}
    done = 0

    def saved(n: int) -> None:
        nonlocal done
        done += n
        summary_store.build_advanced(key, n)
        if progress is not None:
            progress(done, len(todo))

    saver = summaries.Saver(key, attributes, saved)
    try:
        for chunk, rows in summaries.chunked([r[0] for r in todo], counts, summaries.read):
            saver.add(summaries.summarise(chunk, counts, rows))
        saver.flush()
    finally:
        summary_store.build_finished(key)
    return done
