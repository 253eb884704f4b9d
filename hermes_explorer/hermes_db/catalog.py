"""Every table and view of a state.db, as Datasette listed them (for the old Datasette API):
columns, keys, and which tables it hid (full-text tables and their shadows).  Virtual tables
are never opened (one whose tokenizer is missing fails): their columns come from their text.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field

# SQLite's statistics tables: Datasette hid them too.
STAT_TABLES = frozenset({"sqlite_stat1", "sqlite_stat2", "sqlite_stat3", "sqlite_stat4"})
_FTS_DECLARATION = re.compile(r"VIRTUAL\s+TABLE.*USING\s+FTS", re.IGNORECASE | re.DOTALL)
_ARGUMENTS = re.compile(r"\((.*)\)\s*$", re.DOTALL)


@dataclass(frozen=True)
class ForeignKey:
    column: str
    other_table: str
    other_column: str | None


@dataclass(frozen=True)
class TableInfo:
    name: str
    columns: tuple[str, ...]
    types: tuple[str, ...] = ()
    pks: tuple[str, ...] = ()
    foreign_keys: tuple[ForeignKey, ...] = ()
    virtual: bool = False
    sql: str = ""

    @property
    def use_rowid(self) -> bool:
        """Tables without a declared primary key are paged by ``rowid``, as Datasette did."""
        return not self.pks


@dataclass(frozen=True)
class Catalog:
    tables: dict[str, TableInfo] = field(default_factory=dict)
    views: tuple[str, ...] = ()
    hidden: frozenset[str] = frozenset()

    def table(self, name: str) -> TableInfo | None:
        return self.tables.get(name)

    def fts_table(self, table: str) -> str | None:
        """The full-text table Datasette would search for ``table``: one declared with
        ``content="table"`` (or ``[table]``), or the table itself when it is one."""
        for info in self.tables.values():
            if not info.virtual or not _FTS_DECLARATION.search(info.sql):
                continue
            if f'content="{table}"' in info.sql or f"content=[{table}]" in info.sql:
                return info.name
            if info.name == table:
                return info.name
        return None

    def incoming(self, table: str) -> list[dict]:
        """Foreign keys of other tables that point at ``table`` (Datasette's "incoming")."""
        return [
            {"other_table": other.name, "column": fk.other_column, "other_column": fk.column}
            for other in self.tables.values()
            for fk in other.foreign_keys
            if fk.other_table == table
        ]


def _virtual_columns(sql: str) -> tuple[str, ...]:
    """Column names of ``CREATE VIRTUAL TABLE … USING fts5(a, b, content='x', …)``."""
    match = _ARGUMENTS.search(sql or "")
    if not match:
        return ()
    args = (arg.strip() for arg in _split_arguments(match.group(1)))
    return tuple(arg.split()[0].strip("\"'`[]") for arg in args if arg and "=" not in arg)


def _split_arguments(text: str) -> list[str]:
    parts, depth, open_quote, current = [], 0, None, []
    for ch in text:
        if open_quote:
            current.append(ch)
            if ch == open_quote:
                open_quote = None
            continue
        if ch in "'\"`":
            open_quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(ch)
    parts.append("".join(current))
    return parts


def quote(name: str) -> str:
    """An identifier, always double-quoted (any name is safe this way)."""
    return '"' + name.replace('"', '""') + '"'


def _plain_table(conn: sqlite3.Connection, name: str, sql: str) -> TableInfo:
    try:
        info = conn.execute(f"PRAGMA table_xinfo({quote(name)})").fetchall()
    except sqlite3.Error:
        info = conn.execute(f"PRAGMA table_info({quote(name)})").fetchall()
    # (cid, name, type, notnull, default, pk[, hidden])
    keyed = sorted((row for row in info if row[5]), key=lambda row: row[5])
    fk_rows = conn.execute(f"PRAGMA foreign_key_list({quote(name)})").fetchall()
    ids = [row[0] for row in fk_rows]
    foreign_keys = tuple(
        ForeignKey(column=row[3], other_table=row[2], other_column=row[4])
        for row in fk_rows
        if ids.count(row[0]) == 1  # compound foreign keys are left out, as Datasette did
    )
    return TableInfo(
        name=name,
        columns=tuple(row[1] for row in info),
        types=tuple(row[2] or "" for row in info),
        pks=tuple(row[1] for row in keyed),
        foreign_keys=foreign_keys,
        sql=sql,
    )


def read_catalog(conn: sqlite3.Connection) -> Catalog:
    master = conn.execute(
        "SELECT name, type, sql, rootpage FROM sqlite_master WHERE type IN ('table', 'view')"
    ).fetchall()
    tables: dict[str, TableInfo] = {}
    views = []
    hidden = set()
    for name, kind, sql, rootpage in master:
        if kind == "view":
            views.append(name)
            continue
        if not rootpage:  # a virtual table
            tables[name] = TableInfo(
                name=name, columns=_virtual_columns(sql), virtual=True, sql=sql or ""
            )
            if _FTS_DECLARATION.search(sql or ""):
                hidden.add(name)
        else:
            tables[name] = _plain_table(conn, name, sql or "")
        if name in STAT_TABLES:
            hidden.add(name)
    # A table whose name starts with a hidden one's is its shadow table (messages_fts_data).
    hidden |= {name for name in tables if any(name.startswith(h) for h in hidden)}
    return Catalog(tables=tables, views=tuple(views), hidden=frozenset(hidden))
