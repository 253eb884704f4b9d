"""Exports of a PostgreSQL profile read ahead: each chunk's statement is sent before the
previous chunk is written (``Pipelined``), and that changes nothing a reader gets — the same
rows as the file's across many chunk boundaries, an export out of time stops, an abandoned one
leaves the connection as it found it."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import socket

import pytest
from django.db import connections

from hermes_explorer import stores
from hermes_explorer.hermes_db.deadline import QueryTimeout
from hermes_explorer.hermes_pg import base as pg_base
from sessions_app import exports
from tests.hermes_pg import hermes_pg  # noqa: F401
from tests.roles_helpers import client_for
from tests.test_pg_door import serve  # noqa: F401

pytestmark = pytest.mark.django_db(databases="__all__")
csv.field_size_limit(1 << 30)  # the megabyte tool output


def body(response) -> str:
    assert response.status_code == 200, response.status_code
    return b"".join(response.streaming_content).decode()


@pytest.fixture
def both(hermes_pg, serve):  # noqa: F811
    facts = hermes_pg.stores["current"]
    serve(file=facts.path, team=f"{hermes_pg.reader_url}?schema={hermes_pg.schema('current')}")
    return facts


def _team_connection():
    (team,) = [s for s in stores.all_stores() if s.name == "team"]
    return connections[team.alias]


@pytest.mark.parametrize(
    "url",
    [
        "/messages/?_export=csv&sort=id",
        "/messages/?_export=json&sort=-timestamp&show=hidden",
        "/messages/?_export=jsonl&role=tool",
        "/sessions/?_export=csv",
        "/sessions/?_export=json&sort=source",
    ],
)
def test_an_export_read_ahead_crosses_chunks_as_the_file_does(both, monkeypatch, url):
    """Three rows a chunk: every row, once, in order, as the file's export has them."""
    monkeypatch.setattr(exports.chunks, "EXPORT_CHUNK_ROWS", 3)
    analyst = client_for("analyst")
    on_file, on_schema = (body(analyst.get(f"/p/{p}{url}")) for p in ("file", "team"))
    if "_export=csv" in url:
        on_file, on_schema = (list(csv.reader(io.StringIO(t))) for t in (on_file, on_schema))
        # Each row names its profile: the one column that differs.
        assert on_schema[0][0] == "profile"
        on_file, on_schema = ([row[1:] for row in rows] for rows in (on_file, on_schema))
    else:
        parsed = (
            (json.loads(t) for t in (on_file, on_schema))
            if "jsonl" not in url
            else ([json.loads(line) for line in t.splitlines()] for t in (on_file, on_schema))
        )
        on_file, on_schema = ([dict(r, profile=None) for r in rows] for rows in parsed)
    assert len(on_schema) > 3 and on_schema == on_file


def test_an_export_out_of_time_stops_and_the_profile_answers_next(both, monkeypatch, settings):
    """A chunk's statement past its deadline ends the download (the server cancels it) and
    the next request on the profile is answered: no pipeline is left open."""
    monkeypatch.setattr(exports.chunks, "EXPORT_CHUNK_ROWS", 3)
    settings.HERMES_EXPORT_CHUNK_TIMEOUT = 0.3
    sent = pg_base.Pipelined.send_sql
    calls = []

    def slow_after_the_first(self, sql, params):
        calls.append(sql)
        if len(calls) > 1:
            sql = f"SELECT * FROM ({sql}) AS chunk WHERE (SELECT true FROM pg_sleep(2))"
        return sent(self, sql, params)

    monkeypatch.setattr(pg_base.Pipelined, "send_sql", slow_after_the_first)
    analyst = client_for("analyst")
    response = analyst.get("/p/team/messages/?_export=csv&sort=id")
    assert response.status_code == 200
    with pytest.raises(QueryTimeout):
        b"".join(response.streaming_content)
    response.close()
    monkeypatch.setattr(pg_base.Pipelined, "send_sql", sent)
    assert analyst.get("/p/team/sessions/").status_code == 200
    assert len(body(analyst.get("/p/team/sessions/?_export=csv")).splitlines()) > 3


def test_an_abandoned_export_holds_nothing_on_the_pages_connection(both, monkeypatch):
    """A download reads ahead on a connection of its own: while one is left unread, and
    after it is closed (the reader went away), the profile's pages read as before, and the
    download's connection is closed."""
    monkeypatch.setattr(exports.chunks, "EXPORT_CHUNK_ROWS", 3)
    opened = []
    pipelined = pg_base.DatabaseWrapper.pipelined

    def spy(self):
        with pipelined(self) as pipe:
            opened.append(pipe.conn)
            yield pipe

    monkeypatch.setattr(pg_base.DatabaseWrapper, "pipelined", contextlib.contextmanager(spy))
    analyst = client_for("analyst")
    expected = body(analyst.get("/p/team/messages/?_export=csv&sort=id"))
    response = analyst.get("/p/team/messages/?_export=json&sort=id")
    first = next(iter(response.streaming_content))
    assert first.startswith(b"[")
    assert opened[-1].info.pipeline_status.name == "ON"
    pages = _team_connection().connection
    assert pages is not opened[-1] and pages.info.pipeline_status.name == "OFF"
    assert body(analyst.get("/p/team/messages/?_export=csv&sort=id")) == expected
    response.close()
    assert opened[-1].closed and all(conn.closed for conn in opened)
    assert analyst.get("/p/team/messages/").status_code == 200


def test_a_download_whose_connection_fails_is_unavailable_not_an_error(both, monkeypatch):
    """The server refuses the download's own connection (gone since the page's): the download
    answers as any page of an unreachable profile does, never a 500."""
    analyst = client_for("analyst")
    assert analyst.get("/p/team/sessions/").status_code == 200

    real = pg_base.pg_base.DatabaseWrapper.get_new_connection
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]

    def refused(self, params):
        return real(self, dict(params, port=closed))

    monkeypatch.setattr(pg_base.pg_base.DatabaseWrapper, "get_new_connection", refused)
    response = analyst.get("/p/team/messages/?_export=csv&sort=id")
    assert response.status_code == 503
    assert b"cannot be reached" in response.content


def test_a_downloads_read_ahead_statements_count_in_the_metrics(both, monkeypatch):
    """``/metrics`` counts the statements a download sends on its own connection, under the
    profile's alias, as it counts the pages' statements."""
    from prometheus_client import REGISTRY

    monkeypatch.setattr(exports.chunks, "EXPORT_CHUNK_ROWS", 3)
    alias = _team_connection().alias

    def sent() -> tuple[float, float]:
        labels = {"alias": alias}
        return (
            REGISTRY.get_sample_value("hermes_explorer_db_queries_total", labels) or 0.0,
            REGISTRY.get_sample_value("hermes_explorer_db_query_seconds_total", labels) or 0.0,
        )

    before = sent()
    rows = list(
        csv.reader(
            io.StringIO(body(client_for("analyst").get("/p/team/messages/?_export=csv&sort=id")))
        )
    )
    after = sent()
    chunks = -(-(len(rows) - 1) // 3)  # the header aside, three rows a chunk
    assert after[0] - before[0] >= chunks > 3 and after[1] > before[1]
