"""Copy a Hermes ``state.db`` into a PostgreSQL schema laid out as Hermes's PostgreSQL store.

:func:`load` creates the schema with the project's own DDL (:mod:`hermes_fixtures.ddl.postgres`)
and copies every table the file has with ``COPY``; indexes and the foreign key come after the
data, so a million-message store loads in minutes. Any SQLite layout works: columns the file
lacks stay NULL (or take their default when NOT NULL), columns the PostgreSQL layout lacks
(``message_uid``, ``auto_archived``, ``created_source``, ``session_daily_usage``) are dropped.

PostgreSQL text cannot hold NUL, so text values are stored as Hermes stores them there
(:func:`encode_text`): structured (multimodal) content, ``"\\x00json:" + JSON`` in SQLite,
becomes ``"\\x01json:" + JSON``; bytes become ``"\\x01bytes:" + base64``; a string that holds
a NUL or starts with one of these markers becomes ``"\\x01json:"`` + its JSON string.
:func:`decode_text` turns a stored value back into the SQLite one.

Command line: ``python -m hermes_fixtures.postgres [--replace] <state.db> <dsn> <schema>``.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sqlite3
import sys
import time
from typing import Any

import psycopg
from psycopg import sql

from .ddl import postgres as ddl

JSON_MARKER = "\x01json:"
BYTES_MARKER = "\x01bytes:"
SQLITE_JSON_MARKER = "\x00json:"
_MARKERS = (JSON_MARKER, BYTES_MARKER)
# Tables copied from the file, parents first.
COPIED_TABLES = (
    "schema_version",
    "sessions",
    "messages",
    "session_model_usage",
    "system_prompts",
    "state_meta",
)


def encode_text(value: Any) -> Any:
    """``value`` as Hermes writes it into a PostgreSQL text column (see the module doc)."""
    if isinstance(value, bytes):
        return BYTES_MARKER + base64.b64encode(value).decode("ascii")
    if not isinstance(value, str) or ("\x00" not in value and not value.startswith(_MARKERS)):
        return value
    if value.startswith(SQLITE_JSON_MARKER):
        payload = value[len(SQLITE_JSON_MARKER) :]
        try:
            structured = not isinstance(json.loads(payload), str)
        except ValueError:
            structured = False
        if structured:
            return JSON_MARKER + payload
    return JSON_MARKER + json.dumps(value, ensure_ascii=False)


def decode_text(value: Any) -> Any:
    """The SQLite value a stored PostgreSQL text value stands for (inverse of
    :func:`encode_text`)."""
    if not isinstance(value, str):
        return value
    if value.startswith(BYTES_MARKER):
        return base64.b64decode(value[len(BYTES_MARKER) :])
    if value.startswith(JSON_MARKER):
        payload = value[len(JSON_MARKER) :]
        parsed = json.loads(payload)
        return parsed if isinstance(parsed, str) else SQLITE_JSON_MARKER + payload
    return value


def _sqlite_columns(src: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in src.execute(f"PRAGMA table_info({table})")]


def _copy_table(src: sqlite3.Connection, cur: psycopg.Cursor, table: str) -> int:
    present = set(_sqlite_columns(src, table))
    columns = [c for c in ddl.columns(table) if c in present]
    if not columns:
        return 0
    order = "id" if table == "messages" else "rowid"
    rows = src.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {order}")
    statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
        sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns))
    )
    count = 0
    with cur.copy(statement) as copy:
        while batch := rows.fetchmany(5000):
            for row in batch:
                copy.write_row([encode_text(v) for v in row])
            count += len(batch)
    return count


def create_schema(cur: psycopg.Cursor, schema: str, *, replace: bool = False) -> None:
    """Create ``schema`` with the empty tables (no indexes yet) and point ``search_path`` at it
    for the rest of the transaction."""
    ident = sql.Identifier(schema)
    if replace:
        cur.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(ident))
    cur.execute(sql.SQL("CREATE SCHEMA {}").format(ident))
    cur.execute(sql.SQL("SET LOCAL search_path TO {}, pg_catalog").format(ident))
    for statement in ddl.tables_sql():
        cur.execute(statement)


def load(
    sqlite_path: str | os.PathLike[str], dsn: str, schema: str, *, replace: bool = False
) -> dict[str, int]:
    """Copy the ``state.db`` at ``sqlite_path`` into a new ``schema`` of the database at
    ``dsn``, in one transaction; returns the number of rows copied per table.

    ``replace`` drops an existing schema of that name first; without it an existing schema is
    an error (``psycopg.errors.DuplicateSchema``).
    """
    uri = f"file:{os.fspath(sqlite_path)}?mode=ro"
    src = sqlite3.connect(uri, uri=True)
    src.text_factory = lambda raw: raw.decode("utf-8", "replace")
    try:
        tables = {r[0] for r in src.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        with psycopg.connect(dsn) as pg, pg.cursor() as cur:
            create_schema(cur, schema, replace=replace)
            counts = {t: _copy_table(src, cur, t) if t in tables else 0 for t in COPIED_TABLES}
            for statement in ddl.indexes_sql():
                cur.execute(statement)
            cur.execute(
                "SELECT setval(pg_get_serial_sequence('messages', 'id'),"
                " coalesce(max(id), 0) + 1, false) FROM messages"
            )
            cur.execute("ANALYZE")
    finally:
        src.close()
    return counts


def grant_read_only(dsn: str, role: str, schema: str) -> None:
    """Let ``role`` (created as a LOGIN role when missing) read ``schema`` and nothing more:
    USAGE on the schema, SELECT on its tables, read-only transactions by default."""
    role_ident, schema_ident = sql.Identifier(role), sql.Identifier(schema)
    with psycopg.connect(dsn) as pg, pg.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role])
        if cur.fetchone() is None:
            cur.execute(sql.SQL("CREATE ROLE {} LOGIN").format(role_ident))
        for statement in (
            "ALTER ROLE {role} SET default_transaction_read_only = on",
            "GRANT USAGE ON SCHEMA {schema} TO {role}",
            "GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role}",
        ):
            cur.execute(sql.SQL(statement).format(role=role_ident, schema=schema_ident))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m hermes_fixtures.postgres",
        description="Copy a Hermes state.db into a PostgreSQL schema (Hermes's layout there).",
    )
    parser.add_argument("state_db")
    parser.add_argument("dsn", help="libpq connection string or postgresql:// URL")
    parser.add_argument("schema")
    parser.add_argument("--replace", action="store_true", help="drop the schema first")
    args = parser.parse_args(argv)
    if not os.path.isfile(args.state_db):
        parser.error(f"no such file: {args.state_db}")
    started = time.monotonic()
    try:
        counts = load(args.state_db, args.dsn, args.schema, replace=args.replace)
    except (psycopg.Error, sqlite3.Error) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    rows = ", ".join(f"{table} {n:,}" for table, n in counts.items())
    print(f"{args.schema}: {rows} in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
