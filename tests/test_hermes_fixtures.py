"""The project's own Hermes DDL (shapes, release layouts, random layouts), the demo generator
and the test builders.

Plain sqlite3: no Django database is needed (``pytest -p no:django`` works).
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from hermes_fixtures.ddl import (
    RELEASE_LAYOUTS,
    SCHEMA_VERSIONS,
    SHAPES,
    TOOL_FTS_PREFIX_CHARS,
    create_schema,
    get_layout,
    plant_unloadable_cjk_table,
    random_layout,
)
from hermes_fixtures.demo import RARE_TOKENS, build_demo_db
from tests.builders import (
    NASTY_NOW,
    StateDB,
    build_nasty_db,
    insert_columns,
    table_names,
    tool_call,
)

DEMO_NOW = 1_760_000_000.0


def calls_array(column: str) -> str:
    """SQL: the column when it holds a JSON list, else NULL.

    Nested CASE because SQLite may evaluate both sides of an AND, and json_type() raises on
    malformed JSON, which the fixtures contain on purpose."""
    return (
        f"CASE WHEN json_valid({column}) THEN"
        f" CASE WHEN json_type({column}) = 'array' THEN {column} END END"
    )


def open_ro(path: str | Path) -> sqlite3.Connection:
    """Open the way the explorer does: read-only URI, query_only."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    conn.execute("PRAGMA query_only = 1")
    return conn


def index_names(conn: sqlite3.Connection) -> set[str]:
    return {
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
        )
    }


def fts_ids(conn: sqlite3.Connection, query: str, table: str = "messages_fts") -> list[int]:
    sql = f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY rowid"
    return [row[0] for row in conn.execute(sql, (query,))]


@pytest.fixture
def db_of(tmp_path):
    made: list[StateDB] = []

    def make(shape: str) -> StateDB:
        db = StateDB.create(tmp_path / f"{shape}.db", shape)
        made.append(db)
        return db

    yield make
    for db in made:
        try:
            db.close()
        except sqlite3.ProgrammingError:
            pass  # already closed by the test


# --- Shapes ---------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
def test_each_shape_builds_with_its_schema_version(tmp_path, shape):
    conn = sqlite3.connect(tmp_path / "state.db")
    create_schema(conn, shape)
    conn.close()

    ro = open_ro(tmp_path / "state.db")
    assert ro.execute("SELECT version FROM schema_version").fetchall() == [
        (SCHEMA_VERSIONS[shape],)
    ]
    assert {"sessions", "messages", "messages_fts", "schema_version"} <= table_names(ro)
    assert ro.execute("PRAGMA quick_check").fetchone() == ("ok",)


def test_unknown_shape_is_refused():
    for name in ("future", "random-", "random-x", "v99"):
        with pytest.raises(ValueError):
            create_schema(sqlite3.connect(":memory:"), name)


def test_doc_shape_has_only_the_documented_columns(tmp_path):
    conn = sqlite3.connect(tmp_path / "doc.db")
    create_schema(conn, "doc")

    assert insert_columns(conn, "sessions") == {
        "id",
        "source",
        "user_id",
        "model",
        "title",
        "started_at",
        "ended_at",
        "message_count",
        "input_tokens",
        "output_tokens",
        "estimated_cost_usd",
    }
    assert insert_columns(conn, "messages") == {
        "id",
        "session_id",
        "role",
        "content",
        "tool_name",
        "tool_calls",
        "timestamp",
        "token_count",
        "reasoning",
    }
    tables = table_names(conn)
    assert "session_model_usage" not in tables
    assert "messages_fts_trigram" not in tables
    assert "messages_fts_src" not in tables
    assert index_names(conn) == {
        "idx_sessions_started_at",
        "idx_sessions_source",
        "idx_messages_session_timestamp",
    }
    # Inline FTS: a single column.
    assert insert_columns(conn, "messages_fts") == {"content"}


def test_legacy_shape_has_billing_and_usage_but_no_newer_columns(tmp_path):
    conn = sqlite3.connect(tmp_path / "legacy.db")
    create_schema(conn, "legacy")

    sessions = insert_columns(conn, "sessions")
    assert {
        "tool_call_count",
        "api_call_count",
        "cache_read_tokens",
        "cache_write_tokens",
        "reasoning_tokens",
        "billing_provider",
        "billing_base_url",
        "billing_mode",
        "actual_cost_usd",
        "cost_status",
        "cost_source",
        "pricing_version",
        "parent_session_id",
        "end_reason",
        "model_config",
        "system_prompt",
    } <= sessions
    assert not {"title_source", "last_activity_at", "archived", "session_key"} & sessions
    messages = insert_columns(conn, "messages")
    assert {"tool_call_id", "finish_reason", "reasoning"} <= messages
    assert not {"active", "compacted", "display_kind", "_compressed_summary"} & messages
    tables = table_names(conn)
    assert "session_model_usage" in tables
    assert not {"session_daily_usage", "state_meta", "messages_fts_trigram"} & tables
    assert {"idx_sessions_parent", "idx_sessions_source_id", "idx_messages_session_id"} <= (
        index_names(conn)
    )
    assert insert_columns(conn, "messages_fts") == {"content"}


def test_current_shape_has_every_documented_column_table_and_index(tmp_path):
    conn = sqlite3.connect(tmp_path / "current.db")
    create_schema(conn, "current")

    assert {
        "title_source",
        "last_activity_at",
        "archived",
        "auto_archived",
        "pinned",
        "hidden",
        "profile_name",
        "created_source",
        "session_key",
        "chat_id",
        "chat_type",
        "thread_id",
        "display_name",
        "origin_json",
        "cwd",
        "git_branch",
        "git_repo_root",
        "system_prompt_hash",
        "tool_call_count",
    } <= insert_columns(conn, "sessions")
    assert {
        "reasoning_content",
        "reasoning_details",
        "finish_reason",
        "active",
        "compacted",
        "_compressed_summary",
        "display_kind",
        "api_content",
        "display_metadata",
        "message_uid",
    } <= insert_columns(conn, "messages")
    assert {
        "system_prompts",
        "session_model_usage",
        "session_daily_usage",
        "state_meta",
        "messages_fts_src",
        "messages_fts_trigram",
        "messages_fts_cjk",
    } <= table_names(conn)
    assert insert_columns(conn, "messages_fts") == {"content", "tool_name", "tool_calls"}
    indexes = {
        row[0]: row[1]
        for row in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index'")
    }
    assert "COALESCE(last_activity_at, started_at)" in indexes["idx_sessions_last_activity"]
    assert "WHERE role = 'assistant'" in indexes["idx_messages_tool_calls"]
    assert "(session_id, active, timestamp)" in indexes["idx_messages_session_active_timestamp"]
    assert "idx_sessions_route" in indexes and "idx_sessions_session_key" in indexes


def test_new_rows_get_the_defaults_of_the_current_shape(db_of):
    db = db_of("current")
    db.session("s1")
    message_id = db.message("s1", "user", "hi")
    row = db.conn.execute(
        "SELECT active, compacted, _compressed_summary FROM messages WHERE id = ?", (message_id,)
    ).fetchone()
    assert row == (1, 0, 0)
    flags = db.conn.execute("SELECT archived, pinned, hidden FROM sessions").fetchone()
    assert flags == (0, 0, 0)


# --- Release layouts and random layouts -------------------------------------------------

FIRST_SESSIONS = {
    "id", "source", "user_id", "model", "model_config", "system_prompt", "parent_session_id",
    "started_at", "ended_at", "end_reason", "message_count", "tool_call_count",
    "input_tokens", "output_tokens",
}  # fmt: skip
FIRST_MESSAGES = {
    "id", "session_id", "role", "content", "tool_call_id", "tool_calls", "tool_name",
    "timestamp", "token_count",
}  # fmt: skip


def test_the_first_release_layout_has_only_its_columns(db_of):
    db = db_of("v1")
    assert insert_columns(db.conn, "sessions") == FIRST_SESSIONS
    assert insert_columns(db.conn, "messages") == FIRST_MESSAGES
    assert db.conn.execute("SELECT version FROM schema_version").fetchall() == [(1,)]
    assert table_names(db.conn) >= {"messages_fts"}
    assert not table_names(db.conn) & {"session_model_usage", "state_meta", "system_prompts"}
    (fts_sql,) = db.conn.execute(
        "SELECT sql FROM sqlite_master WHERE name = 'messages_fts'"
    ).fetchone()
    assert "content=messages" in fts_sql  # read back from messages.content


def test_the_v5_layout_has_titles_and_billing_but_no_reasoning(db_of):
    db = db_of("v5")
    sessions, messages = insert_columns(db.conn, "sessions"), insert_columns(db.conn, "messages")
    assert {"title", "estimated_cost_usd", "cost_status", "reasoning_tokens"} <= sessions
    assert messages == FIRST_MESSAGES | {"finish_reason"}
    assert not table_names(db.conn) & {"session_model_usage", "state_meta", "messages_fts_trigram"}
    assert db.conn.execute("SELECT version FROM schema_version").fetchall() == [(5,)]


def test_the_v20_layout_has_usage_rows_without_a_task(db_of):
    db = db_of("v20")
    usage = insert_columns(db.conn, "session_model_usage")
    assert "task" not in usage and {"model", "billing_mode", "input_tokens"} <= usage
    assert {"reasoning", "reasoning_content", "codex_message_items"} <= insert_columns(
        db.conn, "messages"
    )
    db.model_usage("s1", "m1", task="compression", input_tokens=5)  # task silently dropped
    assert db.conn.execute("SELECT model, input_tokens FROM session_model_usage").fetchall() == [
        ("m1", 5)
    ]


LAYOUT_SAMPLES = [*RELEASE_LAYOUTS, *(f"random-{seed}" for seed in range(1, 13))]


@pytest.mark.parametrize("name", LAYOUT_SAMPLES)
def test_every_layout_keeps_its_fts_in_sync(db_of, name):
    layout = get_layout(name)
    db = db_of(name)
    db.session("s1")
    first = db.message("s1", "user", "the quokkafjord notes")
    second = db.message("s1", "assistant", "unrelated")
    db.commit()
    tables = table_names(db.conn)
    assert ("messages_fts" in tables) == (layout.fts is not None)
    assert ("messages_fts_trigram" in tables) == layout.trigram
    if layout.fts is None:
        return
    assert fts_ids(db.conn, "quokkafjord") == [first]
    db.conn.execute("UPDATE messages SET content = 'now quokkafjord' WHERE id = ?", (second,))
    db.conn.execute("DELETE FROM messages WHERE id = ?", (first,))
    assert fts_ids(db.conn, "quokkafjord") == [second]
    if layout.trigram:
        assert fts_ids(db.conn, "kkafj", "messages_fts_trigram") == [second]


def test_random_layouts_keep_the_first_release_and_say_what_they_left_out(tmp_path):
    for seed in range(1, 41):
        layout = random_layout(seed)
        assert layout == random_layout(seed)  # deterministic per seed
        conn = sqlite3.connect(tmp_path / f"r{seed}.db")
        create_schema(conn, layout)
        for table, first in (("sessions", FIRST_SESSIONS), ("messages", FIRST_MESSAGES)):
            present = insert_columns(conn, table)
            assert first <= present
            left_out = {r.split(".", 1)[1] for r in layout.removed if r.startswith(f"{table}.")}
            assert not present & left_out
            assert set(layout.columns(table)) == present
        tables = table_names(conn)
        for table in ("session_model_usage", "state_meta", "system_prompts", "schema_version"):
            assert (table in tables) == (table not in layout.removed)
        conn.close()


@pytest.mark.parametrize("name", ["v1", "v5", "v10", "v20", "random-3", "random-7"])
def test_nasty_fixture_builds_on_release_and_random_layouts(tmp_path, name):
    facts = build_nasty_db(tmp_path / "state.db", name, lean=True)
    ro = open_ro(facts.path)
    assert ro.execute("PRAGMA quick_check").fetchone() == ("ok",)
    (count,) = ro.execute("SELECT count(*) FROM messages").fetchone()
    assert count == facts.message_count
    assert facts.big_session_messages == 120


# --- Full-text search ------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
def test_fts_finds_messages_by_rowid_with_snippets(db_of, shape):
    db = db_of(shape)
    db.session("s1", source="telegram")
    hello = db.message("s1", "user", "hello from the harbour")
    call = db.message(
        "s1", "assistant", None, tool_calls=[tool_call("web_search", {"query": "ferries"})]
    )
    result = db.message("s1", "tool", "timetable for the ferries", tool_name="web_search")
    db.commit()

    assert fts_ids(db.conn, "harbour") == [hello]
    assert fts_ids(db.conn, "web_search") == [call, result]  # tool_calls and tool_name
    (snippet,) = db.conn.execute(
        "SELECT snippet(messages_fts, 0, '[', ']', '…', 5) FROM messages_fts"
        " WHERE messages_fts MATCH 'harbour'"
    ).fetchone()
    assert "[harbour]" in snippet
    assert db.conn.execute(
        "SELECT bm25(messages_fts) FROM messages_fts WHERE messages_fts MATCH 'ferries'"
    ).fetchall()


@pytest.mark.parametrize("shape", SHAPES)
def test_fts_follows_updates_and_deletes(db_of, shape):
    db = db_of(shape)
    db.session("s1")
    message_id = db.message("s1", "user", "original wording")
    db.conn.execute("UPDATE messages SET content = 'revised wording' WHERE id = ?", (message_id,))
    assert fts_ids(db.conn, "original") == []
    assert fts_ids(db.conn, "revised") == [message_id]
    db.conn.execute("DELETE FROM messages WHERE id = ?", (message_id,))
    assert fts_ids(db.conn, "revised") == []
    if shape == "current":
        db.conn.execute("INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')")


def test_current_fts_indexes_only_the_prefix_of_tool_rows(db_of):
    db = db_of("current")
    db.session("s1")
    padding = "x" * TOOL_FTS_PREFIX_CHARS
    tool = db.message("s1", "tool", f"early {padding} late")
    user = db.message("s1", "user", f"early {padding} late")
    assert fts_ids(db.conn, "early") == [tool, user]
    assert fts_ids(db.conn, "late") == [user]


def test_trigram_excludes_tool_rows_and_cron_and_subagent_sessions(db_of):
    db = db_of("current")
    db.session("chat", source="telegram")
    db.session("job", source="cron")
    db.session("helper", source="subagent")
    user = db.message("chat", "user", "東京の天気 substringmatch")
    db.message("chat", "tool", "substringmatch in a tool row")
    db.message("job", "user", "substringmatch from cron")
    db.message("helper", "user", "substringmatch from a subagent")

    assert fts_ids(db.conn, "stringmat", "messages_fts_trigram") == [user]
    assert fts_ids(db.conn, "東京の天", "messages_fts_trigram") == [user]
    # NOTE: trigram needs at least three characters; a two-character CJK word finds nothing.
    assert fts_ids(db.conn, "天気", "messages_fts_trigram") == []
    db.conn.execute("DELETE FROM messages WHERE id = ?", (user,))
    assert fts_ids(db.conn, "stringmat", "messages_fts_trigram") == []


# --- The unloadable CJK table ----------------------------------------------------------


def test_cjk_table_exists_but_any_statement_on_it_fails(db_of):
    db = db_of("current")
    db.session("s1")
    message_id = db.message("s1", "user", "still searchable")  # inserts work after planting
    db.close()

    ro = open_ro(db.path)
    (sql,) = ro.execute("SELECT sql FROM sqlite_master WHERE name = 'messages_fts_cjk'").fetchone()
    assert "cjk_unicode61" in sql
    for statement in ("SELECT * FROM messages_fts_cjk", "PRAGMA table_info(messages_fts_cjk)"):
        with pytest.raises(sqlite3.OperationalError, match="no such tokenizer"):
            ro.execute(statement).fetchall()
    # Everything else still works.
    assert "content" in {row[1] for row in ro.execute("PRAGMA table_info(messages)")}
    assert ro.execute("SELECT count(*) FROM messages").fetchone() == (1,)
    assert fts_ids(ro, "searchable") == [message_id]
    assert ro.execute("PRAGMA quick_check").fetchone() == ("ok",)


def test_planting_the_cjk_table_twice_is_harmless(tmp_path):
    conn = sqlite3.connect(tmp_path / "state.db")
    create_schema(conn, "current")
    plant_unloadable_cjk_table(conn)
    count = conn.execute(
        "SELECT count(*) FROM sqlite_master WHERE name = 'messages_fts_cjk'"
    ).fetchone()
    assert count == (1,)


# --- Builders ---------------------------------------------------------------------------


def test_builders_drop_columns_the_shape_lacks(db_of):
    db = db_of("doc")
    db.session("s1", cost_status="estimated", parent_session_id="x", title="t")
    db.message("s1", "user", "hi", active=0, tool_call_id="call_1")
    db.model_usage("s1", "openai/gpt-5", input_tokens=5)  # no such table: ignored
    db.meta("fts_stale", "1")
    assert db.conn.execute("SELECT title FROM sessions").fetchone() == ("t",)
    assert db.conn.execute("SELECT count(*) FROM messages").fetchone() == (1,)


@pytest.mark.parametrize("shape", SHAPES)
def test_nasty_fixture_builds_on_every_shape(tmp_path, shape):
    facts = build_nasty_db(tmp_path / "nasty.db", shape)
    conn = open_ro(facts.path)

    assert facts.now == NASTY_NOW
    assert conn.execute("SELECT count(*) FROM sessions").fetchone() == (len(facts.session_ids),)
    assert len(facts.session_ids) >= 12
    assert conn.execute("SELECT count(*) FROM messages").fetchone() == (facts.message_count,)
    assert {r[0] for r in conn.execute("SELECT DISTINCT source FROM sessions")} >= {
        "telegram",
        "cli",
        "cron",
        "subagent",
    }
    title = conn.execute("SELECT title FROM sessions WHERE id = ?", (facts.xss_session_id,))
    assert title.fetchone() == (facts.xss_title,)
    assert fts_ids(conn, facts.rare_word) == [facts.rare_message_id]
    assert fts_ids(conn, facts.common_word) == sorted(facts.common_word_message_ids)
    assert conn.execute(
        "SELECT message_count FROM sessions WHERE id = ?", (facts.big_session_id,)
    ).fetchone() == (facts.big_session_messages,)
    assert conn.execute(
        "SELECT title, ended_at FROM sessions WHERE id = ?", (facts.untitled_session_id,)
    ).fetchone() == (None, None)
    (started, ended) = conn.execute(
        "SELECT started_at, ended_at FROM sessions WHERE id = ?",
        (facts.negative_duration_session_id,),
    ).fetchone()
    assert ended < started
    (size,) = conn.execute(
        "SELECT length(content) FROM messages WHERE id = ?", (facts.megabyte_message_id,)
    ).fetchone()
    assert size == facts.megabyte_bytes > 1_000_000
    # The tail of the megabyte output is searchable only where tool rows are indexed whole.
    tail_hits = fts_ids(conn, facts.megabyte_tail_word)
    assert tail_hits == ([] if shape == "current" else [facts.megabyte_message_id])
    for message_id in facts.malformed_message_ids:
        (valid,) = conn.execute(
            f"SELECT {calls_array('tool_calls')} IS NOT NULL FROM messages WHERE id = ?",
            (message_id,),
        ).fetchone()
        assert not valid
    (content,) = conn.execute(
        "SELECT content FROM messages WHERE id = ?", (facts.multimodal_message_id,)
    ).fetchone()
    assert content.startswith("\x00json:") and json.loads(content[6:])[1]["type"] == "image_url"

    if shape == "doc":
        assert facts.hidden_message_id is None
        return
    for pair in facts.tool_pairs:
        (calls,) = conn.execute(
            "SELECT tool_calls FROM messages WHERE id = ?", (pair.assistant_message_id,)
        ).fetchone()
        assert pair.call_id in {c["id"] for c in json.loads(calls)}
        answer = conn.execute(
            "SELECT tool_call_id FROM messages WHERE id = ?", (pair.tool_message_id,)
        ).fetchone()
        assert answer == (pair.call_id,)
    root, middle, tip = facts.chain_ids
    lineage = dict(
        conn.execute(
            "SELECT id, parent_session_id FROM sessions WHERE id IN (?, ?, ?)", facts.chain_ids
        )
    )
    assert lineage == {root: None, middle: root, tip: middle}
    main_models = [
        row[0]
        for row in conn.execute(
            "SELECT model FROM session_model_usage WHERE session_id = ? AND task = ''"
            " ORDER BY model",
            (facts.tool_session_id,),
        )
    ]
    assert main_models == sorted(facts.switched_models)
    if shape == "current":
        flags = dict(
            conn.execute(
                "SELECT id, display_kind FROM messages WHERE session_id = ?",
                (facts.history_session_id,),
            )
        )
        assert flags[facts.hidden_message_id] == "hidden"
        assert facts.compacted_message_ids and facts.rewound_message_ids
        daily = conn.execute(
            "SELECT sum(input_tokens) FROM session_daily_usage WHERE session_id = ?",
            (facts.tool_session_id,),
        ).fetchone()
        session_input = conn.execute(
            "SELECT input_tokens FROM sessions WHERE id = ?", (facts.tool_session_id,)
        ).fetchone()
        assert daily == session_input


# --- The demo generator -----------------------------------------------------------------


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    path = tmp_path_factory.mktemp("demo") / "demo.db"
    counts = build_demo_db(path, sessions=40, messages=1500, seed=7, now=DEMO_NOW)
    return path, counts


def _first_rows(path: Path) -> tuple[list[tuple], list[tuple]]:
    conn = open_ro(path)
    sessions = conn.execute("SELECT * FROM sessions ORDER BY rowid LIMIT 10").fetchall()
    messages = conn.execute("SELECT * FROM messages ORDER BY id LIMIT 50").fetchall()
    return sessions, messages


def test_demo_is_deterministic_for_a_seed(demo, tmp_path):
    path, counts = demo
    again = build_demo_db(tmp_path / "again.db", sessions=40, messages=1500, seed=7, now=DEMO_NOW)
    build_demo_db(tmp_path / "other.db", sessions=40, messages=1500, seed=8, now=DEMO_NOW)

    same_keys = ("sessions", "messages", "tool_calls", "model_usage_rows", "rare_words")
    assert {k: again[k] for k in same_keys} == {k: counts[k] for k in same_keys}
    assert _first_rows(tmp_path / "again.db") == _first_rows(path)
    assert _first_rows(tmp_path / "other.db") != _first_rows(path)


def test_demo_has_the_requested_size_and_refuses_to_overwrite(demo):
    path, counts = demo
    assert counts["sessions"] == 40
    assert counts["messages"] == 1500
    with pytest.raises(FileExistsError):
        build_demo_db(path, sessions=5, messages=50)


def test_demo_counters_are_consistent_with_messages(demo):
    path, _ = demo
    conn = open_ro(path)
    mismatched = conn.execute(
        f"""
        SELECT s.id FROM sessions s
        LEFT JOIN (
            SELECT session_id, count(*) AS n,
                   sum(role = 'assistant') AS calls,
                   sum(CASE WHEN role = 'assistant'
                        THEN coalesce(json_array_length({calls_array("tool_calls")}), 0)
                        ELSE 0 END) AS tools
            FROM messages GROUP BY session_id
        ) m ON m.session_id = s.id
        WHERE s.message_count != coalesce(m.n, 0)
           OR s.api_call_count != coalesce(m.calls, 0)
           OR s.tool_call_count != coalesce(m.tools, 0)
        """
    ).fetchall()
    assert mismatched == []
    # Sessions with cost tracking: their main-loop usage rows add up to the counters.
    off = conn.execute(
        """
        SELECT s.id FROM sessions s
        JOIN (SELECT session_id, sum(input_tokens) AS i, sum(output_tokens) AS o
              FROM session_model_usage WHERE task = '' GROUP BY session_id) u
          ON u.session_id = s.id
        WHERE s.cost_status IS NOT NULL AND (u.i != s.input_tokens OR u.o != s.output_tokens)
        """
    ).fetchall()
    assert off == []
    daily_off = conn.execute(
        """
        SELECT s.id FROM sessions s
        JOIN (SELECT session_id, sum(input_tokens) AS i, sum(api_call_count) AS c
              FROM session_daily_usage GROUP BY session_id) d ON d.session_id = s.id
        WHERE d.i != s.input_tokens OR d.c != s.api_call_count
        """
    ).fetchall()
    assert daily_off == []


# Each of these must match at least one row of even a small demo build.
DEMO_HAS = {
    "compression parent": ("sessions", "end_reason = 'compression'"),
    "compression child": (
        "sessions",
        "parent_session_id IN (SELECT id FROM sessions WHERE end_reason = 'compression')",
    ),
    "subagent delegation": ("sessions", "model_config LIKE '%_delegate_from%'"),
    "branch": ("sessions", "model_config LIKE '%_branched_from%'"),
    "NULL title": ("sessions", "title IS NULL"),
    "markup in a title": ("sessions", "title LIKE '%<%>%'"),
    "never closed": ("sessions", "ended_at IS NULL"),
    "clock drift": ("sessions", "ended_at < started_at"),
    "legacy session without usage rows": (
        "sessions",
        "cost_status IS NULL AND id NOT IN (SELECT session_id FROM session_model_usage)",
    ),
    "model switch": (
        "sessions",
        "(SELECT count(*) FROM session_model_usage u WHERE u.session_id = sessions.id"
        " AND u.task = '') > 1",
    ),
    "auxiliary usage": ("session_model_usage", "task != ''"),
    "daily usage over several days": (
        "sessions",
        "(SELECT count(*) FROM session_daily_usage d WHERE d.session_id = sessions.id) > 1",
    ),
    "compacted row": ("messages", "active = 0 AND compacted = 1"),
    "rewound row": ("messages", "active = 0 AND compacted = 0"),
    "summary row": ("messages", "_compressed_summary = 1"),
    "hidden row": ("messages", "display_kind = 'hidden'"),
    "tool calls without text": (
        "messages",
        "role = 'assistant' AND content IS NULL AND tool_calls IS NOT NULL",
    ),
    "CLI tool row without tool_name": ("messages", "role = 'tool' AND tool_name IS NULL"),
    "reasoning": ("messages", "reasoning IS NOT NULL"),
    "malformed tool_calls": ("messages", "tool_calls IS NOT NULL AND NOT json_valid(tool_calls)"),
    # NOTE: content starts with NUL, where SQLite's text functions (length, substr) stop.
    "multimodal content": (
        "messages",
        "hex(substr(CAST(content AS BLOB), 1, 6)) = hex(char(0) || 'json:')",
    ),
    "megabyte tool output": ("messages", "length(content) >= 1000000"),
    "markup in content": ("messages", "content LIKE '%<script>%' OR content LIKE '%onerror=%'"),
    "CJK content": ("messages", "content LIKE '%東京%' OR content LIKE '%服务器%'"),
}

# ...and these none.
DEMO_NEVER = {
    "unknown cost with a figure": (
        "sessions",
        "cost_status = 'unknown' AND estimated_cost_usd IS NOT NULL",
    ),
    "included cost that is not zero": (
        "sessions",
        "cost_status = 'included' AND estimated_cost_usd != 0",
    ),
    "actual cost missing": ("sessions", "cost_status = 'actual' AND actual_cost_usd IS NULL"),
    "duplicate title": (
        "sessions",
        "title IS NOT NULL AND title IN"
        " (SELECT title FROM sessions GROUP BY title HAVING count(*) > 1)",
    ),
    "child without its parent": (
        "sessions",
        "parent_session_id IS NOT NULL AND parent_session_id NOT IN (SELECT id FROM sessions)",
    ),
}


def _count(conn: sqlite3.Connection, table: str, where: str) -> int:
    return conn.execute(f"SELECT count(*) FROM {table} WHERE {where}").fetchone()[0]


@pytest.mark.parametrize("case", DEMO_HAS)
def test_demo_contains(demo, case):
    assert _count(open_ro(demo[0]), *DEMO_HAS[case]) >= 1


@pytest.mark.parametrize("case", DEMO_NEVER)
def test_demo_never_contains(demo, case):
    assert _count(open_ro(demo[0]), *DEMO_NEVER[case]) == 0


def test_demo_covers_every_cost_status_source_and_the_big_session(demo):
    path, counts = demo
    conn = open_ro(path)
    statuses = {row[0] for row in conn.execute("SELECT DISTINCT cost_status FROM sessions")}
    assert statuses == {None, "estimated", "included", "unknown", "actual"}
    sources = {row[0] for row in conn.execute("SELECT DISTINCT source FROM sessions")}
    assert {"cli", "telegram", "api_server", "cron", "discord", "slack", "subagent"} <= sources
    (big,) = conn.execute("SELECT max(message_count) FROM sessions").fetchone()
    assert big >= min(2000, counts["messages"] // 10)
    ids = [row[0] for row in conn.execute("SELECT id FROM sessions")]
    assert all(re.fullmatch(r"\d{8}_\d{6}_[0-9a-f]{6}|api-[0-9a-f]+", sid) for sid in ids)


def test_demo_tool_results_answer_calls_of_their_session(demo):
    path, _ = demo
    conn = open_ro(path)
    # A tool row without a matching call must follow a call list that was broken on purpose.
    unexplained = conn.execute(
        f"""
        SELECT t.id FROM messages t
        WHERE t.role = 'tool'
          AND NOT EXISTS (
            SELECT 1 FROM messages a, json_each({calls_array("a.tool_calls")}) c
            WHERE a.session_id = t.session_id AND a.role = 'assistant'
              AND json_extract(c.value, '$.id') = t.tool_call_id)
          AND (SELECT {calls_array("a.tool_calls")} IS NOT NULL FROM messages a
               WHERE a.session_id = t.session_id AND a.role = 'assistant' AND a.id < t.id
               ORDER BY a.id DESC LIMIT 1)
        """
    ).fetchall()
    assert unexplained == []
    skills = conn.execute(
        "SELECT json_extract(json_extract(c.value, '$.function.arguments'), '$.name')"
        f" FROM messages a, json_each({calls_array('a.tool_calls')}) c"
        " WHERE a.role = 'assistant'"
        " AND json_extract(c.value, '$.function.name') IN ('skill_view', 'skill_manage')"
    ).fetchall()
    assert skills and all(name for (name,) in skills)


def test_demo_rare_tokens_are_in_exactly_the_reported_messages(demo):
    path, counts = demo
    conn = open_ro(path)
    for token, expected in RARE_TOKENS.items():
        ids = counts["rare_words"][token]
        assert len(ids) == expected
        assert fts_ids(conn, token) == sorted(ids)
        assert fts_ids(conn, token, "messages_fts_trigram") == sorted(ids)
    assert len(fts_ids(conn, "telegram")) > 20
    assert len(fts_ids(conn, "the")) > counts["messages"] // 3


def test_demo_fts_index_agrees_with_its_content(demo):
    conn = sqlite3.connect(demo[0])
    conn.execute("INSERT INTO messages_fts (messages_fts) VALUES ('integrity-check')")
    conn.close()


@pytest.mark.parametrize("shape", ["legacy", "doc"])
def test_demo_builds_older_shapes(tmp_path, shape):
    counts = build_demo_db(
        tmp_path / f"{shape}.db", sessions=30, messages=900, shape=shape, now=DEMO_NOW
    )
    conn = open_ro(tmp_path / f"{shape}.db")
    assert conn.execute("SELECT version FROM schema_version").fetchone() == (
        SCHEMA_VERSIONS[shape],
    )
    assert conn.execute("SELECT count(*) FROM messages").fetchone() == (900,)
    assert conn.execute("SELECT sum(message_count) FROM sessions").fetchone() == (900,)
    assert counts["daily_usage_rows"] == 0
    ids = counts["rare_words"]["zyxwvut"]
    assert fts_ids(conn, "zyxwvut") == sorted(ids)
    if shape == "doc":
        assert counts["model_usage_rows"] == 0
