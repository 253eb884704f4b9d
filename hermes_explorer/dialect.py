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


# --- The old Datasette API (legacy_app.api) ------------------------------------------------
# Datasette's filters mean what SQLite does: LIKE folds ASCII letters only and has no escape
# character, GLOB is a case-sensitive match of the whole text (its PostgreSQL form is a
# regular expression, made by legacy_app.api.operators.glob_regex), a number is never equal
# to a text, and date() reads ISO text or a Julian day number.
def like(c: str, v: str, negate: bool = False) -> str:
    """``c LIKE v`` (``NOT LIKE``) as SQLite decides it (ILIKE under the C collation folds
    ASCII letters alone)."""
    return pick(
        f"{c} {'not like' if negate else 'like'} {v}",
        f"{c} collate \"C\" {'not ilike' if negate else 'ilike'} {v} escape ''",
    )


def glob(c: str, v: str) -> str:
    """``c GLOB v`` (on PostgreSQL, ``v`` is the pattern made into a regular expression)."""
    return pick(f"{c} glob {v}", f"{c} ~ {v}")


def as_text(c: str, number: str) -> str:
    """A number (an ``integer`` or ``real`` column) as SQLite writes it as text (a real
    always with a decimal point: 2.0)."""
    if number != "real":
        return pick(c, f"{c}::text")
    return pick(
        c,
        f"case when {c} = trunc({c}) and abs({c}) < 1e15 then trunc({c})::bigint || '.0' "
        f"else {c}::text end",
    )


def json_strings(t: str, c: str) -> str:
    """The text items of the JSON array (or lone value) in column ``c`` of table ``t`` (or
    an expression ``c`` of it on PostgreSQL), one row each."""
    j = f"({c})::jsonb"
    return pick(
        f"select value from json_each({t}.{c})",
        f"select e #>> '{{}}' from jsonb_array_elements(case jsonb_typeof({j}) "
        f"when 'array' then {j} else jsonb_build_array({j}) end) e "
        "where jsonb_typeof(e) = 'string'",
    )


def json_values(c: str) -> str:
    """A source ``j`` of rows whose ``value`` is each item of the JSON array in ``c``."""
    return pick(
        f"json_each({c}) j",
        f"jsonb_array_elements_text(case jsonb_typeof({c}::jsonb) when 'array' then {c}::jsonb "
        f"else jsonb_build_array({c}::jsonb) end) j(value)",
    )


def sqlite_date(c: str, number: str) -> str:
    """SQLite's ``date(c)``: ``YYYY-MM-DD`` of ISO text, or of a Julian day number."""
    if not postgres():
        return f"date({c})"
    if number:
        return (
            f"case when {c} >= 1721425.5 and {c} < 5373484.5 then "
            f"to_char(to_date(floor({c} + 0.5)::bigint::text, 'J'), 'YYYY-MM-DD') end"
        )
    return (
        f"case when {c} ~ '^\\d{{4}}-\\d\\d-\\d\\d([ T]\\d\\d:\\d\\d(:\\d\\d(\\.\\d+)?)?)?Z?$' "
        f"then left({c}, 10) end"
    )


def stored_order() -> list[str]:
    """What orders rows SQLite returns in the order they were stored (a table scan): nothing
    there, the rows' physical place on PostgreSQL."""
    return ["ctid"] if postgres() else []


def sqlite_order(c: str, desc: bool, text: bool) -> str:
    """``ORDER BY c [DESC]`` in SQLite's order: NULLs first ascending, text by code point."""
    if not postgres():
        return f"{c} desc" if desc else c
    c = f'{c} collate "C"' if text else c
    return f"{c} desc nulls last" if desc else f"{c} nulls first"
