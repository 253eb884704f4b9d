"""One statement at a time per process and per file on a rollback-journal state.db.

In rollback-journal mode Hermes commits once no reader holds a SHARED lock, and while it
waits its PENDING lock keeps new readers out.  But SQLite keeps that lock per *process*: a
connection joins another connection's SHARED lock in the same process without looking at
PENDING, so the overlapping short statements of a worker's threads can hold it for seconds
(measured: over a second, with every statement under 50 ms).

A thread enters the gate before a statement starts and leaves when it is reset, so between
two statements the process's lock is released and a waiting writer commits first.  The gate
is per file, as SQLite's lock is.  A thread that cannot enter within ``WAIT`` seconds goes
ahead: a stuck statement must not stop every other page.
"""

from __future__ import annotations

import os
import threading

# Seconds a thread waits for the gate before it runs its statement regardless.
WAIT = 2.0


class StatementGate:
    __slots__ = ("_changed", "_depth", "_owner")

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._owner: int | None = None
        self._depth = 0

    def enter(self) -> bool:
        """Wait for the gate (at most ``WAIT`` seconds); False if it did not open."""
        me = threading.get_ident()
        with self._changed:
            if self._owner == me:
                self._depth += 1
                return True
            if not self._changed.wait_for(lambda: self._owner is None, WAIT):
                return False
            self._owner, self._depth = me, 1
            return True

    def leave(self) -> None:
        with self._changed:
            self._depth -= 1
            if self._depth <= 0:
                self._owner, self._depth = None, 0
                self._changed.notify()


_GATES: dict[tuple, StatementGate] = {}
_GATES_LOCK = threading.Lock()


def for_file(path: str) -> StatementGate:
    """The gate of the file at ``path`` (the same one for every connection of the process),
    named by (device, inode) whatever path reaches it, else by its real path."""
    try:
        st = os.stat(path)
        key: tuple = ("inode", st.st_dev, st.st_ino)
    except OSError:
        key = ("path", os.path.realpath(path))
    with _GATES_LOCK:
        return _GATES.setdefault(key, StatementGate())
