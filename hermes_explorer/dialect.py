"""What differs between a SQLite file and a PostgreSQL schema, in one place: each fragment has
its SQLite text next to its PostgreSQL text (never one rewritten into the other).  ORM
expressions carry their PostgreSQL form as ``as_postgresql`` (:mod:`sessions_app.sqlfunctions`).
"""

from __future__ import annotations

from decimal import Decimal

from django.db import connections

from .hermes_db.current import current_alias


def postgres() -> bool:
    """Whether the store is a PostgreSQL schema."""
    return connections[current_alias()].vendor == "postgresql"


def pick(sqlite: str, postgresql: str) -> str:
    """The fragment for the store's dialect."""
    return postgresql if postgres() else sqlite


def greatest(a: str, b: str) -> str:
    """The larger of two values (SQLite's two-argument ``MAX``)."""
    return pick(f"MAX({a}, {b})", f"GREATEST({a}, {b})")


# Search (sessions_app.search) ----------------------------------------------------------------


def text_window(column: str, chars: int) -> str:
    """The first ``chars`` characters of ``column``.  SQLite's text functions stop at a NUL,
    so its multimodal content (``\\x00json:…``) is cut as bytes and its NUL put back;
    PostgreSQL text holds no NUL."""
    return pick(
        f"CASE WHEN substr(CAST({column} AS BLOB), 1, 1) = x'00' THEN char(0) || "
        f"substr(CAST(substr(CAST({column} AS BLOB), 2) AS TEXT), 1, {chars}) "
        f"ELSE substr({column}, 1, {chars}) END",
        f"substr({column}, 1, {chars})",
    )


def like_ascii_case() -> str:
    """A pattern match that ignores ASCII case, as SQLite's ``LIKE`` does (PostgreSQL's
    ``ILIKE`` ignores every case: the caller rechecks ASCII case where it matters)."""
    return pick("LIKE", "ILIKE")


# --- insights, people, failures and the home page --------------------------------------------


def stored_number(column: str) -> str:
    """Whether ``column`` holds a number (a SQLite column may hold any type; a PostgreSQL
    column holds its declared type, or NULL)."""
    return pick(f"typeof({column}) IN ('integer', 'real')", f"({column}) IS NOT NULL")


def truncated(expr: str) -> str:
    """``expr`` cut to an integer towards zero (PostgreSQL's cast would round it)."""
    return pick(f"CAST({expr} AS INTEGER)", f"CAST(trunc({expr}) AS BIGINT)")


def in_json_list(column: str) -> str:
    """``column`` is one of the values of the JSON array passed as the parameter."""
    return pick(
        f"{column} IN (SELECT value FROM json_each(%s))",
        f"{column} IN (SELECT json_array_elements_text(%s::json))",
    )


def json_pair(a: str, b: str) -> str:
    """A JSON array ``[a, b]`` as text."""
    return pick(f"json_array({a}, {b})", f"json_build_array({a}, {b})::text")


def highest_rowid(table: str) -> str:
    """The highest rowid of ``table`` (NULL on PostgreSQL, whose tables have none)."""
    return pick(f"(SELECT MAX(rowid) FROM {table})", "NULL")


def row_key(table: str) -> str:
    """The column that identifies a session row: SQLite's rowid, PostgreSQL's primary key."""
    return pick(f"{table}.rowid", f"{table}.id")


def plain(value):
    """A value read as SQLite gives it: PostgreSQL's sums of integers are ``numeric``
    (a :class:`~decimal.Decimal`), an int here when whole, else a float."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def tool_result_error(content: str, head: int, tail: int) -> str:
    """Whether a tool result reads as an error (the failures page's rule), looking at its
    first ``head`` and last ``tail`` characters."""
    return pick(
        f"""(
  substr({content}, 1, 5) = 'Error'
  OR instr(substr({content}, 1, {head}), '"error": "') > 0
  OR instr(substr({content}, 1, {head}), '"success": false') > 0
  OR instr(substr({content}, -{tail}), '"error": "') > 0
  OR substr({content}, -{tail}) GLOB '*"exit_code": [1-9-]*'
)""",
        f"""(
  left({content}, 5) = 'Error'
  OR strpos(left({content}, {head}), '"error": "') > 0
  OR strpos(left({content}, {head}), '"success": false') > 0
  OR strpos(right({content}, {tail}), '"error": "') > 0
  OR right({content}, {tail}) ~ '"exit_code": [1-9-]'
)""",
    )


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
