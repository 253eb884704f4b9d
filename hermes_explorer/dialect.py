"""What differs between a SQLite file and a PostgreSQL schema, in one place.

Queries are written once; where the two dialects need different SQL, the query asks for the
fragment here, and each fragment has its SQLite text next to its PostgreSQL text (never one
rewritten into the other). ORM expressions carry their PostgreSQL form as ``as_postgresql``
(:mod:`sessions_app.sqlfunctions`).
"""

from __future__ import annotations

from django.db import connections

from .hermes_db.current import current_alias


def postgres(alias: str | None = None) -> bool:
    """Whether the store is a PostgreSQL schema."""
    return connections[alias or current_alias()].vendor == "postgresql"


def pick(sqlite: str, postgresql: str, alias: str | None = None) -> str:
    """The fragment for the store's dialect."""
    return postgresql if postgres(alias) else sqlite


def greatest(a: str, b: str, alias: str | None = None) -> str:
    """The larger of two values (SQLite's two-argument ``MAX``)."""
    return pick(f"MAX({a}, {b})", f"GREATEST({a}, {b})", alias)


# --- the session page -------------------------------------------------------------------------


def lineage_key(started_at: str, session_id: str) -> str:
    """A text key that sorts sessions by start time, then id (a step of a family tree's path);
    compare it with :func:`binary_order` (PostgreSQL's collation would skip the separators)."""
    return pick(
        f"printf('%%020.6f|%%s', {started_at}, {session_id})",
        f"to_char(COALESCE({started_at}, 0), 'FM0000000000000.000000') || '|' || {session_id}",
    )


def binary_order(expression: str) -> str:
    """``expression`` compared character by character, as SQLite compares text."""
    return pick(expression, f'{expression} COLLATE "C"')


def field_head(column: str, chars: int, declared: str) -> str:
    """The first ``chars`` characters of a column's value when it is text, else the value
    (SQLite asks each value its type, PostgreSQL's columns are ``declared``)."""
    if not postgres():
        return f"CASE WHEN typeof({column}) = 'text' THEN substr({column}, 1, {chars}) ELSE {column} END"
    return f"left({column}, {chars})" if declared in ("text", "character varying") else column
