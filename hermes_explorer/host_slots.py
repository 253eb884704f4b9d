"""How many of one kind of costly work run at once on this host, across every worker.

Each slot is a lock file in the data directory held with ``flock``; a request that finds every
slot taken is answered "busy" at once rather than queue (holding a worker thread).  The
operating system releases a slot whose process died.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings


class Busy(Exception):
    def __init__(self, kind: str, count: int):
        super().__init__(f"{count} {kind} already running on this host")
        self.kind, self.count = kind, count


@contextlib.contextmanager
def slot(kind: str, count: int) -> Iterator[None]:
    """Hold one of the host's ``count`` slots of ``kind``, or raise :class:`Busy`."""
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
        try:
            yield
        finally:
            os.close(fd)  # releases the lock
        return
    raise Busy(kind, count)
