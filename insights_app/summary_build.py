"""Building the stored summaries of a whole state.db, ahead of time (``manage.py insights_warm``,
run by its systemd timer, ``deploy/hermes-explorer-warm.timer``).

A first insights report on a big store would otherwise compute tens of thousands of summaries
inside one request.  A report computes a few missing ones itself; when more than
:data:`BACKGROUND_FROM` sessions of its window have none, it shows the figures that do not need
summaries and says how many are missing, and the command's next run computes them.
:func:`build` computes every missing or stale summary of the file in chunks and records its
progress in the app database (:func:`insights_app.summary_store.claim_build`): every worker
shows how far a running build is.  One build runs per file, across processes.
"""

from __future__ import annotations

import contextvars
import logging
import queue
import threading
import time
from collections.abc import Callable

from django.db import connections

from . import summaries, summary_store
from .window import Window, scope_of, window_chunks

log = logging.getLogger(__name__)

# Sessions to compute beyond which a report leaves them to a build in the background.
BACKGROUND_FROM = 1000
# Summaries stored by a build beyond which it compacts the app database afterwards
# (:func:`insights_app.summary_store.compact`).
COMPACT_FROM = 1000
# Reader lanes of a build in the background or ahead of time (``insights_warm``), beside the
# thread that summarises and stores what they read.
BUILD_THREADS = 2


def pending(key: int) -> list[tuple]:
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
    key: int,
    *,
    claim: bool = True,
    progress: Callable[[int, int], None] | None = None,
    threads: int = 1,
) -> int:
    """Compute and store every missing or stale summary of the file, newest sessions first
    (the default windows are ready soonest); returns how many were computed.  With ``claim``
    it runs only if no other build of this file is alive, and records its progress.

    A pipeline: ``threads`` reader lanes run the statements (SQLite leaves Python's lock
    while it reads, so two lanes use two cores), each on connections of its own, lane ``i``
    taking chunks ``i``, ``i + threads``, … so that the newest sessions still come first;
    this thread turns their rows into summaries and stores them, the one writer."""
    summaries.refresh_high_water()
    todo = pending(key)
    if claim and not summary_store.claim_build(key, len(todo)):
        return 0
    try:
        done = _pipeline(key, todo, progress, max(1, threads), claim)
    finally:
        if claim:
            summary_store.build_finished(key)
    if done >= COMPACT_FROM:
        # After the build is marked finished: the reports it held back are complete already.
        summary_store.compact()
    return done


_END = object()


def _pipeline(
    key: int,
    todo: list[tuple],
    progress: Callable[[int, int], None] | None,
    threads: int,
    claimed: bool,
) -> int:
    counts = {r[0]: r[1] for r in todo}
    attributes = {r[0]: summary_store.Attributes(*r[2:5]) for r in todo}
    size = summaries.CHUNK_SESSIONS
    chunks = [[r[0] for r in todo[i : i + size]] for i in range(0, len(todo), size)]
    shares = [[sid for c in chunks[i::threads] for sid in c] for i in range(threads)]
    read: queue.Queue = queue.Queue(maxsize=2 * threads)
    stop = threading.Event()

    def hand_over(item) -> bool:
        while not stop.is_set():
            try:
                read.put(item, timeout=0.5)
                return True
            except queue.Full:
                continue
        return False

    def lane(ids: list[str]) -> None:
        try:
            for item in summaries.chunked(ids, counts, summaries.read):
                if not hand_over(item):
                    return
        except BaseException as exc:  # handed to the writer, which raises it
            hand_over(exc)
        finally:
            hand_over(_END)
            connections.close_all()

    # Each lane reads the store this build is for (the current one is a context variable,
    # which a new thread does not inherit).
    readers = [
        threading.Thread(
            target=contextvars.copy_context().run, args=(lane, share), name="insights-read"
        )
        for share in shares
    ]
    for reader in readers:
        reader.start()
    done, ended = 0, 0
    failure: BaseException | None = None

    def saved(n: int) -> None:
        nonlocal done
        done += n
        if claimed:
            summary_store.build_advanced(key, n)
        if progress is not None:
            progress(done, len(todo))

    saver = summaries.Saver(key, attributes, saved)
    try:
        while ended < len(readers):
            item = read.get()
            if item is _END:
                ended += 1
            elif isinstance(item, BaseException):
                failure = item
                break  # the other lanes stop at their next chunk
            else:
                chunk, rows = item
                saver.add(summaries.summarise(chunk, counts, rows))
        if failure is None:
            saver.flush()
    finally:
        stop.set()
        for reader in readers:
            reader.join()
    if failure is not None:
        raise failure
    return done
