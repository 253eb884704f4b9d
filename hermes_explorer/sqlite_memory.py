"""SQLite without its memory statistics, in web workers.

By default SQLite counts every allocation it makes in process-wide statistics, under one mutex
that every thread of the process takes on every ``malloc`` and ``free``.  A worker runs several
statements at once (its request threads, and the spare lanes that take half of an insights
pass), and the groupings allocate a great deal: measured on the benchmark's store, the two
halves of a 365-day pass took 224–227 ms side by side with the statistics and 183–185 ms
without (the whole pass alone, on one thread, 5–8% less).

The statistics serve only ``sqlite3_memory_used()`` and the heap limits.  The explorer sets a
heap limit in one place, the SQL console's child process (``console_app.child``), which is a
process of its own and keeps them.

SQLite takes this setting only while it is not initialised, and Python's ``sqlite3`` module
initialises it on import: :func:`turn_off` shuts SQLite down first, which is safe only while
the process has no connection open.  So it is called in one place: gunicorn's ``post_fork``
hook (``deploy/gunicorn.conf.py``), in each new worker before it loads the application, when
nothing in it has connected to anything yet.  Anywhere else it would not be safe.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging

log = logging.getLogger(__name__)

SQLITE_OK = 0
SQLITE_CONFIG_MEMSTATUS = 9


def _library():
    """The SQLite library Python's ``sqlite3`` module uses (loaded by its name, the loader
    gives back the copy already in the process), or None."""
    import sqlite3

    name = ctypes.util.find_library("sqlite3")
    if name is None:
        return None
    lib = ctypes.CDLL(name)
    lib.sqlite3_libversion.restype = ctypes.c_char_p
    if lib.sqlite3_libversion().decode() != sqlite3.sqlite_version:
        return None  # Python carries its own copy: leave both alone
    return lib


def turn_off() -> bool:
    """Turn SQLite's memory statistics off for this process; whether it was done.  Only
    while no connection is open (see the module's note)."""
    try:
        lib = _library()
        if lib is None:
            return False
        if lib.sqlite3_shutdown() != SQLITE_OK:
            return False
        done = lib.sqlite3_config(SQLITE_CONFIG_MEMSTATUS, ctypes.c_int(0)) == SQLITE_OK
        # (The first connection would initialise it all the same.)
        return lib.sqlite3_initialize() == SQLITE_OK and done
    except (OSError, AttributeError):
        log.warning("SQLite's memory statistics left on", exc_info=True)
        return False
