"""What a tool call is (``docs/tool-calls.md``), in SQL, for every page that counts or times
calls.  PostgreSQL 14 and 15 cannot test whether a text is JSON without failing the statement,
so there one session's calls are paired in Python by the same definition.
"""

from __future__ import annotations

import json
from dataclasses import astuple, dataclass

from hermes_explorer import dialect, store

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
    """A statement over results ``t`` and their callers ``a``: ``joins`` (after ``FROM messages
    t``), ``where`` (the results that are calls, once) and the columns (NULL where absent)."""

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
    """The definition over results ``t`` and their callers ``a`` (``outer``: a ``LEFT JOIN``)."""
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
    state = {
        c: shape.column_or_null("messages", c, t) for c in ("active", "compacted", "display_kind")
    }
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
    """Every call of one session (whose results are ``ids``, when given): ``(result id, name as
    stored, seconds, together, active, compacted, display_kind)`` in id order."""
    if dialect.postgres():
        return _paired_in_python(session_id, ids)
    sql = call_sql()
    only = ""
    if ids is not None:
        only = f" AND t.id IN ({store.marks(ids)})" if ids else " AND 0"
    return store.rows(
        f"SELECT t.id, {sql.columns} FROM messages t {sql.joins}"
        f" WHERE t.session_id = %s AND {sql.where}{only} ORDER BY t.id",
        [session_id, *(ids or ())],
    )


# Older assistant rows read at a time, newest first, while a result's caller is not found.
CALLERS_AT_A_TIME = 500


def _paired_in_python(session_id: str, ids=None) -> list[tuple]:
    """:func:`session_calls` by the definition above, over the session's rows read plainly.

    With ``ids`` (a page of results) only the rows from the first to the last of them are read,
    then older assistant rows, newest first and a few hundred at a time, while a result's caller
    is still to find: a page of a 30,000-message session reads about one page of rows, not the
    whole session (performance code: its timeline page against the revision before, in the
    same benchmark rounds, in ``docs/performance.md``)."""
    shape = store.shape()
    names = ("tool_calls", "tool_call_id", "tool_name", "timestamp", "message_uid")
    names += ("active", "compacted", "display_kind")
    present = [shape.column_or_null("messages", n) for n in names]
    if present[0] != "NULL":  # the calls, read on the rows that make them only
        present[0] = "CASE WHEN role = 'assistant' THEN tool_calls END"
    select = f"SELECT id, role, {', '.join(present)} FROM messages WHERE session_id = %s"
    if ids is None:
        rows = store.rows(select + " ORDER BY id", [session_id])
    elif not ids:
        return []
    else:
        rows = store.rows(
            select + " AND id BETWEEN %s AND %s ORDER BY id", [session_id, min(ids), max(ids)]
        )
    uids: dict[str, list[tuple]] = {}
    if ids is None:
        for row in rows:
            if row[6] is not None:
                uids.setdefault(row[6], []).append((row[0], row[7]))
    elif present[4] != "NULL":  # every copy of the page's messages, wherever it is
        wanted_uids = sorted({row[6] for row in rows if row[6] is not None})
        for uid, mid, active in store.rows(
            f"SELECT message_uid, id, {present[5]} FROM messages WHERE session_id = %s"
            " AND message_uid = ANY(%s)",
            [session_id, wanted_uids],
        ):
            uids.setdefault(uid, []).append((mid, active))
    older = _OlderCallers(select, session_id, rows[0][0] if rows and ids is not None else None)
    wanted = None if ids is None else set(ids)
    callers: list[tuple] = []  # (id, timestamp, raw tool_calls, call objects, items)
    out = []
    for mid, role, raw, call_id, tool_name, at, uid, active, *state in rows:
        if role == "assistant" and raw is not None:
            callers.append((mid, at, raw, *_listed(raw)))
        if role != "tool" or (wanted is not None and mid not in wanted):
            continue
        if uid is not None and (1 if active is None else active) == 0:
            if any(d != mid and (a == 1 or d < mid) for d, a in uids[uid]):
                continue
        named = tool_name or None
        if not shape.has_column("messages", "tool_call_id"):
            out.append((mid, named or "?", None, 1, active, *state))
            continue
        if not call_id:
            continue
        for _, caller_at, caller_raw, objects, listed in older.nearest_first(callers):
            match = next((o for o in objects if _same_id(o.get("id"), call_id)), None)
            if match is None or call_id not in caller_raw:
                continue
            function = match.get("function")
            name = function.get("name") if isinstance(function, dict) else None
            name = match.get("name") if name is None else name
            name = named or ("?" if name is None else name)
            seconds = None if at is None or caller_at is None else at - caller_at
            out.append((mid, name, seconds, listed, active, *state))
            break
    return out


class _OlderCallers:
    """The assistant rows before the first row read (``first``; None: none to read), read
    newest first, a few hundred at a time and only when a search gets to them."""

    def __init__(self, select: str, session_id: str, first: int | None):
        self.select, self.session_id, self.below = select, session_id, first
        self.read: list[tuple] = []  # newest first

    def nearest_first(self, callers: list[tuple]):
        """The callers read with the page, newest first, then the older ones."""
        yield from reversed(callers)
        at = 0
        while True:
            while at < len(self.read):
                yield self.read[at]
                at += 1
            if self.below is None:
                return
            batch = store.rows(
                self.select + " AND id < %s AND role = 'assistant' ORDER BY id DESC LIMIT %s",
                [self.session_id, self.below, CALLERS_AT_A_TIME],
            )
            self.below = batch[-1][0] if len(batch) == CALLERS_AT_A_TIME else None
            self.read += [(r[0], r[5], r[2], *_listed(r[2])) for r in batch if r[2] is not None]


def _listed(raw: str) -> tuple[list[dict], int | None]:
    """The call objects of a ``tool_calls`` value and how many items it lists (a single
    object: 1); none and None when it is not a JSON list or object."""
    try:
        data = json.loads(raw)
    except ValueError:
        return [], None
    data = [data] if isinstance(data, dict) else data
    if not isinstance(data, list):
        return [], None
    return [item for item in data if isinstance(item, dict)], len(data)


def _same_id(value, call_id: str) -> bool:
    """Whether a call object's ``id`` is the result's call id, as SQLite compares them."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return False
    return str(value) == call_id
