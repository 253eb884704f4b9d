"""A spare lane: a thread of the process that takes one part of a request's reads, when free.

A cold insights report runs independent statements over the state.db that each take a good
part of its time on a big store.  SQLite leaves Python's lock while a statement runs, so two
statements on two connections use two cores.  Each process keeps ``HERMES_SPARE_LANES``
threads for this (0: none, on a one-core host).  A request asks for one with :func:`beside`.
When none is free (other requests, or this one's earlier parts, hold them), its work waits
in line: the first lane to finish takes it, unless the request asks for its result first, in
which case the request runs it itself.  So no request ever waits for a lane that has not
started its work, and a busy server does no more work than before.

The lane runs the work in a copy of the request's context (the store being read, the
statements' budget: every statement keeps its deadline) and closes the connections it opened
when it is done, so that it keeps no file open and no connection outlives its request.  Work
that reads the app's own database goes beside only when the request holds no open transaction
there: another connection would not see what that transaction wrote (tests run in one).
"""

from __future__ import annotations

import contextvars
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Generic, TypeVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections

T = TypeVar("T")

# Work waiting for a lane, beyond which more simply runs in its request's thread.
MAX_WAITING = 32

_free: threading.BoundedSemaphore | None = None
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
# In line for a lane: the parts of requests, then what asked to go last (``in_line``).
_waiting: tuple[deque[_Part], deque[_Part]] = (deque(), deque())


def spare_lanes() -> int:
    """Threads per process that take work beside a request's own thread (a cold insights
    report uses two: one takes half of its pass, the other the previous period's pass, then
    the message figures and the model box's suggestions)."""
    return settings.HERMES_SPARE_LANES


def _lanes() -> tuple[threading.BoundedSemaphore, ThreadPoolExecutor]:
    global _free, _pool
    with _pool_lock:
        if _pool is None:
            _free = threading.BoundedSemaphore(spare_lanes())
            _pool = ThreadPoolExecutor(spare_lanes(), thread_name_prefix="spare-lane")
        return _free, _pool


class _Part(Generic[T]):
    """A request's work for a lane: run once, by a lane or by its caller, whoever takes it
    first; a lane hands its result over (and closes the connections it opened for it) as soon
    as it is done, before it takes the next work in line."""

    def __init__(self, work: Callable[[], T], line: deque | None = None):
        self.work = work
        self.line = line  # the line it waits in, if it does
        self.context = contextvars.copy_context()
        self._lock = threading.Lock()
        self._taken = False
        self._done = threading.Event()
        self._result: T | None = None
        self._error: BaseException | None = None

    def take(self) -> bool:
        with self._lock:
            taken, self._taken = self._taken, True
        return not taken

    def run_in_lane(self) -> None:
        try:
            self._result = self.context.run(self.work)
        except BaseException as exc:  # handed to the caller, who raises it
            self._error = exc
        finally:
            try:
                connections.close_all()
            finally:
                self._done.set()

    def result(self) -> T:
        if self.take():
            if self.line is not None:
                try:
                    self.line.remove(self)
                except ValueError:  # a lane has just taken it out of the line (and dropped it)
                    pass
            return self.work()  # no lane took it: the caller's own thread runs it
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._result  # type: ignore[return-value]


def _next_waiting() -> _Part | None:
    """The first work in line that its caller has not run meanwhile: the requests' parts
    first, looked at again after each one a lane runs."""
    for line in _waiting:
        while True:
            try:
                part = line.popleft()
            except IndexError:
                break
            if part.take():
                return part
    return None


def _in_lane(free: threading.BoundedSemaphore, first: _Part) -> None:
    try:
        first.run_in_lane()
        # Then whatever waits in line, while this lane is still counted as taken.
        while (part := _next_waiting()) is not None:
            part.run_in_lane()
    finally:
        free.release()


def _holds_app_transaction() -> bool:
    return connections[DEFAULT_DB_ALIAS].in_atomic_block


def beside(
    work: Callable[[], T], *, reads_app_data: bool = False, in_line: bool = False
) -> Callable[[], T]:
    """Start ``work`` in a spare lane if one is free, else put it in line for the first lane
    that frees up; the function returned gives its result (waiting for the lane that took it,
    or running ``work`` here if none did) and raises what it raised.

    ``reads_app_data``: the work reads the app's own database; it then runs here when the
    request holds an open transaction there.  ``in_line``: the work goes in line even when a
    lane is free, so that it never takes a lane from the bigger parts asked for after it."""
    if spare_lanes() <= 0 or (reads_app_data and _holds_app_transaction()):
        return work
    free, pool = _lanes()
    if in_line or not free.acquire(blocking=False):
        line = _waiting[1 if in_line else 0]
        if len(line) >= MAX_WAITING:
            return work
        part = _Part(work, line)
        line.append(part)
        return part.result
    part = _Part(work)
    part.take()  # this lane's, from the start
    try:
        pool.submit(_in_lane, free, part)
    except RuntimeError:  # the interpreter is shutting down: no new threads
        free.release()
        return work
    return part.result
