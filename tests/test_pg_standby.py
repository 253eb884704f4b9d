"""A profile read from a streaming hot standby of the PostgreSQL server Hermes writes to.

Against the real primary of ``tests/hermes_pg.py`` and its standby (``pg_basebackup -R``,
streaming): the pages read the standby as they read the primary, and every page, ``/healthz``
and ``/metrics`` say how far behind the standby is, and when it has stopped replaying.
"""

from __future__ import annotations

import re

import psycopg
import pytest

from tests import servers
from tests.hermes_pg import READER
from tests.hermes_pg import hermes_pg as hermes_pg_server  # noqa: F401
from tests.test_pg_door import (
    PAGE_FAMILIES,
    at,
    serve,  # noqa: F401
)

pytestmark = pytest.mark.django_db(databases="__all__")

SCHEMA = "hermes_current"
NOTE = b"Read from a standby server"
STOPPED = b"stopped replaying"
# The two profiles: names no fixture row holds.
ORIGIN, REPLICA = "pg-primary", "pg-standby"
# What differs between two answers by the clock alone: a query's time and an export's moment.
TIMING = re.compile(rb'"query_ms": [0-9.e-]+|\*\*Exported:\*\* \S+')


@pytest.fixture
def standby(hermes_pg_server):  # noqa: F811
    return hermes_pg_server.standby()


def reader(url: str) -> str:
    return url.replace(f"//{servers.PG_USER}@", f"//{READER}@", 1)


def commit_on(pg) -> None:
    """Commit a change on the primary (in a schema of its own, dropped again)."""
    with psycopg.connect(pg.url, autocommit=True) as primary:
        primary.execute("DROP SCHEMA IF EXISTS standby_probe CASCADE")
        primary.execute("CREATE SCHEMA standby_probe")
        primary.execute("CREATE TABLE standby_probe.t AS SELECT 1 AS x")
        primary.execute("DROP SCHEMA standby_probe CASCADE")


def body(page) -> bytes:
    return b"".join(page.streaming_content) if page.streaming else page.content


def test_every_page_reads_the_standby_as_it_reads_the_primary(
    hermes_pg_server,  # noqa: F811
    standby,
    serve,  # noqa: F811
    client,
    staff_user,
):
    serve(
        **{
            ORIGIN: at(hermes_pg_server.reader_url, SCHEMA),
            REPLICA: at(reader(standby.url), SCHEMA),
        }
    )
    client.force_login(staff_user)
    sid = hermes_pg_server.stores["current"].session_ids[0]
    answered = 0
    for url in PAGE_FAMILIES:
        pages = {
            name: client.get(url.format(sid=sid).replace("/p/team/", f"/p/{name}/"))
            for name in (ORIGIN, REPLICA)
        }
        statuses = {name: page.status_code for name, page in pages.items()}
        assert statuses[REPLICA] == statuses[ORIGIN], (url, statuses)
        if statuses[ORIGIN] == 200:
            answered += 1
            shown = body(pages[REPLICA])
            # Every whole page says so (a followed session's new rows are a fragment).
            assert NOTE in shown or b"<html" not in shown, url
    assert answered >= 6
    # The same rows, figures and export bytes from both servers.
    for url in (
        "sessions/?_export=json",
        "sessions/?_export=csv&sort=-message_count",
        "messages/?_export=csv",
        f"sessions/{sid}/export.md",
        "state/sessions.json?_sort=source",
        "state/messages.csv",
    ):
        # Each names its profile, how long its query took and when it was made: the rest is
        # the same.
        primary, copy = (
            TIMING.sub(b"", body(client.get(f"/p/{name}/{url}")).replace(name.encode(), b"<p>"))
            for name in (ORIGIN, REPLICA)
        )
        assert copy == primary and copy, url


def test_the_standbys_lag_is_a_note_on_pages_and_in_healthz_and_metrics(
    hermes_pg_server,  # noqa: F811
    standby,
    serve,  # noqa: F811
    client,
    staff_user,
):
    # A commit on the primary, replayed: the standby is a moment behind at most.
    commit_on(hermes_pg_server)
    hermes_pg_server.standby()
    serve(
        **{
            ORIGIN: at(hermes_pg_server.reader_url, SCHEMA),
            REPLICA: at(reader(standby.url), SCHEMA),
        }
    )
    client.force_login(staff_user)
    page = client.get(f"/p/{REPLICA}/sessions/")
    assert page.status_code == 200 and NOTE in page.content and STOPPED not in page.content
    assert NOTE not in client.get(f"/p/{ORIGIN}/sessions/").content
    health = {s["profile"]: s for s in client.get("/healthz").json()["stores"]}
    assert "standby" not in health[ORIGIN]
    lag = health[REPLICA]["standby"]
    assert lag["replaying"] is True and 0 <= lag["lag_seconds"] < 5, lag
    metrics = client.get("/metrics").content.decode()
    assert f'hermes_explorer_store_standby_replaying{{profile="{REPLICA}"}} 1.0' in metrics
    assert f'hermes_explorer_store_standby_lag_seconds{{profile="{REPLICA}"}}' in metrics
    assert f'hermes_explorer_store_standby_replaying{{profile="{ORIGIN}"}}' not in metrics


def test_a_standby_that_stops_replaying_says_so(
    hermes_pg_server,  # noqa: F811
    standby,
    serve,  # noqa: F811
    client,
    staff_user,
):
    with psycopg.connect(standby.url, autocommit=True) as replica:
        replica.execute("SELECT pg_wal_replay_pause()")
        try:
            # The primary commits what the standby holds back.
            commit_on(hermes_pg_server)
            serve(**{REPLICA: at(reader(standby.url), SCHEMA)})
            client.force_login(staff_user)
            page = client.get(f"/p/{REPLICA}/sessions/")
            assert page.status_code == 200 and STOPPED in page.content
            lag = client.get("/healthz").json()["stores"][0]["standby"]
            assert lag["replaying"] is False, lag
            metrics = client.get("/metrics").content.decode()
            assert f'hermes_explorer_store_standby_replaying{{profile="{REPLICA}"}} 0.0' in metrics
        finally:
            replica.execute("SELECT pg_wal_replay_resume()")
    hermes_pg_server.standby()  # caught up again for the next test
