"""A per-process copy, in front of the shared cache, of the entries that cannot go stale.

Every worker reads and writes the shared cache (Redis, or the host's file cache): each read
there is a round trip to another process (or a file read) that a page pays again and again for
the same few entries: the count of a list, the report of a window, the rendered body of an
insights page.  This module keeps, in each worker, a small bounded copy of the entries whose
key pins their value down, so a repeated read costs an unpickle and no round trip:

* **immutable entries** (:func:`get`, :func:`set`): the key includes the state.db's file
  signature (or a digest of it), and the value is a pure function of the key; a new version of
  the file is a new key.  The local copy is kept for the shared entry's own lifetime.
* **entries with a deadline** (``expires=`` or :func:`get_stamped` / :func:`set_stamped`): a
  value that is good until a moment (the report of "the last 30 days" until its
  ``generated_at`` plus the report's lifetime; a facet until the time stored with it).  The
  local copy is dropped at that deadline, never later than the shared entry would be.

The shared cache stays the one every worker goes to first on a miss and writes to on a set:
nothing lives only here.  State that must be seen at once by every worker or instance
(signed-in sessions, sign-in lockouts, annotations, the progress of the insights summaries)
never goes through this module.

Values are kept pickled, as the shared cache keeps them: each read returns a new object (a
caller that changes what it got cannot change another request's copy), and the bound is on
bytes (``NEAR_CACHE_BYTES``, least recently used first out).
"""

from __future__ import annotations

import pickle
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.filebased import FileBasedCache

DEFAULT_BYTES = 32 * 1024 * 1024
# One entry never takes more than this share of the bound (an export-sized value would
# otherwise push out everything else).
LARGEST_SHARE = 8

_lock = threading.Lock()
# (alias, key) -> (deadline on time.time(), pickled value)
_entries: OrderedDict[tuple[str, str], tuple[float, bytes]] = OrderedDict()
_size = 0


def _limit() -> int:
    return int(getattr(settings, "NEAR_CACHE_BYTES", DEFAULT_BYTES))


def _local(alias: str, key: str):
    now = time.time()
    with _lock:
        found = _entries.get((alias, key))
        if found is None:
            return None
        deadline, data = found
        if deadline <= now:
            _drop((alias, key))
            return None
        _entries.move_to_end((alias, key))
    return pickle.loads(data)  # noqa: S301 - bytes this process pickled itself


def _drop(slot: tuple[str, str]) -> None:
    global _size
    _deadline, data = _entries.pop(slot)
    _size -= len(data)


def _keep(alias: str, key: str, value: Any, deadline: float) -> None:
    global _size
    limit = _limit()
    if limit <= 0 or deadline <= time.time():
        return
    data = pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
    if len(data) > limit // LARGEST_SHARE:
        return
    slot = (alias, key)
    with _lock:
        if slot in _entries:
            _drop(slot)
        _entries[slot] = (deadline, data)
        _size += len(data)
        while _size > limit:
            _drop(next(iter(_entries)))


def get(
    key: str,
    *,
    timeout: float,
    alias: str = "default",
    expires: Callable[[Any], float] | None = None,
):
    """The value of ``key`` (None when absent): this process's copy, else the shared one.

    ``timeout``: the shared entry's lifetime, for which a copy of an immutable entry is kept;
    ``expires(value)``: the moment a value stops being good, for an entry with a deadline."""
    value = _local(alias, key)
    if value is not None:
        return value
    value = caches[alias].get(key)
    if value is not None:
        _keep(alias, key, value, expires(value) if expires else time.time() + timeout)
    return value


def set(  # noqa: A001 - the cache's own verb
    key: str,
    value: Any,
    timeout: float,
    *,
    alias: str = "default",
    expires: Callable[[Any], float] | None = None,
) -> None:
    """Store ``value`` in the shared cache for ``timeout`` seconds, and keep a copy here."""
    caches[alias].set(key, value, timeout)
    _keep(alias, key, value, expires(value) if expires else time.time() + timeout)


def get_stamped(key: str, *, alias: str = "default"):
    """A value stored by :func:`set_stamped`, or None: good until the deadline stored with it."""
    value = _local(alias, key)
    if value is not None:
        return value
    found = caches[alias].get(key)
    if not (isinstance(found, tuple) and len(found) == 2 and isinstance(found[0], float)):
        return None  # absent, or kept in another form by an earlier version
    deadline, value = found
    if deadline <= time.time():
        return None
    _keep(alias, key, value, deadline)
    return value


def set_stamped(key: str, value: Any, timeout: float, *, alias: str = "default") -> None:
    """Store ``value`` with the moment it stops being good (now + ``timeout``), so that a copy
    in any worker ends when the shared entry does."""
    deadline = time.time() + timeout
    caches[alias].set(key, (deadline, value), timeout)
    _keep(alias, key, value, deadline)


def clear() -> None:
    """Forget every copy of this process (the shared cache was cleared)."""
    global _size
    with _lock:
        _entries.clear()
        _size = 0


class HostFileCache(FileBasedCache):
    """Django's file cache (the default shared by this host's workers), whose ``clear()`` also
    forgets this process's copies."""

    def clear(self):
        super().clear()
        clear()
