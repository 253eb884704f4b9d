"""The full-text layouts of a state.db: FTS tables, the triggers that feed them, a rebuild.

Three layouts, by Hermes release:

* ``messages`` (v1–v10): ``messages_fts`` has one column and reads it back from
  ``messages.content`` (``content=messages``); tool names and calls are not indexed.
* ``inline`` (v11–v22, and the ``doc``/``legacy`` shapes): one column holding its own copy of
  ``content || ' ' || tool_name || ' ' || tool_calls``.
* ``view`` (v23+, the current shape): three columns read through the view
  ``messages_fts_src`` (tool rows indexed on their first 8,192 characters).

Any of them may come with ``messages_fts_trigram`` (in the view layout: no tool rows, no
cron/subagent sessions); current files also carry an unloadable ``messages_fts_cjk`` (see
:func:`plant_unloadable_cjk_table`).

The functions here build statements; :mod:`hermes_fixtures.ddl` runs them.
"""

from __future__ import annotations

import sqlite3

from .layouts import FTS_INLINE, FTS_MESSAGES, Layout

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


def fts_tables_sql(layout: Layout) -> list[str]:
    if layout.fts is None:
        return []
    if layout.fts == FTS_MESSAGES:
        # Hermes wrote these options unquoted; the explorer must read them either way.
        options = "content=messages, content_rowid=id"
        statements = [f"CREATE VIRTUAL TABLE messages_fts USING fts5(content, {options})"]
        if layout.trigram:
            statements.append(
                "CREATE VIRTUAL TABLE messages_fts_trigram USING fts5("
                f"content, {options}, tokenize='trigram')"
            )
        return statements
    if layout.fts == FTS_INLINE:
        # Inline layout: each FTS table keeps its own copy of the concatenated text.
        statements = ["CREATE VIRTUAL TABLE messages_fts USING fts5(content)"]
        if layout.trigram:
            statements.append(
                "CREATE VIRTUAL TABLE messages_fts_trigram USING fts5(content, tokenize='trigram')"
            )
        return statements
    statements = [
        "CREATE VIEW messages_fts_src AS SELECT m.id AS id, "
        f"{_fts_content_expr('m')} AS content, m.tool_name AS tool_name,"
        " m.tool_calls AS tool_calls FROM messages m",
        "CREATE VIRTUAL TABLE messages_fts USING fts5("
        "content, tool_name, tool_calls, content='messages_fts_src', content_rowid='id')",
    ]
    if layout.trigram:
        # Contentful on purpose: rows can be deleted with a plain DELETE whether or not the
        # WHEN condition let them in, and a rebuild cannot widen what is indexed.
        statements.append(
            "CREATE VIRTUAL TABLE messages_fts_trigram USING fts5(content, tokenize='trigram')"
        )
    return statements


def _tables_fed(layout: Layout) -> list[str]:
    return ["messages_fts", "messages_fts_trigram"][: 1 + layout.trigram]


def _messages_triggers(table: str) -> list[str]:
    """An external-content table over ``messages.content`` is told old values by 'delete'."""
    insert_new = f"  INSERT INTO {table} (rowid, content) VALUES (new.id, new.content);\n"
    delete_old = (
        f"  INSERT INTO {table} ({table}, rowid, content) VALUES ('delete', old.id, old.content);\n"
    )
    return [
        f"CREATE TRIGGER {table}_ai AFTER INSERT ON messages BEGIN\n{insert_new}END",
        f"CREATE TRIGGER {table}_ad AFTER DELETE ON messages BEGIN\n{delete_old}END",
        f"CREATE TRIGGER {table}_au AFTER UPDATE OF content ON messages BEGIN\n"
        f"{delete_old}{insert_new}END",
    ]


def _inline_triggers(table: str) -> list[str]:
    new_text = _INLINE_FTS_TEXT.format(r="new")
    return [
        f"CREATE TRIGGER {table}_ai AFTER INSERT ON messages BEGIN\n"
        f"  INSERT INTO {table} (rowid, content) VALUES (new.id, {new_text});\nEND",
        f"CREATE TRIGGER {table}_ad AFTER DELETE ON messages BEGIN\n"
        f"  DELETE FROM {table} WHERE rowid = old.id;\nEND",
        f"CREATE TRIGGER {table}_au AFTER UPDATE OF content, tool_name, tool_calls"
        " ON messages BEGIN\n"
        f"  DELETE FROM {table} WHERE rowid = old.id;\n"
        f"  INSERT INTO {table} (rowid, content) VALUES (new.id, {new_text});\nEND",
    ]


def fts_triggers_sql(layout: Layout) -> list[str]:
    if layout.fts is None:
        return []
    if layout.fts == FTS_MESSAGES:
        return [sql for table in _tables_fed(layout) for sql in _messages_triggers(table)]
    if layout.fts == FTS_INLINE:
        return [sql for table in _tables_fed(layout) for sql in _inline_triggers(table)]
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
    statements = [
        f"CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages BEGIN\n{insert_new}END",
        f"CREATE TRIGGER messages_fts_ad AFTER DELETE ON messages BEGIN\n{delete_old}END",
        "CREATE TRIGGER messages_fts_au AFTER UPDATE OF content, tool_name, tool_calls, role"
        f" ON messages BEGIN\n{delete_old}{insert_new}END",
    ]
    if not layout.trigram:
        return statements
    trigram_insert_new = (
        "  INSERT INTO messages_fts_trigram (rowid, content)"
        f" SELECT new.id, new.content WHERE {_trigram_condition('new')};\n"
    )
    return statements + [
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


def fts_trigger_names(layout: Layout) -> list[str]:
    if layout.fts is None:
        return []
    return [f"{table}_{event}" for table in _tables_fed(layout) for event in ("ai", "ad", "au")]


def rebuild_sql(layout: Layout) -> list[str]:
    """Statements that refill the FTS indexes of ``layout`` from ``messages``, one pass each."""
    if layout.fts is None:
        return []
    if layout.fts == FTS_MESSAGES:
        # The index reads messages itself.
        return [f"INSERT INTO {t} ({t}) VALUES ('rebuild')" for t in _tables_fed(layout)]
    if layout.fts == FTS_INLINE:
        # An inline (contentful) table's 'rebuild' would only re-read its own copy.
        statements = []
        for table in _tables_fed(layout):
            statements += [
                f"DELETE FROM {table}",
                f"INSERT INTO {table} (rowid, content) SELECT m.id, "
                f"{_INLINE_FTS_TEXT.format(r='m')} FROM messages m ORDER BY m.id",
            ]
        return statements
    # External content: FTS5 reads the view itself.
    statements = ["INSERT INTO messages_fts (messages_fts) VALUES ('rebuild')"]
    if layout.trigram:
        statements += [
            "DELETE FROM messages_fts_trigram",
            "INSERT INTO messages_fts_trigram (rowid, content) SELECT m.id, m.content"
            f" FROM messages m WHERE {_trigram_condition('m')} ORDER BY m.id",
        ]
    return statements


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
