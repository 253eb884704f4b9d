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
