"""Hermes's PostgreSQL layout as fixtures: the DDL, the loader and the test servers.

Every store loaded into PostgreSQL must say what its ``state.db`` says (same rows, text
encoded without NUL as Hermes does), search through ``search_vector``, signal writes through
``state_change_revision``, refuse writes to the SELECT-only role, and stream to a standby.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_fixtures.ddl import SHAPES
from hermes_fixtures.ddl import postgres as pg_ddl
from hermes_fixtures.demo import build_demo_db
from hermes_fixtures.postgres import (
    BYTES_MARKER,
    JSON_MARKER,
    SQLITE_JSON_MARKER,
    decode_text,
    encode_text,
)
from tests.builders import StateDB
from tests.hermes_pg import hermes_pg  # noqa: F401


def connect(url: str, schema: str) -> psycopg.Connection:
    conn = psycopg.connect(url, autocommit=True)
    conn.execute(f"SET search_path TO {schema}, pg_catalog")
    return conn


def pg_columns(conn: psycopg.Connection, table: str) -> list[str]:
    rows = conn.execute(
        "SELECT column_name FROM information_schema.columns"
        " WHERE table_schema = current_schema() AND table_name = %s ORDER BY ordinal_position",
        [table],
    )
    return [r[0] for r in rows]


def assert_same_rows(sqlite_path, url: str, schema: str) -> None:
    """Every table of the file has the same rows in ``schema``, column by column (text
    decoded); columns the file lacks are NULL or their default there."""
    src = sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True)
    src.text_factory = lambda raw: raw.decode("utf-8", "replace")
    tables = {r[0] for r in src.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    keys = {"messages": "id", "sessions": "id", "system_prompts": "hash", "state_meta": "key"}
    with connect(url, schema) as pg:
        for table in ("sessions", "messages", "session_model_usage", "system_prompts"):
            if table not in tables:
                assert pg.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0
                continue
            lite_cols = [r[1] for r in src.execute(f"PRAGMA table_info({table})")]
            shared = [c for c in lite_cols if c in pg_columns(pg, table)]
            order = keys.get(table, ", ".join(shared[:6]))
            select = f"SELECT {', '.join(shared)} FROM {table} ORDER BY {order}"
            lite = src.execute(select).fetchall()
            stored = pg.execute(select).fetchall()
            assert len(stored) == len(lite) > 0, table
            for want, got in zip(lite, stored, strict=True):
                assert tuple(decode_text(v) for v in got) == want, (table, want[0])
    src.close()


@pytest.mark.parametrize("shape", SHAPES)
def test_nasty_stores_keep_their_rows(hermes_pg, shape):  # noqa: F811
    facts = hermes_pg.stores[shape]
    assert_same_rows(facts.path, hermes_pg.url, hermes_pg.schema(shape))
    with connect(hermes_pg.url, hermes_pg.schema(shape)) as pg:
        lite = sqlite3.connect(facts.path).execute("SELECT version FROM schema_version")
        assert pg.execute("SELECT version FROM schema_version").fetchall() == lite.fetchall()
        assert pg.execute("SELECT version FROM postgres_schema_version").fetchone()[0] == (
            pg_ddl.POSTGRES_SCHEMA_VERSION
        )
        # What the PostgreSQL layout lacks is dropped, what the file lacks is NULL (or default).
        assert "message_uid" not in pg_columns(pg, "messages")
        assert "auto_archived" not in pg_columns(pg, "sessions")
        assert pg.execute("SELECT to_regclass('session_daily_usage')").fetchone()[0] is None
        if shape == "doc":
            nulls = pg.execute(
                "SELECT count(*) FROM messages WHERE tool_call_id IS NULL AND active = 1"
            ).fetchone()[0]
            assert nulls == pg.execute("SELECT count(*) FROM messages").fetchone()[0]


@pytest.mark.parametrize("shape", SHAPES)
def test_demo_stores_load_in_every_shape(hermes_pg, tmp_path, shape):  # noqa: F811
    path = tmp_path / "demo.db"
    made = build_demo_db(path, sessions=25, messages=900, seed=7, shape=shape)
    counts = hermes_pg.load(path, f"demo_{shape}")
    assert counts["messages"] == made["messages"] and counts["sessions"] == made["sessions"]
    assert_same_rows(path, hermes_pg.url, f"demo_{shape}")


def test_multimodal_content_is_stored_under_the_json_marker(hermes_pg):  # noqa: F811
    facts = hermes_pg.stores["current"]
    lite = sqlite3.connect(facts.path).execute(
        "SELECT content FROM messages WHERE id = ?", [facts.multimodal_message_id]
    )
    original = lite.fetchone()[0]
    with connect(hermes_pg.url, hermes_pg.schema("current")) as pg:
        stored = pg.execute(
            "SELECT content FROM messages WHERE id = %s", [facts.multimodal_message_id]
        ).fetchone()[0]
    assert original.startswith(SQLITE_JSON_MARKER)
    assert stored == JSON_MARKER + original[len(SQLITE_JSON_MARKER) :]


def test_nul_bytes_and_markers_round_trip_by_the_encoding_rules(hermes_pg, tmp_path):  # noqa: F811
    db = StateDB.create(tmp_path / "odd.db", "current")
    db.session("odd")
    values = {
        "nul": "before\x00after",
        "bytes": b"\x00\xffraw",
        "marker": JSON_MARKER + '["looks structured"]',
        "bytes_marker": BYTES_MARKER + "AAAA",
        "json_string": SQLITE_JSON_MARKER + '"just a string"',
        "bad_json": SQLITE_JSON_MARKER + "{not json",
        "plain": "plain \x01 text",
    }
    ids = {name: db.message("odd", "user", value) for name, value in values.items()}
    db.close()
    hermes_pg.load(tmp_path / "odd.db", "odd_content")
    with connect(hermes_pg.url, "odd_content") as pg:
        stored = dict(pg.execute("SELECT id, content FROM messages").fetchall())
    got = {name: stored[i] for name, i in ids.items()}
    assert got["nul"] == JSON_MARKER + '"before\\u0000after"'
    assert got["bytes"] == BYTES_MARKER + "AP9yYXc="
    assert got["marker"].startswith(JSON_MARKER + '"\\u0001json:')
    assert got["plain"] == values["plain"]
    assert all("\x00" not in v for v in got.values())
    assert {name: decode_text(v) for name, v in got.items()} == values


@given(st.one_of(st.text(), st.binary()))
def test_encoding_is_nul_free_and_reversible(value):
    encoded = encode_text(value)
    assert "\x00" not in encoded
    assert decode_text(encoded) == value


def test_search_vector_finds_words_and_long_rows_are_indexed_apart(hermes_pg):  # noqa: F811
    facts = hermes_pg.stores["current"]
    with connect(hermes_pg.url, hermes_pg.schema("current")) as pg:
        pg.execute("SET enable_seqscan = off")
        query = "SELECT id FROM messages WHERE search_vector @@ to_tsquery('simple', %s)"
        plan = "\n".join(r[0] for r in pg.execute("EXPLAIN " + query, [facts.rare_word]))
        assert "idx_messages_search_vector" in plan
        assert [r[0] for r in pg.execute(query, [facts.rare_word])] == [facts.rare_message_id]
        # A word past the first 8,192 characters is not in the vector; the long row is found
        # through the partial index over rows longer than the vector covers.
        assert pg.execute(query, [facts.megabyte_tail_word]).fetchall() == []
        long_rows = pg.execute(
            "SELECT id FROM messages WHERE (length(content) > 8192 OR length(tool_name) > 256"
            " OR length(tool_calls) > 4096) AND content ILIKE %s",
            [f"%{facts.megabyte_tail_word}%"],
        ).fetchall()
        assert long_rows == [(facts.megabyte_message_id,)]


def test_state_change_revision_moves_on_writes(hermes_pg):  # noqa: F811
    facts = hermes_pg.stores["current"]
    with (
        connect(hermes_pg.url, hermes_pg.schema("current")) as pg,
        pg.transaction(force_rollback=True),
    ):

        def revision() -> int:
            return pg.execute("SELECT revision FROM state_change_revision").fetchone()[0]

        before = revision()
        pg.execute("UPDATE sessions SET title = title WHERE id = %s", [facts.rare_session_id])
        assert revision() == before + 1
        new_id = pg.execute(
            "INSERT INTO messages (session_id, role, content, timestamp)"
            " VALUES (%s, 'user', 'hello', 1) RETURNING id",
            [facts.rare_session_id],
        ).fetchone()[0]
        assert revision() == before + 2
        # The identity column goes on after the loaded ids.
        assert (
            new_id
            > pg.execute("SELECT max(id) FROM messages WHERE id <> %s", [new_id]).fetchone()[0]
        )
        pg.execute("SELECT 1 FROM state_meta")  # reads do not move it
        assert revision() == before + 2


def test_the_reader_role_reads_but_cannot_write(hermes_pg):  # noqa: F811
    with connect(hermes_pg.reader_url, hermes_pg.schema("legacy")) as pg:
        assert pg.execute("SELECT count(*) FROM messages").fetchone()[0] > 0
        assert pg.execute("SHOW default_transaction_read_only").fetchone()[0] == "on"
        insert = "INSERT INTO state_meta (key, value) VALUES ('k', 'v')"
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            pg.execute(insert)
        # Even in a read-write transaction it holds no privilege to write.
        pg.execute("SET default_transaction_read_only = off")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            pg.execute(insert)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            pg.execute("CREATE TABLE sneaky (x int)")


def test_the_standby_answers_with_the_primarys_rows(hermes_pg, tmp_path):  # noqa: F811
    db = StateDB.create(tmp_path / "probe.db", "current")
    db.session("probe-1", title="before the standby")
    db.close()
    hermes_pg.load(tmp_path / "probe.db", "standby_probe")
    standby = hermes_pg.standby()
    with connect(hermes_pg.url, "standby_probe") as primary:
        primary.execute(
            "INSERT INTO sessions (id, source, started_at, title) VALUES"
            " ('probe-2', 'cli', 2, 'written on the primary')"
        )
    standby.catch_up()
    reader_url = hermes_pg.reader_url.replace(f":{hermes_pg.server.port}/", f":{standby.port}/")
    with connect(reader_url, "standby_probe") as replica:
        assert replica.execute("SELECT pg_is_in_recovery()").fetchone()[0] is True
        titles = replica.execute("SELECT id, title FROM sessions ORDER BY id").fetchall()
        assert titles == [("probe-1", "before the standby"), ("probe-2", "written on the primary")]


def test_the_command_line_loads_and_says_why_it_cannot(hermes_pg, tmp_path):  # noqa: F811
    path = tmp_path / "cli.db"
    build_demo_db(path, sessions=8, messages=200, seed=3, shape="legacy")
    command = [sys.executable, "-m", "hermes_fixtures.postgres", str(path), hermes_pg.url]
    done = subprocess.run([*command, "cli_probe"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "cli_probe: schema_version 1, sessions 8, messages 200" in done.stdout
    again = subprocess.run([*command, "cli_probe"], capture_output=True, text=True)
    assert again.returncode == 1 and "already exists" in again.stderr
    replaced = subprocess.run([*command, "cli_probe", "--replace"], capture_output=True, text=True)
    assert replaced.returncode == 0, replaced.stderr
