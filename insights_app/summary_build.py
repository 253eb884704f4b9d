"""Building the stored summaries of a whole state.db: ahead of time or in the background.

A first insights report on a big store would otherwise compute tens of thousands of summaries
inside one request.  Instead, when a report finds more than :data:`BACKGROUND_FROM` sessions
of its window without a current summary, :func:`start` runs :func:`build` in a thread of the
process, which computes every missing or stale summary of the file in chunks and records its
progress in the app database (:func:`insights_app.summary_store.claim_build`): every worker
then shows the figures that do not need summaries at once, and how far the build is for those
that do.  One build runs per file, across processes: a build whose heartbeat stops (its process
ended) is taken over by the next report.  ``manage.py insights_warm`` runs the same build in
the foreground.
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from collections.abc import Callable

from django.db import connections

from . import summaries, summary_store
from .window import Window, scope_of, window_chunks

log = logging.getLogger(__name__)

# Sessions to compute beyond which a report leaves them to a build in the background.
BACKGROUND_FROM = 1000
# Lanes of a build in the background or ahead of time (``insights_warm``).
BUILD_THREADS = 2

_running: set[str] = set()
_lock = threading.Lock()


def pending(key: str) -> list[tuple]:
    """``(id, message_count, started_at, source, model)`` of every session of the file
    whose stored summary is missing or stale, newest first; stored summaries of sessions gone
    are dropped.  (Read in short statements on a rollback-journal file.)"""
    scope = scope_of(Window(days=None), time.time())
    columns = f"s.id, s.message_count, s.started_at, s.source, {scope.scol('model', 'NULL')}"
    rows = [row for rows in window_chunks(scope, columns) for row in rows]
    rows.sort(key=lambda r: r[2] if isinstance(r[2], int | float) else float("-inf"), reverse=True)
    stored = summary_store.counts(key, summary_store.window_q(None, None, None, None))
    ids = {r[0] for r in rows}
    summary_store.drop(key, [sid for sid in stored if sid not in ids])
    stale = [r for r in rows if r[0] not in stored or stored[r[0]] != r[1]]
    summary_store.drop(key, [r[0] for r in stale if r[0] in stored])
    return stale


def build(
    key: str,
    *,
    claim: bool = True,
    progress: Callable[[int, int], None] | None = None,
    threads: int = 1,
) -> int:
    """Compute and store every missing or stale summary of the file, newest sessions first
    (the default windows are ready soonest); returns how many were computed.  With ``claim``
    it runs only if no other build of this file is alive, and records its progress.

    ``threads`` lanes compute chunks side by side (SQLite reads leave Python's lock, so two
    lanes use two cores), each on connections of its own: lane ``i`` takes chunks ``i``,
    ``i + threads``, …, so that the newest sessions still come first."""
    summaries.refresh_high_water()
    todo = pending(key)
    if claim and not summary_store.claim_build(key, len(todo)):
        return 0
    done = 0
    lock = threading.Lock()

    def advanced(n: int) -> None:
        nonlocal done
        with lock:
            done += n
            if claim:
                summary_store.build_advanced(key, n)
            if progress is not None:
                progress(done, len(todo))

    def lane(rows: list[tuple]) -> int:
        return summaries.collect(
            [(r[0], r[1]) for r in rows],
            attributes={r[0]: summary_store.Attributes(*r[2:5]) for r in rows},
            key=key,
            progress=advanced,
        ).computed

    size = summaries.CHUNK_SESSIONS
    chunks = [todo[i : i + size] for i in range(0, len(todo), size)]
    lanes = [[r for c in chunks[i :: max(1, threads)] for r in c] for i in range(max(1, threads))]
    try:
        if threads <= 1:
            return lane(todo)
        computed = [0] * len(lanes)

        def run(i: int) -> None:
            try:
                computed[i] = lane(lanes[i])
            finally:
                connections.close_all()

        # Each lane reads the store this build is for (the current one is a context variable,
        # which a new thread does not inherit).
        workers = [
            threading.Thread(target=contextvars.copy_context().run, args=(run, i))
            for i in range(1, len(lanes))
        ]
        for worker in workers:
            worker.start()
        computed[0] = lane(lanes[0])
        for worker in workers:
            worker.join()
        return sum(computed)
    finally:
        if claim:
            summary_store.build_finished(key)


def _run(key: str) -> None:
    try:
        build(key, threads=BUILD_THREADS)
    except Exception:  # a thread has no one to report to but the log
        log.exception("insights summaries: the background build failed")
    finally:
        with _lock:
            _running.discard(key)
        connections.close_all()


def launch(target: Callable[[], None]) -> None:
    """Run ``target`` in a thread of its own (tests replace this to run it when they like)."""
    threading.Thread(target=target, name="insights-summary-build", daemon=True).start()


def start(key: str) -> tuple[int, int] | None:
    """Make sure a build of this file runs (here, or in another process); ``(done, total)``
    of the running one when known."""
    found = summary_store.build_progress(key)
    if found is not None:
        return found
    with _lock:
        if key in _running:
            return None
        _running.add(key)
    # The build reads the store the report was for, wherever it runs: in a copy of this
    # context, where that store is the current one (a new thread would read the default).
    context = contextvars.copy_context()
    launch(lambda: context.run(_run, key))
    return None
