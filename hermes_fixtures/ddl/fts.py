"""The full-text layouts of a state.db: FTS tables, the triggers that feed them, a rebuild.

Older shapes keep an *inline* ``messages_fts``: one column holding
``content || ' ' || tool_name || ' ' || tool_calls``. The current shape has an
*external-content* ``messages_fts`` over the view ``messages_fts_src`` (tool rows indexed on
their first 8,192 characters), ``messages_fts_trigram`` (no tool rows, no cron/subagent
sessions) and an unloadable ``messages_fts_cjk`` (see :func:`plant_unloadable_cjk_table`).

The functions here build statements; :mod:`hermes_fixtures.ddl` runs them.
"""

from __future__ import annotations

import sqlite3

# Tool rows are indexed on their first 8,192 characters only in the current layout.
TOOL_FTS_PREFIX_CHARS = 8192

# Sessions of these sources never enter the trigram index of current files.
TRIGRAM_EXCLUDED_SOURCES = ("cron", "subagent")

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


def fts_tables_sql(shape: str) -> list[str]:
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


def fts_triggers_sql(shape: str) -> list[str]:
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


def fts_trigger_names(shape: str) -> list[str]:
    names = ["messages_fts_ai", "messages_fts_ad", "messages_fts_au"]
    if shape == "current":
        names += ["messages_fts_trigram_ai", "messages_fts_trigram_ad", "messages_fts_trigram_au"]
    return names


def rebuild_sql(shape: str) -> list[str]:
    """Statements that refill the FTS indexes of ``shape`` from ``messages`` in one pass each."""
    if shape == "current":
        return [
            # External content: FTS5 reads the view itself.
            "INSERT INTO messages_fts (messages_fts) VALUES ('rebuild')",
            "DELETE FROM messages_fts_trigram",
            "INSERT INTO messages_fts_trigram (rowid, content) SELECT m.id, m.content"
            f" FROM messages m WHERE {_trigram_condition('m')} ORDER BY m.id",
        ]
    # An inline (contentful) table's 'rebuild' would only re-read its own copy.
    return [
        "DELETE FROM messages_fts",
        "INSERT INTO messages_fts (rowid, content) SELECT m.id, "
        f"{_INLINE_FTS_TEXT.format(r='m')} FROM messages m ORDER BY m.id",
    ]


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
