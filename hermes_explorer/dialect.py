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


# Search (sessions_app.search) ----------------------------------------------------------------


def text_window(column: str, chars: int, alias: str | None = None) -> str:
    """The first ``chars`` characters of ``column``.  SQLite's text functions stop at a NUL,
    so its multimodal content (``\\x00json:…``) is cut as bytes and its NUL put back;
    PostgreSQL text holds no NUL."""
    return pick(
        f"CASE WHEN substr(CAST({column} AS BLOB), 1, 1) = x'00' THEN char(0) || "
        f"substr(CAST(substr(CAST({column} AS BLOB), 2) AS TEXT), 1, {chars}) "
        f"ELSE substr({column}, 1, {chars}) END",
        f"substr({column}, 1, {chars})",
        alias,
    )


def like_ascii_case(alias: str | None = None) -> str:
    """A pattern match that ignores ASCII case, as SQLite's ``LIKE`` does (PostgreSQL's
    ``ILIKE`` ignores every case: the caller rechecks ASCII case where it matters)."""
    return pick("LIKE", "ILIKE", alias)
