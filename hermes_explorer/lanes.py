"""A spare lane: a thread of the process that takes one part of a request's reads, when free.

A cold insights report runs independent statements over the state.db that each take a good
part of its time on a big store.  SQLite leaves Python's lock while a statement runs, so two
statements on two connections use two cores.  Each process keeps ``HERMES_SPARE_LANES``
threads for this (0: none, on a one-core host).  A request asks for one with :func:`beside`; when none is free (other requests hold
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

from django.conf import settings
from django.db import connections

T = TypeVar("T")

_free: threading.BoundedSemaphore | None = None
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def spare_lanes() -> int:
    """Threads per process that take work beside a request's own thread (a cold insights
    report uses two: half of its pass, and the previous period's)."""
    return settings.HERMES_SPARE_LANES


def _lanes() -> tuple[threading.BoundedSemaphore, ThreadPoolExecutor]:
    global _free, _pool
    with _pool_lock:
        if _pool is None:
            _free = threading.BoundedSemaphore(spare_lanes())
            _pool = ThreadPoolExecutor(spare_lanes(), thread_name_prefix="spare-lane")
        return _free, _pool


def _in_lane(
    free: threading.BoundedSemaphore, context: contextvars.Context, work: Callable[[], T]
) -> T:
    try:
        return context.run(work)
    finally:
        try:
            connections.close_all()
        finally:
            free.release()


def beside(work: Callable[[], T]) -> Callable[[], T]:
    """Start ``work`` in a spare lane if one is free; the function returned gives its result
    (waiting for the lane, or running ``work`` here if no lane took it) and raises what it
    raised."""
    if spare_lanes() <= 0:
        return work
    free, pool = _lanes()
    if not free.acquire(blocking=False):
        return work
    try:
        future: Future = pool.submit(_in_lane, free, contextvars.copy_context(), work)
    except RuntimeError:  # the interpreter is shutting down: no new threads
        free.release()
        return work
    return future.result
