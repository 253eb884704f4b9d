"""How many of one kind of costly work run at once on this host, across every worker.

Each slot is a lock file in the data directory held with ``flock``; a request that finds every
slot taken is answered "busy" at once rather than queue (holding a worker thread).  The
operating system releases a slot whose process died.  A streamed body holds its slot until it
ends or is closed (:class:`Holding`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from django.conf import settings


class Busy(Exception):
    def __init__(self, kind: str, count: int):
        super().__init__(f"{count} {kind} already running on this host")
        self.kind, self.count = kind, count


# What a "busy" answer tells the client to wait (``Retry-After``, seconds).
RETRY_SECONDS = 10


class Held(contextlib.AbstractContextManager):
    """One slot taken; :meth:`release` (safe to call again) gives it back."""

    def __init__(self, fd: int):
        self.fd: int | None = fd

    def release(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            os.close(fd)  # releases the lock

    # A slot nothing can release any more (a response dropped unclosed) is given back.
    __del__ = release

    def __exit__(self, *exc) -> None:
        self.release()


def take(kind: str, count: int) -> Held:
    """Take one of the host's ``count`` slots of ``kind`` now, or raise :class:`Busy`."""
    count = max(1, int(count))
    directory = Path(settings.DATA_DIR) / f"{kind}-slots"
    directory.mkdir(parents=True, exist_ok=True)
    for number in range(count):
        fd = os.open(directory / f"{number}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return Held(fd)
    raise Busy(kind, count)


class Holding(Iterator):
    """``items`` as an iterator that gives ``held`` back when they end or fail, or when it is
    closed (the WSGI server closes a streamed response when it is sent or the client goes
    away, started or not): a streamed body keeps its slot for as long as it streams."""

    def __init__(self, items: Iterable, held: Held):
        self.items = iter(items)
        self.held = held

    def __next__(self):
        try:
            return next(self.items)
        except BaseException:  # StopIteration included: the end of the stream
            self.close()
            raise

    def close(self) -> None:
        try:
            close = getattr(self.items, "close", None)
            if close is not None:
                close()
        finally:
            self.held.release()
