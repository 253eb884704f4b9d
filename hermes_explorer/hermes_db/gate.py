"""One statement at a time per process and per file on a rollback-journal state.db.

In rollback-journal mode Hermes commits once it holds the EXCLUSIVE lock, which it gets when no
reader holds a SHARED lock; while it waits it holds PENDING, which keeps new readers out.  But
SQLite keeps that lock per *process*: when one connection of a process already holds SHARED,
another connection of the same process joins it without looking at the file's locks, PENDING
or not.  So the threads of a server worker, each running short statements that overlap one
another, can keep the process's SHARED lock for seconds on end, and Hermes waits all that time
(measured: over a second, with every statement under 50 ms).

The gate restores what SQLite means: a thread enters it before a statement starts and leaves
when the statement is reset (read to its end, closed, or failed), so at most one statement of
this process holds the lock at a time and, between two, the process's lock is released and a
waiting writer's PENDING keeps the next one out until Hermes has committed.  Statements stay
short on such files (see :class:`hermes_explorer.store.ChunkClock`), so the wait is short.

SQLite's lock is per file, so the gate is too (:func:`for_file`): with several stores served, a
long statement on one profile's file never makes another profile's statements wait.

A thread may nest statements (it already holds the gate).  A thread that cannot enter within
``WAIT`` seconds goes ahead anyway: a stuck statement must not stop every other page.
"""

from __future__ import annotations

import os
import threading
import time

# Seconds a thread waits for the gate before it runs its statement regardless.
WAIT = 2.0


class StatementGate:
    __slots__ = ("_changed", "_depth", "_owner")

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._owner: int | None = None
        self._depth = 0

    def enter(self, wait: float | None = None) -> bool:
        """Wait for the gate (at most ``wait`` seconds, ``WAIT`` by default); False if it was
        not entered."""
        wait = WAIT if wait is None else wait
        me = threading.get_ident()
        with self._changed:
            if self._owner == me:
                self._depth += 1
                return True
            deadline = time.monotonic() + wait
            while self._owner is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
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


def file_key(path: str) -> tuple:
    """What names one file whatever path reaches it: (device, inode), else the real path."""
    try:
        st = os.stat(path)
    except OSError:
        return ("path", os.path.realpath(path))
    return ("inode", st.st_dev, st.st_ino)


def for_file(path: str) -> StatementGate:
    """The gate of the file at ``path`` (the same one for every connection of the process)."""
    key = file_key(path)
    with _GATES_LOCK:
        found = _GATES.get(key)
        if found is None:
            found = _GATES[key] = StatementGate()
        return found
