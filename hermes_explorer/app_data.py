"""Where the explorer keeps its own data and caches, read from two environment variables.

``DATABASE_URL`` names the app's own database (accounts, audit, tokens, summaries…): unset, a
SQLite file in the data directory; ``postgresql://…`` lets several app servers share it.  The
state.db stays on its own read-only backend whatever this says.

``CACHE_URL`` names the cache every worker shares (nothing in it is needed for correctness):
unset, a file cache in the data directory; ``redis://`` (``rediss://``, ``unix://``) lets
several hosts share it.
"""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

POSTGRESQL = "django.db.backends.postgresql"
SQLITE = "django.db.backends.sqlite3"
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")

# Seconds a PostgreSQL connection is kept between requests, checked before reuse: sign-in,
# audit and summaries then skip a connection set-up (a few ms over TCP) per request.
DEFAULT_CONN_MAX_AGE = 60
# The shared caches: seconds an entry is kept, and at most how many a file cache holds.
SHARED_CACHES = {"default": (300, 5_000), "failures": (86_400, 5_000), "reports": (86_400, 1_000)}


def database(url: str, data_dir: Path, *, conn_max_age: int = DEFAULT_CONN_MAX_AGE) -> dict:
    """The ``default`` alias: SQLite in ``data_dir`` when ``url`` is empty, else its database."""
    if not url:
        # A new data directory is made on first use (its SQLite file cannot be otherwise).
        data_dir.mkdir(parents=True, exist_ok=True)
        config = {"ENGINE": SQLITE, "NAME": data_dir / "explorer.sqlite3"}
    else:
        import dj_database_url

        try:
            config = dj_database_url.parse(
                url, conn_max_age=conn_max_age, conn_health_checks=conn_max_age > 0
            )
        except (ValueError, KeyError) as exc:
            raise ImproperlyConfigured(f"DATABASE_URL is not a database URL: {exc}") from None
    engine = config.get("ENGINE")
    if engine == SQLITE:
        config.setdefault("OPTIONS", {}).update({"transaction_mode": "IMMEDIATE", "timeout": 10})
        config["CONN_MAX_AGE"] = 0
        config["CONN_HEALTH_CHECKS"] = False
    elif engine != POSTGRESQL:
        raise ImproperlyConfigured(
            f"DATABASE_URL: the explorer runs on SQLite or PostgreSQL, not {engine}."
        )
    return config


def caches(url: str, data_dir: Path) -> dict:
    """``CACHES``: a file cache per host when ``url`` is empty, else Redis for every alias;
    ``template_fragments`` (HTML of filter forms, keyed by everything it shows) always stays
    in each process's memory."""
    fragments = {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "TIMEOUT": 3_600,
        "OPTIONS": {"MAX_ENTRIES": 2_000},
    }
    if url and not url.startswith(REDIS_SCHEMES):
        raise ImproperlyConfigured("CACHE_URL: only redis://, rediss:// or unix:// URLs are read.")
    # django-redis, with an unreachable Redis read as a miss (IGNORE_EXCEPTIONS: nothing the
    # explorer needs for correctness is only in the cache) and short socket timeouts. Redis
    # evicts by its own policy (maxmemory-policy); Django's MAX_ENTRIES does not apply.
    redis = {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": url,
        "OPTIONS": {
            "IGNORE_EXCEPTIONS": True,
            "SOCKET_CONNECT_TIMEOUT": 0.5,
            "SOCKET_TIMEOUT": 0.5,
        },
    }
    shared = {
        alias: {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": data_dir / "cache" / alias,
            "TIMEOUT": timeout,
            "OPTIONS": {"MAX_ENTRIES": entries},
        }
        if not url
        else {
            **redis,
            "TIMEOUT": timeout,
            "KEY_PREFIX": "hermes-explorer" + ("" if alias == "default" else f"-{alias}"),
        }
        for alias, (timeout, entries) in SHARED_CACHES.items()
    }
    return {"template_fragments": fragments, **shared}
