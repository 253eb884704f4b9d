"""The Django database backend for a Hermes profile kept in a PostgreSQL schema.

Django's PostgreSQL backend, read-only in PostgreSQL's own terms: a read-only session, and
every statement alone in a ``BEGIN READ ONLY`` transaction rolled back once its rows are in
(``base.ReadOnlyCursor``).  Nothing lives on the server between two statements (no
server-side cursor, no prepared statement), so it works behind PgBouncer in transaction mode.
The shape is read from ``pg_catalog`` into the same ``StoreShape`` as SQLite's.
"""

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import dj_database_url

SCHEMES = ("postgresql://", "postgres://")
# What Hermes accepts as a schema name: a lowercase identifier (and never pg_…).
SCHEMA_NAME = re.compile(r"^(?!pg_)[a-z_][a-z0-9_]{0,62}$")
ENGINE = "hermes_explorer.hermes_pg"


def is_postgres(source: str) -> bool:
    return source.startswith(SCHEMES)


def split_source(source: str) -> tuple[str, str]:
    """``(conninfo URL, schema)`` of ``postgresql://…?schema=name`` (``public`` when unsaid)."""
    parts = urlsplit(source)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schema = next((v for k, v in query if k == "schema"), "public")
    rest = urlencode([(k, v) for k, v in query if k != "schema"])
    return urlunsplit(parts._replace(query=rest)), schema


def shown(source: str) -> str:
    """``source`` without its password, fit to show."""
    parts = urlsplit(source)
    if parts.password is None:
        return source
    netloc = parts.netloc.rpartition("@")
    user = netloc[0].partition(":")[0]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc[2]}"))


def database_settings(source: str, like: dict, problem: str = "") -> dict:
    """The Django settings of an alias reading ``source``, from the ``like`` alias's (its
    deadline and read-only layers); with ``problem``, every connection fails with it."""
    conninfo, schema = split_source(source) if is_postgres(source) else ("", "public")
    if not problem and not SCHEMA_NAME.match(schema):
        problem = f"invalid schema name: {schema!r}"
    parsed = dj_database_url.parse(conninfo) if conninfo else {"NAME": "", "OPTIONS": {}}
    return {
        **like,
        **parsed,
        "ENGINE": ENGINE,
        "OPTIONS": parsed.get("OPTIONS", {}),
        # Kept, and checked before each use (one may have been closed by the server).
        "CONN_MAX_AGE": 60,
        "CONN_HEALTH_CHECKS": True,
        # The ORM's iterator() reads client-side too (PgBouncer in transaction mode).
        "DISABLE_SERVER_SIDE_CURSORS": True,
        # Like ``hermes``, a store Django's test machinery must never create nor flush.
        "TEST": {**like.get("TEST", {}), "MIRROR": "hermes"},
        "HERMES_SOURCE": source,
        "HERMES_SCHEMA": schema,
        "HERMES_PROBLEM": problem,
    }
