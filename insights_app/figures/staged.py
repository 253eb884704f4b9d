"""The pass on a rollback-journal file: ``per`` read in short statements, grouped in memory.

There Hermes cannot commit while our statement runs, and the pass over a busy window takes
most of a second.  So the per-session rows and their usage rows are read in short keyset
chunks (:func:`insights_app.window.window_chunks`) into a private in-memory SQLite database,
where the pass's own SQL runs holding no lock on the state.db.  Sums are added in another
order, so a cost may differ in its last binary digits.
"""

from __future__ import annotations

import json
import sqlite3

from django.db.backends.sqlite3.base import FORMAT_QMARK_REGEX

from hermes_explorer import store

from ..localtime import OffsetSegments
from ..window import Scope, window_chunks
from .per_session import COLUMNS, per_session

# The in-memory table that ``per`` reads from in the staged statement.
PER_TABLE = "per_rows"
USAGE_TABLE = "session_model_usage"


def staged_rows(scope: Scope, segments: OffsetSegments, sql: str) -> list[tuple]:
    """The rows of the pass ``sql`` over a copy of the window's rows (``PER_TABLE``)."""
    per = per_session(scope, segments)
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
        for rows in window_chunks(scope, per.columns, join=per.join, grouped=per.grouped):
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
