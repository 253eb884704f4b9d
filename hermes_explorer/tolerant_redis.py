"""Django's Redis cache backend, for a cache the app can lose: a Redis that cannot be reached
is a miss, never an error page.

Nothing the explorer needs for correctness lives in the cache (reports, counts, facets, store
shapes are all recomputed from the state.db; signed-in sessions live in the app database), so
while Redis is down every page still answers, only slower.  Short socket timeouts keep a dead
Redis from holding a request; each failure is logged, at most once a minute per process.
"""

from __future__ import annotations

import logging
import threading
import time

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache

from . import near_cache

logger = logging.getLogger(__name__)

# Seconds to connect to Redis and to wait for one reply: it answers in well under a
# millisecond on a network that works.
SOCKET_TIMEOUT = 0.5
LOG_EVERY = 60.0


class TolerantRedisCache(RedisCache):
    def __init__(self, server, params):
        options = {
            "socket_connect_timeout": SOCKET_TIMEOUT,
            "socket_timeout": SOCKET_TIMEOUT,
            **params.get("OPTIONS", {}),
        }
        super().__init__(server, {**params, "OPTIONS": options})
        self._logged_at = 0.0
        self._log_lock = threading.Lock()

    def _failed(self, operation: str, exc: Exception) -> None:
        now = time.monotonic()
        with self._log_lock:
            if now - self._logged_at < LOG_EVERY:
                return
            self._logged_at = now
        logger.warning("cache unreachable (%s: %s); serving without it", operation, exc)

    def reachable(self) -> bool:
        """Whether Redis answers a PING now (for /healthz)."""
        try:
            return bool(self._cache.get_client().ping())
        except Exception as exc:  # noqa: BLE001 - any error of the client or the socket
            self._failed("ping", exc)
            return False

    def get(self, key, default=None, version=None):
        try:
            return super().get(key, default, version)
        except Exception as exc:  # noqa: BLE001
            self._failed("get", exc)
            return default

    def get_many(self, keys, version=None):
        try:
            return super().get_many(keys, version)
        except Exception as exc:  # noqa: BLE001
            self._failed("get_many", exc)
            return {}

    def has_key(self, key, version=None):
        try:
            return super().has_key(key, version)
        except Exception as exc:  # noqa: BLE001
            self._failed("has_key", exc)
            return False

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        try:
            super().set(key, value, timeout, version)
        except Exception as exc:  # noqa: BLE001
            self._failed("set", exc)

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        try:
            return super().add(key, value, timeout, version)
        except Exception as exc:  # noqa: BLE001
            self._failed("add", exc)
            return False

    def set_many(self, data, timeout=DEFAULT_TIMEOUT, version=None):
        try:
            return super().set_many(data, timeout, version)
        except Exception as exc:  # noqa: BLE001
            self._failed("set_many", exc)
            return list(data)

    def delete(self, key, version=None):
        try:
            return super().delete(key, version)
        except Exception as exc:  # noqa: BLE001
            self._failed("delete", exc)
            return False

    def delete_many(self, keys, version=None):
        try:
            super().delete_many(keys, version)
        except Exception as exc:  # noqa: BLE001
            self._failed("delete_many", exc)

    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None):
        try:
            return super().touch(key, timeout, version)
        except Exception as exc:  # noqa: BLE001
            self._failed("touch", exc)
            return False

    def clear(self):
        # This process's copies of entries go with them (the other workers' copies are of
        # entries that cannot change, or end at their own deadline).
        try:
            super().clear()
        except Exception as exc:  # noqa: BLE001
            self._failed("clear", exc)
        near_cache.clear()
