"""A spare lane: a thread of the process that takes one part of a request's reads, when free.

A cold insights report runs independent statements over the state.db that each take a good
part of its time on a big store.  SQLite leaves Python's lock while a statement runs, so two
statements on two connections use two cores.  Each process keeps :data:`SPARE_LANES` threads
for this.  A request asks for one with :func:`beside`; when none is free (other requests hold
them), its work simply runs in the request's own thread when its result is asked for, so a
busy server does no more work than before and no request waits for a lane.

The lane runs the work in a copy of the request's context (the store being read, the
statements' budget: every statement keeps its deadline) and closes the connections it opened
when the work is done, so that it keeps no file open and no connection outlives its request.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from django.db import connections

T = TypeVar("T")

# Threads per process that take work beside a request's own thread (a cold insights report
# uses two: the previous period's pass, and half of its own).
SPARE_LANES = 2

_free = threading.BoundedSemaphore(SPARE_LANES)
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _lanes() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(SPARE_LANES, thread_name_prefix="spare-lane")
        return _pool


def _in_lane(context: contextvars.Context, work: Callable[[], T]) -> T:
    try:
        return context.run(work)
    finally:
        try:
            connections.close_all()
        finally:
            _free.release()


def beside(work: Callable[[], T]) -> Callable[[], T]:
    """Start ``work`` in a spare lane if one is free; the function returned gives its result
    (waiting for the lane, or running ``work`` here if no lane took it) and raises what it
    raised."""
    if not _free.acquire(blocking=False):
        return work
    try:
        future: Future = _lanes().submit(_in_lane, contextvars.copy_context(), work)
    except RuntimeError:  # the interpreter is shutting down: no new threads
        _free.release()
        return work
    return future.result
