"""pytest plugin: run the tests against a real PostgreSQL (app database) and Redis (cache).

``pytest -p tests.real_servers -m appdb`` (the tests marked as touching the app database or the
cache) starts a throwaway PostgreSQL and Redis (:mod:`tests.servers`) before Django reads its
settings, points ``DATABASE_URL`` and ``CACHE_URL`` at them, and stops them at the end.  Without
``-p`` nothing here runs: the default run is SQLite and the file cache.  Under pytest-xdist
(``-n 2``) each worker starts a pair of its own (no two workers share a cache) and the
controller, which runs no test, starts none.
"""

from __future__ import annotations

import os

import pytest

from tests import servers

_started: list = []


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    why = servers.available()
    if why:
        raise pytest.UsageError(f"-p tests.real_servers: {why}")
    if getattr(early_config.known_args_namespace, "numprocesses", None) and not os.environ.get(
        "PYTEST_XDIST_WORKER"
    ):
        return  # the xdist controller: its workers start their own
    pg = servers.PostgresServer()
    _started.append(pg)
    pg.start()
    redis = servers.RedisServer()
    _started.append(redis)
    redis.start()
    os.environ["DATABASE_URL"] = pg.url
    os.environ["CACHE_URL"] = redis.url


def pytest_report_header(config):
    if getattr(config.option, "numprocesses", None):
        return ["app database and cache: a real PostgreSQL and Redis in each worker"]
    return [
        f"app database: {os.environ.get('DATABASE_URL', 'SQLite')}",
        f"cache: {os.environ.get('CACHE_URL', 'file cache')}",
    ]


def pytest_unconfigure(config):
    while _started:
        _started.pop().stop()
