"""The project's own DDL for the layouts of Hermes's ``state.db``.

Hermes adds columns with ``ALTER TABLE ADD COLUMN`` whenever a newer version opens the file,
so the explorer meets files of different ages. Tests and the demo need a file of each layout,
written from documented facts about the file (never copied from Hermes). The three *shapes*
the demo can build:

``doc``
    Only the columns of the team's deployment doc, ``schema_version`` 12, an *inline*
    ``messages_fts``, no ``session_model_usage``, no trigram index and only three indexes.

``legacy``
    ``schema_version`` 21: the billing columns, lineage (``parent_session_id``,
    ``end_reason``, ``model_config``), ``tool_call_id``/``finish_reason`` on messages and
    ``session_model_usage``; still the inline FTS, no trigram, no daily usage, no
    ``state_meta``.

``current``
    ``schema_version`` 31: every column the explorer knows, ``system_prompts``,
    ``session_daily_usage``, ``state_meta``, all the documented indexes and the current
    full-text layout (:mod:`.fts`).

Besides the shapes, :mod:`.layouts` describes files as Hermes's own releases created them
(``v1``, ``v5``, ``v10``, ``v20``) and random subsets of the current layout
(:func:`random_layout`); every function here takes any of them.

Columns of the shapes are declared once, with the first shape that has them (:mod:`.columns`);
those of the releases in :mod:`.releases`. In every layout the FTS tables are kept in sync
with ``messages`` by triggers; the demo builder drops them around its bulk load
(:func:`drop_fts_triggers`), fills the indexes in one pass (:func:`rebuild_fts`) and puts
them back (:func:`create_fts_triggers`).
"""

from __future__ import annotations

import sqlite3

from .columns import (
    MESSAGES_COLUMNS,
    SCHEMA_VERSIONS,
    SESSION_DAILY_USAGE_COLUMNS,
    SESSION_MODEL_USAGE_COLUMNS,
    SESSIONS_COLUMNS,
    SHAPES,
    Column,
)
from .fts import (
    CJK_TABLE_SQL,
    TOOL_FTS_PREFIX_CHARS,
    TRIGRAM_EXCLUDED_SOURCES,
    fts_tables_sql,
    fts_trigger_names,
    fts_triggers_sql,
    plant_unloadable_cjk_table,
    rebuild_sql,
)
from .layouts import (
    FTS_INLINE,
    FTS_MESSAGES,
    FTS_VIEW,
    LAYOUTS,
    RELEASE_LAYOUTS,
    Layout,
    get_layout,
    random_layout,
)
from .tables import indexes_sql, tables_sql

__all__ = [
    "CJK_TABLE_SQL",
    "FTS_INLINE",
    "FTS_MESSAGES",
    "FTS_VIEW",
    "LAYOUTS",
    "MESSAGES_COLUMNS",
    "RELEASE_LAYOUTS",
    "SCHEMA_VERSIONS",
    "SESSIONS_COLUMNS",
    "SESSION_DAILY_USAGE_COLUMNS",
    "SESSION_MODEL_USAGE_COLUMNS",
    "SHAPES",
    "TOOL_FTS_PREFIX_CHARS",
    "TRIGRAM_EXCLUDED_SOURCES",
    "Column",
    "Layout",
    "create_fts_triggers",
    "create_schema",
    "drop_fts_triggers",
    "get_layout",
    "plant_unloadable_cjk_table",
    "random_layout",
    "rebuild_fts",
]


def _run(conn: sqlite3.Connection, statements: list[str]) -> None:
    """Run DDL in one transaction (executescript commits whatever was pending first)."""
    if statements:
        conn.executescript("BEGIN;\n" + ";\n".join(statements) + ";\nCOMMIT;")


def create_schema(conn: sqlite3.Connection, layout: str | Layout) -> None:
    """Create every table, index, FTS table and FTS trigger of ``layout`` on an empty file.

    ``layout`` is a shape, a release layout, ``random-N`` or a :class:`Layout`. Layouts with
    ``cjk`` (the current shape among them) also get the unloadable ``messages_fts_cjk``.
    """
    lay = get_layout(layout)
    _run(conn, tables_sql(lay) + indexes_sql(lay) + fts_tables_sql(lay) + fts_triggers_sql(lay))
    if lay.cjk:
        plant_unloadable_cjk_table(conn)


def create_fts_triggers(conn: sqlite3.Connection, layout: str | Layout) -> None:
    """(Re)create the triggers that keep the FTS tables in sync with ``messages``."""
    _run(conn, fts_triggers_sql(get_layout(layout)))


def drop_fts_triggers(conn: sqlite3.Connection, layout: str | Layout) -> None:
    """Drop the FTS triggers, for a bulk load followed by :func:`rebuild_fts`."""
    names = fts_trigger_names(get_layout(layout))
    _run(conn, [f"DROP TRIGGER IF EXISTS {name}" for name in names])


def rebuild_fts(conn: sqlite3.Connection, layout: str | Layout) -> None:
    """Rebuild the FTS indexes of ``layout`` from ``messages`` in one pass each.

    Used after a bulk load with the triggers dropped; far faster than a trigger per row.
    """
    _run(conn, rebuild_sql(get_layout(layout)))
