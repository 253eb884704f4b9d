"""The project's own DDL for the three shapes of Hermes's ``state.db``.

Hermes adds columns with ``ALTER TABLE ADD COLUMN`` whenever a newer version opens the file,
so the explorer meets files of different ages. Tests and the demo need a file of each shape,
written from the facts in ``hermes-schema.md`` (never copied from Hermes):

``doc``
    Only the columns of the team's deployment doc (the ones marked • in hermes-schema.md),
    ``schema_version`` 12, an *inline* ``messages_fts`` (one column holding
    ``content || ' ' || tool_name || ' ' || tool_calls``), no ``session_model_usage``,
    no trigram index and only three indexes.

``legacy``
    ``schema_version`` 21: the billing columns, lineage (``parent_session_id``,
    ``end_reason``, ``model_config``), ``tool_call_id``/``finish_reason`` on messages and
    ``session_model_usage``; still the inline FTS, no trigram, no daily usage, no
    ``state_meta``.

``current``
    ``schema_version`` 31: every column of hermes-schema.md, ``system_prompts``,
    ``session_daily_usage``, ``state_meta``, all the documented indexes, an
    *external-content* ``messages_fts`` over the view ``messages_fts_src`` (tool rows
    indexed on their first 8,192 characters), ``messages_fts_trigram`` (no tool rows, no
    cron/subagent sessions) and an unloadable ``messages_fts_cjk`` (see
    :func:`plant_unloadable_cjk_table`).

Columns are declared once in a table per Hermes table with the first shape that has them, so
an older shape is always a prefix of a newer one, as it is on real files.

In every shape the FTS tables are kept in sync with ``messages`` by triggers; the demo
builder drops them around its bulk load (:func:`drop_fts_triggers`), fills the indexes in one
pass (:func:`rebuild_fts`) and puts them back (:func:`create_fts_triggers`).
"""

from __future__ import annotations

import sqlite3
from typing import NamedTuple

SHAPES = ("doc", "legacy", "current")
SCHEMA_VERSIONS = {"doc": 12, "legacy": 21, "current": 31}

# Tool rows are indexed on their first 8,192 characters only in the current layout.
TOOL_FTS_PREFIX_CHARS = 8192

# Sessions of these sources never enter the trigram index of current files.
TRIGRAM_EXCLUDED_SOURCES = ("cron", "subagent")


class Column(NamedTuple):
    name: str
    decl: str
    since: str  # first shape that has the column


def _rank(shape: str) -> int:
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; expected one of {SHAPES}")
    return SHAPES.index(shape)


SESSIONS_COLUMNS: tuple[Column, ...] = (
    Column("id", "TEXT PRIMARY KEY", "doc"),
    Column("source", "TEXT NOT NULL", "doc"),
    Column("user_id", "TEXT", "doc"),
    Column("model", "TEXT", "doc"),
    Column("title", "TEXT", "doc"),
    Column("started_at", "REAL NOT NULL", "doc"),
    Column("ended_at", "REAL", "doc"),
    Column("message_count", "INTEGER DEFAULT 0", "doc"),
    Column("input_tokens", "INTEGER DEFAULT 0", "doc"),
    Column("output_tokens", "INTEGER DEFAULT 0", "doc"),
    Column("estimated_cost_usd", "REAL", "doc"),
    # Lineage and route (legacy files already have them).
    Column("model_config", "TEXT", "legacy"),
    Column("system_prompt", "TEXT", "legacy"),
    Column("parent_session_id", "TEXT", "legacy"),
    Column("end_reason", "TEXT", "legacy"),
    # Billing.
    Column("tool_call_count", "INTEGER DEFAULT 0", "legacy"),
    Column("api_call_count", "INTEGER DEFAULT 0", "legacy"),
    Column("cache_read_tokens", "INTEGER DEFAULT 0", "legacy"),
    Column("cache_write_tokens", "INTEGER DEFAULT 0", "legacy"),
    Column("reasoning_tokens", "INTEGER DEFAULT 0", "legacy"),
    Column("billing_provider", "TEXT", "legacy"),
    Column("billing_base_url", "TEXT", "legacy"),
    Column("billing_mode", "TEXT", "legacy"),
    Column("actual_cost_usd", "REAL", "legacy"),
    Column("cost_status", "TEXT", "legacy"),
    Column("cost_source", "TEXT", "legacy"),
    Column("pricing_version", "TEXT", "legacy"),
    # v22+ additions, all present in current files.
    Column("system_prompt_hash", "TEXT", "current"),
    Column("title_source", "TEXT", "current"),
    Column("last_activity_at", "REAL", "current"),
    Column("archived", "INTEGER NOT NULL DEFAULT 0", "current"),
    Column("auto_archived", "INTEGER NOT NULL DEFAULT 0", "current"),
    Column("pinned", "INTEGER NOT NULL DEFAULT 0", "current"),
    Column("hidden", "INTEGER NOT NULL DEFAULT 0", "current"),
    Column("profile_name", "TEXT", "current"),
    Column("created_source", "TEXT", "current"),
    Column("session_key", "TEXT", "current"),
    Column("chat_id", "TEXT", "current"),
    Column("chat_type", "TEXT", "current"),
    Column("thread_id", "TEXT", "current"),
    Column("display_name", "TEXT", "current"),
    Column("origin_json", "TEXT", "current"),
    Column("cwd", "TEXT", "current"),
    Column("git_branch", "TEXT", "current"),
    Column("git_repo_root", "TEXT", "current"),
    # A handful of the operational columns readers never look at; they exist so that the
    # explorer is exercised against a wide row, as on real files.
    Column("handoff_state", "TEXT", "current"),
    Column("handoff_target", "TEXT", "current"),
    Column("handoff_requested_at", "REAL", "current"),
    Column("compression_count", "INTEGER DEFAULT 0", "current"),
    Column("compression_last_at", "REAL", "current"),
    Column("compression_tokens_before", "INTEGER", "current"),
    Column("compression_tokens_after", "INTEGER", "current"),
)

MESSAGES_COLUMNS: tuple[Column, ...] = (
    Column("id", "INTEGER PRIMARY KEY AUTOINCREMENT", "doc"),
    Column("session_id", "TEXT NOT NULL REFERENCES sessions(id)", "doc"),
    Column("role", "TEXT NOT NULL", "doc"),
    Column("content", "TEXT", "doc"),
    Column("tool_name", "TEXT", "doc"),
    Column("tool_calls", "TEXT", "doc"),
    Column("timestamp", "REAL NOT NULL", "doc"),
    Column("token_count", "INTEGER", "doc"),
    Column("reasoning", "TEXT", "doc"),
    Column("tool_call_id", "TEXT", "legacy"),
    Column("finish_reason", "TEXT", "legacy"),
    Column("reasoning_content", "TEXT", "current"),
    Column("reasoning_details", "TEXT", "current"),
    Column("codex_reasoning_items", "TEXT", "current"),
    Column("active", "INTEGER NOT NULL DEFAULT 1", "current"),
    Column("compacted", "INTEGER NOT NULL DEFAULT 0", "current"),
    Column("_compressed_summary", "INTEGER NOT NULL DEFAULT 0", "current"),
    Column("display_kind", "TEXT", "current"),
    Column("api_content", "TEXT", "current"),
    Column("display_metadata", "TEXT", "current"),
    Column("message_uid", "TEXT", "current"),
)

_USAGE_COUNTERS: tuple[Column, ...] = (
    Column("api_call_count", "INTEGER NOT NULL DEFAULT 0", "legacy"),
    Column("input_tokens", "INTEGER NOT NULL DEFAULT 0", "legacy"),
    Column("output_tokens", "INTEGER NOT NULL DEFAULT 0", "legacy"),
    Column("cache_read_tokens", "INTEGER NOT NULL DEFAULT 0", "legacy"),
    Column("cache_write_tokens", "INTEGER NOT NULL DEFAULT 0", "legacy"),
    Column("reasoning_tokens", "INTEGER NOT NULL DEFAULT 0", "legacy"),
    Column("estimated_cost_usd", "REAL", "legacy"),
    Column("actual_cost_usd", "REAL", "legacy"),
    Column("cost_status", "TEXT", "legacy"),
    Column("cost_source", "TEXT", "legacy"),
)

# The route columns are part of the primary key, so they are NOT NULL with '' for "none":
# SQLite would otherwise let NULLs make two "identical" keys distinct.
SESSION_MODEL_USAGE_COLUMNS: tuple[Column, ...] = (
    Column("session_id", "TEXT NOT NULL", "legacy"),
    Column("model", "TEXT NOT NULL", "legacy"),
    Column("billing_provider", "TEXT NOT NULL DEFAULT ''", "legacy"),
    Column("billing_base_url", "TEXT NOT NULL DEFAULT ''", "legacy"),
    Column("billing_mode", "TEXT NOT NULL DEFAULT ''", "legacy"),
    Column("task", "TEXT NOT NULL DEFAULT ''", "legacy"),
    *_USAGE_COUNTERS,
    Column("first_seen", "REAL", "legacy"),
    Column("last_seen", "REAL", "legacy"),
)

SESSION_DAILY_USAGE_COLUMNS: tuple[Column, ...] = (
    Column("session_id", "TEXT NOT NULL", "current"),
    Column("day", "TEXT NOT NULL", "current"),
    *(c._replace(since="current") for c in _USAGE_COUNTERS),
)


def _columns_sql(columns: tuple[Column, ...], shape: str) -> str:
    rank = _rank(shape)
    return ",\n    ".join(f"{c.name} {c.decl}" for c in columns if _rank(c.since) <= rank)


def _tables_sql(shape: str) -> list[str]:
    statements = [
        "CREATE TABLE schema_version (version INTEGER NOT NULL)",
        f"INSERT INTO schema_version (version) VALUES ({SCHEMA_VERSIONS[shape]})",
        f"CREATE TABLE sessions (\n    {_columns_sql(SESSIONS_COLUMNS, shape)}\n)",
        f"CREATE TABLE messages (\n    {_columns_sql(MESSAGES_COLUMNS, shape)}\n)",
    ]
    if _rank(shape) >= _rank("legacy"):
        statements.append(
            "CREATE TABLE session_model_usage (\n"
            f"    {_columns_sql(SESSION_MODEL_USAGE_COLUMNS, shape)},\n"
            "    PRIMARY KEY (session_id, model, billing_provider, billing_base_url,"
            " billing_mode, task)\n)"
        )
    if shape == "current":
        statements += [
            "CREATE TABLE system_prompts (hash TEXT PRIMARY KEY, prompt TEXT NOT NULL)",
            "CREATE TABLE session_daily_usage (\n"
            f"    {_columns_sql(SESSION_DAILY_USAGE_COLUMNS, shape)},\n"
            "    PRIMARY KEY (session_id, day)\n)",
            "CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT)",
        ]
    return statements


def _indexes_sql(shape: str) -> list[str]:
    statements = [
        "CREATE INDEX idx_sessions_started_at ON sessions (started_at DESC)",
        "CREATE INDEX idx_sessions_source ON sessions (source)",
        "CREATE INDEX idx_messages_session_timestamp ON messages (session_id, timestamp)",
    ]
    if _rank(shape) >= _rank("legacy"):
        statements += [
            "CREATE INDEX idx_sessions_parent ON sessions (parent_session_id)",
            "CREATE INDEX idx_sessions_source_id ON sessions (source, id)",
            # Titles are unique when not NULL (hermes-schema.md).
            "CREATE UNIQUE INDEX idx_sessions_title_unique ON sessions (title)"
            " WHERE title IS NOT NULL",
            "CREATE INDEX idx_messages_session_id ON messages (session_id, id)",
        ]
    if shape == "current":
        statements += [
            "CREATE INDEX idx_sessions_session_key ON sessions (session_key, started_at)",
            "CREATE INDEX idx_sessions_route ON sessions"
            " (source, user_id, chat_id, chat_type, thread_id, started_at)",
            "CREATE INDEX idx_sessions_last_activity ON sessions"
            " (COALESCE(last_activity_at, started_at))",
            "CREATE INDEX idx_messages_tool_calls ON messages (session_id, id)"
            " WHERE role = 'assistant' AND tool_calls IS NOT NULL",
            "CREATE INDEX idx_messages_session_active_timestamp ON messages"
            " (session_id, active, timestamp)",
        ]
    return statements


# --- Full-text search -------------------------------------------------------------------

_INLINE_FTS_TEXT = (
    "COALESCE({r}.content, '') || ' ' || COALESCE({r}.tool_name, '') || ' '"
    " || COALESCE({r}.tool_calls, '')"
)


def _fts_content_expr(row: str) -> str:
    """What the current layout indexes as ``content``: tool rows cut to their prefix."""
    return (
        f"CASE WHEN {row}.role = 'tool' THEN substr({row}.content, 1, {TOOL_FTS_PREFIX_CHARS})"
        f" ELSE {row}.content END"
    )


def _trigram_condition(row: str) -> str:
    excluded = ", ".join(f"'{s}'" for s in TRIGRAM_EXCLUDED_SOURCES)
    return (
        f"{row}.content IS NOT NULL AND COALESCE({row}.role, '') <> 'tool'"
        f" AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = {row}.session_id"
        f" AND s.source IN ({excluded}))"
    )


def _fts_tables_sql(shape: str) -> list[str]:
    if shape != "current":
        # Inline layout: the FTS table keeps its own copy of the concatenated text.
        return ["CREATE VIRTUAL TABLE messages_fts USING fts5(content)"]
    return [
        "CREATE VIEW messages_fts_src AS SELECT m.id AS id, "
        f"{_fts_content_expr('m')} AS content, m.tool_name AS tool_name,"
        " m.tool_calls AS tool_calls FROM messages m",
        "CREATE VIRTUAL TABLE messages_fts USING fts5("
        "content, tool_name, tool_calls, content='messages_fts_src', content_rowid='id')",
        # Contentful on purpose: rows can be deleted with a plain DELETE whether or not the
        # WHEN condition let them in, and a rebuild cannot widen what is indexed.
        "CREATE VIRTUAL TABLE messages_fts_trigram USING fts5(content, tokenize='trigram')",
    ]


def _fts_triggers_sql(shape: str) -> list[str]:
    if shape != "current":
        new_text = _INLINE_FTS_TEXT.format(r="new")
        return [
            "CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages BEGIN\n"
            f"  INSERT INTO messages_fts (rowid, content) VALUES (new.id, {new_text});\nEND",
            "CREATE TRIGGER messages_fts_ad AFTER DELETE ON messages BEGIN\n"
            "  DELETE FROM messages_fts WHERE rowid = old.id;\nEND",
            "CREATE TRIGGER messages_fts_au AFTER UPDATE OF content, tool_name, tool_calls"
            " ON messages BEGIN\n"
            "  DELETE FROM messages_fts WHERE rowid = old.id;\n"
            f"  INSERT INTO messages_fts (rowid, content) VALUES (new.id, {new_text});\nEND",
        ]
    # External content: the index must be told the *old* values to forget them, through
    # the special 'delete' command; a plain DELETE would read the already-changed row.
    insert_new = (
        "  INSERT INTO messages_fts (rowid, content, tool_name, tool_calls)"
        f" VALUES (new.id, {_fts_content_expr('new')}, new.tool_name, new.tool_calls);\n"
    )
    delete_old = (
        "  INSERT INTO messages_fts (messages_fts, rowid, content, tool_name, tool_calls)"
        f" VALUES ('delete', old.id, {_fts_content_expr('old')}, old.tool_name,"
        " old.tool_calls);\n"
    )
    trigram_insert_new = (
        "  INSERT INTO messages_fts_trigram (rowid, content)"
        f" SELECT new.id, new.content WHERE {_trigram_condition('new')};\n"
    )
    return [
        f"CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages BEGIN\n{insert_new}END",
        f"CREATE TRIGGER messages_fts_ad AFTER DELETE ON messages BEGIN\n{delete_old}END",
        "CREATE TRIGGER messages_fts_au AFTER UPDATE OF content, tool_name, tool_calls, role"
        f" ON messages BEGIN\n{delete_old}{insert_new}END",
        "CREATE TRIGGER messages_fts_trigram_ai AFTER INSERT ON messages"
        f" WHEN {_trigram_condition('new')} BEGIN\n"
        "  INSERT INTO messages_fts_trigram (rowid, content) VALUES (new.id, new.content);\nEND",
        "CREATE TRIGGER messages_fts_trigram_ad AFTER DELETE ON messages BEGIN\n"
        "  DELETE FROM messages_fts_trigram WHERE rowid = old.id;\nEND",
        "CREATE TRIGGER messages_fts_trigram_au AFTER UPDATE OF content, role, session_id"
        " ON messages BEGIN\n"
        "  DELETE FROM messages_fts_trigram WHERE rowid = old.id;\n"
        f"{trigram_insert_new}END",
    ]


def _fts_trigger_names(shape: str) -> list[str]:
    names = ["messages_fts_ai", "messages_fts_ad", "messages_fts_au"]
    if shape == "current":
        names += ["messages_fts_trigram_ai", "messages_fts_trigram_ad", "messages_fts_trigram_au"]
    return names


def _run(conn: sqlite3.Connection, statements: list[str]) -> None:
    """Run DDL in one transaction (executescript commits whatever was pending first)."""
    conn.executescript("BEGIN;\n" + ";\n".join(statements) + ";\nCOMMIT;")


# --- Public API --------------------------------------------------------------------------


def create_schema(conn: sqlite3.Connection, shape: str) -> None:
    """Create every table, index, FTS table and FTS trigger of ``shape`` on an empty file.

    The current shape also plants the unloadable ``messages_fts_cjk`` table.
    """
    _rank(shape)
    _run(
        conn,
        _tables_sql(shape)
        + _indexes_sql(shape)
        + _fts_tables_sql(shape)
        + _fts_triggers_sql(shape),
    )
    if shape == "current":
        plant_unloadable_cjk_table(conn)


def create_fts_triggers(conn: sqlite3.Connection, shape: str) -> None:
    """(Re)create the triggers that keep the FTS tables in sync with ``messages``."""
    _run(conn, _fts_triggers_sql(shape))


def drop_fts_triggers(conn: sqlite3.Connection, shape: str) -> None:
    """Drop the FTS triggers, for a bulk load followed by :func:`rebuild_fts`."""
    _run(conn, [f"DROP TRIGGER IF EXISTS {name}" for name in _fts_trigger_names(shape)])


def rebuild_fts(conn: sqlite3.Connection, shape: str) -> None:
    """Rebuild the FTS indexes of ``shape`` from ``messages`` in one pass each.

    Used after a bulk load with the triggers dropped; far faster than a trigger per row.
    """
    if shape == "current":
        statements = [
            # External content: FTS5 reads the view itself.
            "INSERT INTO messages_fts (messages_fts) VALUES ('rebuild')",
            "DELETE FROM messages_fts_trigram",
            "INSERT INTO messages_fts_trigram (rowid, content) SELECT m.id, m.content"
            f" FROM messages m WHERE {_trigram_condition('m')} ORDER BY m.id",
        ]
    else:
        # An inline (contentful) table's 'rebuild' would only re-read its own copy.
        statements = [
            "DELETE FROM messages_fts",
            "INSERT INTO messages_fts (rowid, content) SELECT m.id, "
            f"{_INLINE_FTS_TEXT.format(r='m')} FROM messages m ORDER BY m.id",
        ]
    _run(conn, statements)


CJK_TABLE_SQL = (
    "CREATE VIRTUAL TABLE messages_fts_cjk USING fts5(content, tokenize='cjk_unicode61')"
)


def plant_unloadable_cjk_table(conn: sqlite3.Connection) -> None:
    """Make ``messages_fts_cjk`` exist with a tokenizer this SQLite does not have.

    Real files may carry such a table, made by Hermes with a tokenizer from an extension the
    explorer does not load: any statement that touches it fails with "no such tokenizer:
    cjk_unicode61", while everything else in the file works.

    NOTE: we cannot create it normally (CREATE VIRTUAL TABLE would fail right away), so we
    create an ordinary fts5 table, which also gives it the five shadow tables a real file has,
    then rewrite its CREATE statement in ``sqlite_master`` under ``writable_schema`` and bump
    ``schema_version`` so that every connection, this one included, reloads the schema.
    SQLite only connects a virtual table when a statement names it, so the schema still loads.
    No trigger feeds it: our builders must keep inserting messages after it is planted.
    """
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'messages_fts_cjk'"
    ).fetchone()
    if exists:
        return
    conn.commit()
    conn.execute("CREATE VIRTUAL TABLE messages_fts_cjk USING fts5(content, tokenize='unicode61')")
    conn.commit()
    (schema_cookie,) = conn.execute("PRAGMA schema_version").fetchone()
    conn.execute("PRAGMA writable_schema = ON")
    try:
        conn.execute(
            "UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = 'messages_fts_cjk'",
            (CJK_TABLE_SQL,),
        )
        conn.execute(f"PRAGMA schema_version = {int(schema_cookie) + 1}")
        conn.commit()
    finally:
        conn.execute("PRAGMA writable_schema = OFF")


def insert_columns(conn: sqlite3.Connection, table: str) -> set[str]:
    """Names of the columns ``table`` has on this file (``PRAGMA table_info``)."""
    return {row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')}


def table_names(conn: sqlite3.Connection) -> set[str]:
    """Tables and views named in ``sqlite_master`` (safe: opens none of them)."""
    return {
        row[0]
        for row in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
    }
