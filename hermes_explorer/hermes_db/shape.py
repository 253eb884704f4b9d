"""Which shape of state.db is this? Detected from the file, never from its version number.

A newer Hermes adds columns whenever it opens a file, so a file can mix old and new.  We read
``sqlite_master`` and ``PRAGMA table_info`` and cache the result per file and schema cookie.
Virtual tables are only read as text: opening ``messages_fts_cjk`` needs a tokenizer we lack.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
from dataclasses import dataclass, field

from django.utils import translation
from django.utils.translation import gettext, gettext_noop

from .catalog import Catalog, read_catalog
from .uri import path_of

# The plain tables whose columns the explorer reads.
KNOWN_TABLES = (
    "sessions",
    "messages",
    "session_model_usage",
    "session_daily_usage",
    "state_meta",
    "system_prompts",
    "schema_version",
)


@dataclass(frozen=True)
class StoreShape:
    schema_version: int | None
    tables: frozenset[str]
    columns: dict[str, frozenset[str]] = field(default_factory=dict)
    # The same columns in the table's own order (for "every recorded field").
    column_order: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # "external", "inline", "postgres tsvector" or None when there is no index
    fts_layout: str | None = None
    has_trigram: bool = False
    # Every table and view of the file, for the old Datasette API (see catalog.py).
    catalog: Catalog = field(default_factory=Catalog)

    def has_table(self, table: str) -> bool:
        return table in self.tables

    def has_column(self, table: str, column: str) -> bool:
        return column in self.columns.get(table, ())

    def column_or_null(self, table: str, column: str, alias: str = "") -> str:
        """``alias.column`` for a statement, or ``NULL`` where the store's table lacks it."""
        if not self.has_column(table, column):
            return "NULL"
        return f"{alias}.{column}" if alias else column

    def missing_columns(self, table: str, wanted) -> set[str]:
        present = self.columns.get(table, frozenset())
        return {c for c in wanted if c not in present}

    def not_recorded(self) -> list[str]:
        """What this file does not record, in readers' words (most noticeable first)."""
        return [what for what, table, column in OPTIONAL_DATA if not self._records(table, column)]

    def _records(self, table: str, column: str | None) -> bool:
        if table == "messages_fts":
            # Any full-text layout: FTS5 tables, or PostgreSQL's tsvector column.
            return self.fts_layout is not None
        return self.has_column(table, column) if column else self.has_table(table)

    @property
    def label(self) -> str:
        """:attr:`display_label` in English, for ``/healthz`` and the metrics."""
        with translation.override(None):
            return self.display_label

    @property
    def display_label(self) -> str:
        """An honest name for the file, in the page's language: its schema version, whether
        it is the current layout, and the first things it lacks."""
        version = f"v{self.schema_version}" if self.schema_version is not None else None
        current = self.has_table("system_prompts") or self.has_column("messages", "active")
        missing = self.not_recorded()
        detail = gettext("current layout") if current and not missing else gettext("older layout")
        if missing:
            detail += ", " + ", ".join(
                gettext("no %(what)s") % {"what": gettext(m)} for m in missing[:2]
            )
        if version is None:
            return gettext("Hermes schema unversioned (%(detail)s)") % {"detail": detail}
        return gettext("Hermes schema %(version)s (%(detail)s)") % {
            "version": version,
            "detail": detail,
        }

    def not_recorded_labels(self) -> list[str]:
        """:meth:`not_recorded` in the page's language."""
        return [gettext(what) for what in self.not_recorded()]


# Optional data a state.db may lack, as a reader names it: (what, table, column or None).
OPTIONAL_DATA = (
    (gettext_noop("per-model usage"), "session_model_usage", None),
    (gettext_noop("reasoning"), "messages", "reasoning"),
    (gettext_noop("titles"), "sessions", "title"),
    (gettext_noop("cost estimates"), "sessions", "estimated_cost_usd"),
    (gettext_noop("cache tokens"), "sessions", "cache_read_tokens"),
    (gettext_noop("reasoning tokens"), "sessions", "reasoning_tokens"),
    (gettext_noop("tool call counts"), "sessions", "tool_call_count"),
    (gettext_noop("finish reasons"), "messages", "finish_reason"),
    (gettext_noop("history edits (compaction, rewind)"), "messages", "active"),
    (gettext_noop("daily usage"), "session_daily_usage", None),
    (gettext_noop("full-text index"), "messages_fts", None),
)


# Shapes seen by this process, keyed by file and schema cookie (so never stale); bounded.
# Introspecting a file takes about a millisecond, once per process and schema.
_cache: dict[tuple, StoreShape] = {}
_lock = threading.Lock()
LOCAL_SHAPES = 64


def detect_shape(conn: sqlite3.Connection, name: str) -> StoreShape:
    cookie = conn.execute("PRAGMA schema_version").fetchone()[0]
    try:
        stat = os.stat(path_of(name))
        key = (name, stat.st_dev, stat.st_ino, cookie)
    except OSError:
        key = (name, None, None, cookie)
    with _lock:
        shape = _cache.get(key)
    if shape is None:
        shape = _introspect(conn)
        with _lock:
            while len(_cache) >= LOCAL_SHAPES:
                _cache.pop(next(iter(_cache)))
            _cache[key] = shape
    return shape


def _schema_version(conn: sqlite3.Connection, tables) -> int | None:
    if "schema_version" not in tables:
        return None
    try:
        row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
        return int(row[0]) if row and row[0] is not None else None
    except (sqlite3.Error, ValueError, TypeError):
        return None


_CONTENT_OPTION = re.compile(r"content\s*=\s*'?([A-Za-z0-9_]+)'?", re.IGNORECASE)


def _introspect(conn: sqlite3.Connection) -> StoreShape:
    master = conn.execute(
        "SELECT name, type, sql FROM sqlite_master WHERE type IN ('table', 'view')"
    ).fetchall()
    tables = frozenset(name for name, _type, _sql in master)
    sql_of = {name: sql or "" for name, _type, sql in master}
    column_order = {}
    for table in KNOWN_TABLES:
        if table in tables:
            rows = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
            column_order[table] = tuple(row[1] for row in rows)
    columns = {table: frozenset(names) for table, names in column_order.items()}
    fts_layout = None
    if "messages_fts" in tables:
        match = _CONTENT_OPTION.search(sql_of["messages_fts"])
        fts_layout = "external" if match and match.group(1) else "inline"
    return StoreShape(
        schema_version=_schema_version(conn, tables),
        tables=tables,
        columns=columns,
        column_order=column_order,
        fts_layout=fts_layout,
        has_trigram="messages_fts_trigram" in tables,
        catalog=read_catalog(conn),
    )
