"""What a figure is, and the one statement (``WITH per AS MATERIALIZED (…) SELECT … UNION ALL
…``) of every figure's ``SELECT``\\ s over the per-session rows ``per``, so the pass reads the
window's sessions once however many figures there are.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.backends.sqlite3.base import FORMAT_QMARK_REGEX

from hermes_explorer import dialect, store

from ..localtime import OffsetSegments
from ..window import Scope, window_chunks
from .per_session import COLUMNS, per_session, per_session_cte, usage_cte

TOKEN_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
# The in-memory tables the staged statement reads (:func:`staged_rows`).
PER_TABLE = "per_rows"
USAGE_TABLE = "session_model_usage"

# A decoded row: the part's key and its columns by name.
Row = tuple[Any, dict[str, Any]]


@dataclass(frozen=True)
class Part:
    """One ``SELECT`` of the pass: ``SELECT <key>, <columns…> <source>``."""

    key: str
    columns: tuple[tuple[str, str], ...]  # (name, SQL expression), in order
    source: str  # FROM per … (WHERE, GROUP BY, ORDER BY, LIMIT)


@dataclass(frozen=True)
class Figure:
    """A named figure: the parts it adds to the pass and how its rows become its value."""

    name: str
    parts: Callable[[Scope], list[Part]]
    decode: Callable[[Scope, list[Row]], Any]
    # Its parts read ``uses``, the usage rows (:func:`.per_session.usage_cte`).
    usage_rows: bool = False


def statement(
    scope: Scope, segments: OffsetSegments, figures: Sequence[Figure], *, per_table: str = ""
) -> tuple[str, dict[str, list[str]]]:
    """The single statement of every part of ``figures``, and each figure's column names
    (``per_table``: ``per`` is that table's rows, without parameters)."""
    planned = [(figure, figure.parts(scope)) for figure in figures]
    width = max(len(part.columns) for _, parts in planned for part in parts)
    # PostgreSQL gives each column of a UNION one type: there a part's values are one JSON
    # array (numbers stay numbers), which :func:`compute` unpacks.
    postgres = dialect.postgres() and not per_table
    selects = []
    names: dict[str, list[str]] = {}
    for figure, parts in planned:
        names[figure.name] = [name for name, _ in parts[0].columns]
        for part in parts:
            if [name for name, _ in part.columns] != names[figure.name]:
                raise ValueError(f"the parts of figure {figure.name!r} name different columns")
            columns = [sql for _, sql in part.columns]
            if postgres:
                named = ", ".join(f"{sql} AS c{i}" for i, sql in enumerate(columns))
                values = ", ".join(f"c{i}" for i in range(len(columns)))
                selects.append(
                    f"SELECT f, json_build_array(k, {values}) FROM (SELECT"
                    f" '{figure.name}' AS f, {part.key} AS k, {named} {part.source}) AS part"
                )
                continue
            columns += ["NULL"] * (width - len(part.columns))
            # A subquery, so that a part may have its own ORDER BY and LIMIT.
            selects.append(
                f"SELECT * FROM (SELECT '{figure.name}', {part.key}, {', '.join(columns)}"
                f" {part.source})"
            )
    per = (
        f"per AS MATERIALIZED (SELECT * FROM {per_table})"
        if per_table
        else per_session_cte(scope, segments)
    )
    if scope.has_usage and any(figure.usage_rows for figure in figures):
        per += ",\n" + usage_cte(scope)
    sql = f"WITH {per}\n" + "\nUNION ALL\n".join(selects)
    return sql, names


def compute(scope: Scope, segments: OffsetSegments, figures: Sequence[Figure]) -> dict[str, Any]:
    """Every figure's value, by name, from one run of :func:`statement` (over a copy read in
    short statements, :func:`staged_rows`, when the window needs it)."""
    if scope.read_in_chunks:
        sql, names = statement(scope, segments, figures, per_table=PER_TABLE)
        found = staged_rows(scope, segments, sql)
    else:
        sql, names = statement(scope, segments, figures)
        found = store.rows(sql, scope.params)
        if dialect.postgres():
            found = [(name, *values) for name, values in found]
    rows: dict[str, list[Row]] = {figure.name: [] for figure in figures}
    for name, key, *values in found:
        # zip() stops at the figure's own columns: the NULL padding is dropped.
        rows[name].append((key, dict(zip(names[name], values, strict=False))))
    return {figure.name: figure.decode(scope, rows[figure.name]) for figure in figures}


def staged_rows(scope: Scope, segments: OffsetSegments, sql: str) -> list[tuple]:
    """The rows of the pass ``sql`` over a copy of the window's rows (``PER_TABLE``), on a
    rollback-journal file: there Hermes cannot commit while our statement runs, so the
    per-session rows and their usage rows are read in short keyset chunks into a private
    in-memory database, where the pass runs holding no lock on the state.db (sums are added
    in another order: a cost may differ in its last binary digits)."""
    columns, join = per_session(scope, segments)
    usage = scope.shape.column_order.get(USAGE_TABLE, ()) if scope.has_usage else ()
    memory = sqlite3.connect(":memory:")
    try:
        memory.execute(f"CREATE TABLE {PER_TABLE} ({_names(COLUMNS)})")
        insert_per = f"INSERT INTO {PER_TABLE} VALUES ({', '.join('?' * len(COLUMNS))})"
        if usage:
            memory.execute(f"CREATE TABLE {USAGE_TABLE} ({_names(usage)})")
            insert_usage = f"INSERT INTO {USAGE_TABLE} VALUES ({', '.join('?' * len(usage))})"
            read_usage = (
                f"SELECT {_names(usage)} FROM {USAGE_TABLE}"
                " WHERE session_id IN (SELECT value FROM json_each(%s))"
            )
        for rows in window_chunks(scope, columns, join=join):
            memory.executemany(insert_per, rows)
            if usage:
                ids = json.dumps([row[0] for row in rows if row[0] is not None])
                memory.executemany(insert_usage, store.rows(read_usage, [ids]))
        # Written for the state.db's connection ("%%"); no parameters remain here.
        return memory.execute(FORMAT_QMARK_REGEX.sub("?", sql).replace("%%", "%")).fetchall()
    finally:
        memory.close()


def _names(columns) -> str:
    return ", ".join('"' + c.replace('"', '""') + '"' for c in columns)


def as_int(value) -> int:
    return int(value) if value is not None else 0


def as_float(value) -> float:
    return float(value) if value is not None else 0.0
