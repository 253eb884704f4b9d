"""CREATE TABLE and CREATE INDEX statements of a layout (the full-text tables are in
:mod:`.fts`)."""

from __future__ import annotations

from .columns import Column
from .layouts import Layout


def _columns_sql(columns: tuple[Column, ...]) -> str:
    return ",\n    ".join(f"{c.name} {c.decl}" for c in columns)


def tables_sql(layout: Layout) -> list[str]:
    statements = []
    if layout.schema_version is not None:
        statements += [
            "CREATE TABLE schema_version (version INTEGER NOT NULL)",
            f"INSERT INTO schema_version (version) VALUES ({layout.schema_version})",
        ]
    statements += [
        f"CREATE TABLE sessions (\n    {_columns_sql(layout.sessions)}\n)",
        f"CREATE TABLE messages (\n    {_columns_sql(layout.messages)}\n)",
    ]
    if layout.model_usage:
        statements.append(
            "CREATE TABLE session_model_usage (\n"
            f"    {_columns_sql(layout.model_usage)},\n"
            f"    PRIMARY KEY ({', '.join(layout.model_usage_key)})\n)"
        )
    if layout.system_prompts:
        statements.append(
            "CREATE TABLE system_prompts (hash TEXT PRIMARY KEY, prompt TEXT NOT NULL)"
        )
    if layout.daily_usage:
        statements.append(
            "CREATE TABLE session_daily_usage (\n"
            f"    {_columns_sql(layout.daily_usage)},\n"
            "    PRIMARY KEY (session_id, day)\n)"
        )
    if layout.state_meta:
        statements.append("CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT)")
    return statements


def indexes_sql(layout: Layout) -> list[str]:
    return [index.sql for index in layout.usable_indexes()]
