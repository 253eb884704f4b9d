"""What a tool call is, in SQL, once for every page that counts or times calls (the definition
and its reasons: ``docs/tool-calls.md``).

A call is a ``tool`` row answering the nearest earlier assistant row of its session whose
``tool_calls`` holds its ``tool_call_id``; it counts once however many copies compaction made.
A file without ``tool_call_id`` counts every ``tool`` row as an untimed call.
"""

from __future__ import annotations

from dataclasses import astuple, dataclass

from hermes_explorer import store

# The calls of an assistant row's ``tool_calls`` as a JSON array (one object becomes a list of
# one; malformed JSON, none).  Only valid JSON reaches the JSON functions.
_ARRAY = (
    "CASE WHEN json_valid({a}.tool_calls) THEN CASE json_type({a}.tool_calls)"
    " WHEN 'array' THEN {a}.tool_calls WHEN 'object' THEN json_array(json({a}.tool_calls))"
    " END END"
)
# The call objects of ``{a}`` whose id is the result's call id.
_MATCHING = (
    "SELECT {what} FROM json_each(" + _ARRAY + ") AS j"
    " WHERE j.type = 'object' AND json_extract(j.value, '$.id') = {t}.tool_call_id"
)
_NEAREST = (
    "SELECT c.id FROM messages c WHERE c.session_id = {t}.session_id AND c.id < {t}.id"
    " AND c.role = 'assistant' AND c.tool_calls IS NOT NULL"
    " AND instr(c.tool_calls, {t}.tool_call_id) > 0"
    " AND EXISTS (" + _MATCHING.format(what="1", a="c", t="{t}") + ")"
    " ORDER BY c.id DESC LIMIT 1"
)
_CALL_NAME = _MATCHING.format(
    what="COALESCE(json_extract(j.value, '$.function.name'), json_extract(j.value, '$.name'))",
    a="{a}",
    t="{t}",
)


@dataclass(frozen=True)
class CallSQL:
    """The parts of a statement over results ``t`` joined to the rows that called them ``a``:
    ``joins`` (after ``FROM messages t``), ``where`` (the results that are calls, counted
    once), and the columns ``name``, ``seconds`` (NULL when untimed), ``together`` (calls of
    the assistant row) and ``active``, ``compacted``, ``display_kind`` (NULL when absent)."""

    joins: str
    where: str
    name: str
    seconds: str
    together: str
    active: str
    compacted: str
    display_kind: str

    @property
    def columns(self) -> str:
        """Every column, in field order (after ``joins`` and ``where``)."""
        return ", ".join(astuple(self)[2:])


def call_sql(shape=None, t: str = "t", a: str = "a", outer: bool = False) -> CallSQL:
    """The definition for this file, over results aliased ``t`` and their callers ``a``
    (``outer``: a ``LEFT JOIN``, for statements that read other rows too)."""
    shape = shape or store.shape()
    has = lambda column: shape.has_column("messages", column)  # noqa: E731
    where = [f"{t}.role = 'tool'"]
    if has("active") and has("message_uid"):
        where.append(
            f"NOT (COALESCE({t}.active, 1) = 0 AND {t}.message_uid IS NOT NULL AND EXISTS ("
            f"SELECT 1 FROM messages d WHERE d.session_id = {t}.session_id"
            f" AND d.message_uid = {t}.message_uid AND d.id <> {t}.id"
            f" AND (d.active = 1 OR d.id < {t}.id)))"
        )
    named = f"NULLIF({t}.tool_name, '')" if has("tool_name") else "NULL"
    state = {c: f"{t}.{c}" if has(c) else "NULL" for c in ("active", "compacted", "display_kind")}
    if not has("tool_call_id"):
        return CallSQL("", " AND ".join(where), f"COALESCE({named}, '?')", "NULL", "1", **state)
    # ``CASE``: the search runs only for results with a call id (SQLite computes the key of
    # the join before any other term, and a search for no id walks the whole session).
    joins = f"{'LEFT ' if outer else ''}JOIN messages {a} ON {a}.id = CASE WHEN {t}.role = 'tool'"
    joins += f" AND {t}.tool_call_id <> '' THEN (" + _NEAREST.format(t=t) + ") END"
    where += [f"{t}.tool_call_id IS NOT NULL", f"{t}.tool_call_id <> ''", f"{a}.id IS NOT NULL"]
    seconds = f"{t}.timestamp - {a}.timestamp" if has("timestamp") else "NULL"
    return CallSQL(
        joins=joins,
        where=" AND ".join(where),
        name=f"COALESCE({named}, ({_CALL_NAME.format(a=a, t=t)} LIMIT 1), '?')",
        seconds=seconds,
        together=f"json_array_length({_ARRAY.format(a=a)})",
        **state,
    )


def session_calls(session_id: str, ids=None) -> list[tuple]:
    """Every call of one session (whose results are ``ids``, when given): ``(result id, name,
    seconds, together, active, compacted, display_kind)`` in id order (the name as stored:
    redact it before showing it)."""
    sql = call_sql()
    only = ""
    if ids is not None:
        only = f" AND t.id IN ({', '.join(['%s'] * len(ids))})" if ids else " AND 0"
    return store.rows(
        f"SELECT t.id, {sql.columns} FROM messages t {sql.joins}"
        f" WHERE t.session_id = %s AND {sql.where}{only} ORDER BY t.id",
        [session_id, *(ids or ())],
    )
