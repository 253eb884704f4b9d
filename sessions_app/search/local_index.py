"""A PostgreSQL profile's word index, kept by this app server beside its app database.

A schema's search must propose every message whose *redacted* text matches (the recheck,
:func:`.redacted.matching`, decides).  Hermes's ``search_vector`` cannot: PostgreSQL's parser
keeps ``settings.py`` or an e-mail address as one lexeme and covers the first 8,192 characters,
and Hermes finds the longer rows by ``ILIKE`` over all of them (183 MB of text on the
benchmark's 1M-message schema: 1.5 s a search).  The SELECT-only role cannot add an index to
the schema, so ``manage.py search_index`` (run by the warm-up timer) keeps one here: an FTS5
index without content (``content=''``) over the messages' stored text, with the tokenizer the
recheck uses, in one SQLite file per schema under ``HERMES_SEARCH_INDEX_DIR``.  A word FTS5
finds in the redacted text is a word of the stored text, so the index proposes every true match
and nothing a secret decides; messages newer than the index (``high``) are scanned as before.

The index is a cache: it holds no text (only the words' postings), is rebuilt when the schema's
``messages`` table is another one (loaded again), and is never backed up.  Hermes appends
messages and does not rewrite their text; the index reads a message once it is
:data:`SETTLE_SECONDS` old, so a transaction that committed late is not passed over.

Measured on the benchmark's 1M-message schema beside the revision before (``bench/benchmark.py
--baseline 292181f --postgres``, same rounds, ``docs/performance.md``): the rare-word search
1,511.8 → 14.4 ms, the common word 78.0 → 41.3 ms; building the index from nothing takes 54 s
and 360 MB, each later run reads only the new messages.
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from hermes_explorer import store

from . import pg

# Messages a statement of the build reads.
BATCH = 2_000
# A message is indexed once it is this old (ids are given out before their transaction commits).
SETTLE_SECONDS = 300
_IDENTITY = (
    "SELECT c.oid::bigint, c.relfilenode::bigint FROM pg_class c "
    "WHERE c.oid = to_regclass('messages')"
)


def _columns() -> tuple[str, ...]:
    shape = store.shape()
    return tuple(c for c in pg.COLUMNS if shape.has_column("messages", c))


def _path() -> Path:
    """This schema's index file (named by its URL without password, schema included)."""
    key = hashlib.sha256(store.name().encode()).hexdigest()[:24]
    return Path(settings.HERMES_SEARCH_INDEX_DIR) / f"{key}.sqlite3"


def _identity(budget: float) -> str:
    """Which ``messages`` table the schema has: another one when it is loaded again."""
    rows = store.rows(_IDENTITY, [], budget)
    return f"{rows[0][0]}:{rows[0][1]}" if rows and rows[0][0] is not None else ""


def _meta(conn: sqlite3.Connection) -> dict[str, str]:
    try:
        return dict(conn.execute("SELECT key, value FROM meta"))
    except sqlite3.OperationalError:  # not built yet
        return {}


@dataclass(frozen=True)
class LocalIndex:
    """A built index the request may use: every message up to ``high`` is in it."""

    path: Path
    high: int

    def ids(self, query: str, *, below: int, low: int, limit: int) -> list[int]:
        """Up to ``limit`` ids of messages matching the FTS5 ``query``, ``low <= id < below``,
        newest first."""
        conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
        try:
            return [
                row[0]
                for row in conn.execute(
                    "SELECT rowid FROM words WHERE words MATCH ? AND rowid < ? AND rowid >= ? "
                    "ORDER BY rowid DESC LIMIT ?",
                    [query, below, low, limit],
                )
            ]
        finally:
            conn.close()


def current(budget: float) -> LocalIndex | None:
    """The current schema's index, when it was built for this very ``messages`` table and the
    columns it has now; else None (the search scans)."""
    path = _path()
    if not path.exists():
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            meta = _meta(conn)
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    if meta.get("columns") != ",".join(_columns()) or not meta.get("identity"):
        return None
    if meta["identity"] != _identity(budget):
        return None
    return LocalIndex(path, int(meta.get("high") or 0))


@dataclass(frozen=True)
class Refreshed:
    added: int
    high: int
    rebuilt: bool


def refresh(budget: float, *, until: float | None = None) -> Refreshed:
    """Add the messages newer than the index (every one, the first time), each statement
    within ``budget`` seconds, stopping (resumable) at the monotonic time ``until``."""
    path = _path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    columns = _columns()
    identity = _identity(budget)
    rebuilt = False
    conn = sqlite3.connect(path)
    try:
        meta = _meta(conn)
        if meta and (meta.get("columns") != ",".join(columns) or meta.get("identity") != identity):
            conn.close()
            path.unlink()
            conn, meta, rebuilt = sqlite3.connect(path), {}, True
        if not meta:
            _create(conn, columns, identity)
        high = int(_meta(conn).get("high") or 0)
        added = 0
        select = (
            f"SELECT id, timestamp, {', '.join(columns)} FROM messages WHERE id > %s "
            "ORDER BY id LIMIT %s"
        )
        insert = (
            f"INSERT INTO words(rowid, {', '.join(columns)}) "
            f"VALUES (?, {', '.join('?' * len(columns))})"
        )
        while until is None or time.monotonic() < until:
            settled = time.time() - SETTLE_SECONDS
            rows = store.rows(select, [high, BATCH], budget)
            ready = []
            for row in rows:
                if row[1] is not None and row[1] > settled:
                    break
                ready.append((row[0], *(_text(value) for value in row[2:])))
            if ready:
                with conn:
                    conn.executemany(insert, ready)
                    high = ready[-1][0]
                    conn.execute("UPDATE meta SET value = ? WHERE key = 'high'", [str(high)])
                added += len(ready)
            if len(ready) < BATCH:
                break
        return Refreshed(added, high, rebuilt)
    finally:
        conn.close()


def _text(value):
    """A stored value as the index reads it (bytes as the text they hold)."""
    return (
        bytes(value).decode("utf-8", "replace") if isinstance(value, bytes | memoryview) else value
    )


def _create(conn: sqlite3.Connection, columns: tuple[str, ...], identity: str) -> None:
    conn.execute("PRAGMA journal_mode = WAL")
    with conn:
        # The recheck's tokenizer (FTS5's default, as :class:`.engine.Index` gives a schema).
        conn.execute(f"CREATE VIRTUAL TABLE words USING fts5({', '.join(columns)}, content='')")
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        conn.executemany(
            "INSERT INTO meta VALUES (?, ?)",
            [("columns", ",".join(columns)), ("identity", identity), ("high", "0")],
        )
