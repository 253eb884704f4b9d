"""Per-session message summaries (role counts, tools, skills), computed in SQL and stored.

Counting messages by role and tools by name means reading every message of the window: on a
busy install that is hundreds of thousands of rows (and, for ``tool`` rows, walking their
output to reach ``tool_name``), over a second for one month of data.  But a session's messages
almost never change once written, so each session's summary is computed once, in SQL, and
stored as rows in the app's database (:mod:`insights_app.summary_store`), where a report adds
them up over its window.

Freshness, without trusting any counter:

* ``messages.id`` only grows.  The highest id seen (the *high-water mark*) is kept with the
  summaries; on each report the new rows ``id > high_water`` (a rowid range, cheap) name the
  sessions that changed, and their stored summaries are dropped.  A lower maximum means rows
  were deleted or the file was replaced: everything is dropped.
* Each summary also records the session's ``message_count``; a different count (a deleted
  message, a counter catching up) makes it stale too.

Summaries are computed in chunks of sessions, each chunk its own short statement, so a cold
report never pins the WAL in one long read and stops at the deadline with what it has (the
next report continues where it stopped).  On a rollback-journal file, where Hermes cannot
commit while a chunk is read, a chunk holds about as many messages as a short statement reads
(:class:`hermes_explorer.store.ChunkClock`, counted in the sessions' ``message_count``).
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from django.db import OperationalError

from hermes_explorer import store as state_db
from hermes_explorer.hermes_db.deadline import QueryTimeout

from . import summary_store

CHUNK_SESSIONS = 1000
# On a rollback-journal file: messages in the first chunk (the clock sizes the next ones).
SHORT_READ_FIRST_MESSAGES = 2000
# New rows past the high-water mark beyond which dropping everything is cheaper than asking
# which sessions they belong to.
MAX_DIRTY_ROWS = 200_000
MAX_STORES = 4


@dataclass(frozen=True, slots=True)
class SessionSummary:
    message_count: int | None  # sessions.message_count when computed (a staleness check)
    user: int
    assistant: int
    tool: int
    stored: int  # every row, any role
    # Per tool name, the larger of its tool rows and its calls in this session (Hermes), and
    # its tool rows alone (what a list of the tool's result rows holds).
    tools: tuple[tuple[str, int, int], ...]
    # (skill, loads, edits, last used epoch)
    skills: tuple[tuple[str, int, int, float | None], ...]


EMPTY = SessionSummary(None, 0, 0, 0, 0, (), ())


_UNKNOWN = object()


@dataclass
class _Store:
    """What this process knows of one state.db: its key and mark (shared with every process
    through the app database) and the index it may name."""

    key: str = ""  # the file's key in the app database (summary_store)
    high_water: int | None = None
    calls_index: object = _UNKNOWN  # name of the assistant tool-calls index, None, unknown


_stores: OrderedDict[tuple, _Store] = OrderedDict()
_lock = threading.Lock()


def _store() -> _Store:
    key = state_db.file_identity()
    with _lock:
        store = _stores.get(key)
        if store is not None:
            _stores.move_to_end(key)
            return store
    fresh = _Store(key=summary_store.store_key())
    with _lock:
        store = _stores.setdefault(key, fresh)
        while len(_stores) > MAX_STORES:
            _stores.popitem(last=False)
        return store


def forget_all() -> None:
    """Drop what this process knows (tests: "a restart"; the app database keeps the rest)."""
    with _lock:
        _stores.clear()


def refresh_high_water() -> str:
    """Drop the stored summaries of sessions that gained (or lost) rows since the mark;
    return the file's key in the app database."""
    store = _store()
    (current,) = state_db.rows("SELECT MAX(id) FROM messages", [])[0]
    with _lock:
        known = store.high_water
    if known == current and current is not None:
        return store.key  # this process saw it already: nothing appended since
    # Another process may have moved the mark since: it is shared.
    previous = summary_store.high_water(store.key)
    if previous == current:
        with _lock:
            store.high_water = current
        return store.key
    if previous is not None and current is not None and current > previous:
        changed = state_db.rows(
            "SELECT COUNT(*) FROM (SELECT 1 FROM messages WHERE id > %s AND id <= %s LIMIT %s)",
            [previous, current, MAX_DIRTY_ROWS + 1],
        )[0][0]
        dirty = (
            None
            if changed > MAX_DIRTY_ROWS
            else [
                r[0]
                for r in state_db.rows(
                    "SELECT DISTINCT session_id FROM messages WHERE id > %s AND id <= %s",
                    [previous, current],
                )
            ]
        )
    elif previous is None:
        dirty = []  # nothing stored yet for this file, or a mark never set: nothing to drop
    else:
        dirty = None  # fewer rows than before: the file was rewritten
    summary_store.advance(store.key, current, dirty)
    with _lock:
        store.high_water = current
    return store.key


# --- The SQL --------------------------------------------------------------------------------

_ASSISTANT_INDEX_SQL = re.compile(
    r"role\s*=\s*'assistant'.*tool_calls\s+IS\s+NOT\s+NULL", re.IGNORECASE | re.DOTALL
)


def assistant_calls_index() -> str | None:
    """The partial index on assistant rows with tool calls, if this file has one.

    The planner prefers a wider ``(session_id, …)`` index and then reads every row of the
    session; naming the partial index reads only the rows that carry calls.
    """
    store = _store()
    if store.calls_index is not _UNKNOWN:
        return store.calls_index
    found = None
    for name, sql in state_db.rows(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'messages'"
        " AND sql IS NOT NULL",
        [],
    ):
        head, _, where = sql.partition(" WHERE ")
        columns = head.partition("(")[2].replace(" ", "").lower()
        if where and columns.startswith("session_id") and _ASSISTANT_INDEX_SQL.search(where):
            if re.fullmatch(r"[A-Za-z0-9_]+", name):
                found = name
                break
    store.calls_index = found
    return found


ROLE_AND_TOOL_ROWS_SQL = """
    SELECT m.session_id, CASE WHEN m.role = 'tool' THEN m.tool_name END AS tool,
           COUNT(*), SUM(m.role = 'user'), SUM(m.role = 'assistant'), SUM(m.role = 'tool')
    FROM messages m WHERE m.session_id IN (SELECT value FROM json_each(%s))
    GROUP BY m.session_id, tool"""


def calls_sql(index: str | None) -> str:
    """Every call in the assistant ``tool_calls`` of a chunk of sessions, grouped.

    Guards, so that no row can fail the statement: ``json_each`` only ever sees valid JSON
    (``json_valid``), only array entries that are objects count (``fullkey`` ``$[n]``, type
    ``object``: their ``value`` is then JSON text), names and arguments are read by path from
    the call alone (not the whole document again, per call), and arguments are parsed only
    once ``json_valid`` said they are JSON.  ``CASE`` (not ``AND``) fixes the order of
    evaluation.  Hermes stores arguments as a JSON string inside the JSON; an object works too.
    """
    indexed = f" INDEXED BY {index}" if index else ""
    args = "json_extract(c.call, '$.function.arguments')"
    skill = (
        "CASE WHEN c.name IN ('skill_view', 'skill_manage') THEN"
        f" CASE WHEN json_valid({args}) THEN"
        f" CASE WHEN json_type({args}, '$.name') = 'text' THEN json_extract({args}, '$.name')"
        " END END END"
    )
    return f"""
    WITH c AS MATERIALIZED (
        SELECT m.session_id AS sid, m.timestamp AS ts, j.value AS call,
               json_extract(j.value, '$.function.name') AS name
        FROM messages m{indexed},
             json_each(CASE WHEN json_valid(m.tool_calls) THEN m.tool_calls END) AS j
        WHERE m.session_id IN (SELECT value FROM json_each(%s))
          AND m.role = 'assistant' AND m.tool_calls IS NOT NULL
          AND j.fullkey GLOB '$[[]*' AND j.type = 'object')
    SELECT sid, name, {skill} AS skill, COUNT(*), MAX(ts)
    FROM c WHERE typeof(c.name) = 'text' AND c.name <> ''
    GROUP BY sid, name, skill"""


_BLANK = " \t\n\r\x0b\x0c"


def compute(session_ids: list[str], counts: dict[str, int | None]) -> dict[str, SessionSummary]:
    """Summaries of these sessions: two statements over their messages, nothing cached."""
    ids = json.dumps(session_ids)
    roles: dict[str, list[int]] = {}
    rows_by_tool: dict[str, dict[str, int]] = {}
    for sid, tool, n_all, n_user, n_assistant, n_tool in state_db.rows(
        ROLE_AND_TOOL_ROWS_SQL, [ids]
    ):
        acc = roles.setdefault(sid, [0, 0, 0, 0])
        acc[0] += n_user or 0
        acc[1] += n_assistant or 0
        acc[2] += n_tool or 0
        acc[3] += n_all or 0
        if tool is not None:
            rows_by_tool.setdefault(sid, {})[tool] = n_tool or 0
    index = assistant_calls_index()
    try:
        call_rows = state_db.rows(calls_sql(index), [ids])
    except OperationalError as exc:
        if index is None or "no query solution" not in str(exc):
            raise
        call_rows = state_db.rows(calls_sql(None), [ids])
    calls_by_tool: dict[str, dict[str, int]] = {}
    skills: dict[str, dict[str, list]] = {}
    for sid, name, skill, n, last in call_rows:
        per = calls_by_tool.setdefault(sid, {})
        per[name] = per.get(name, 0) + n
        if skill is not None and skill.strip(_BLANK):
            entry = skills.setdefault(sid, {}).setdefault(skill, [0, 0, None])
            entry[0 if name == "skill_view" else 1] += n
            if last is not None and (entry[2] is None or last > entry[2]):
                entry[2] = last
    out = {}
    for sid in session_ids:
        user, assistant, tool, stored = roles.get(sid, (0, 0, 0, 0))
        from_rows = rows_by_tool.get(sid, {})
        from_calls = calls_by_tool.get(sid, {})
        tools = tuple(
            sorted(
                (
                    name,
                    max(from_rows.get(name, 0), from_calls.get(name, 0)),
                    from_rows.get(name, 0),
                )
                for name in from_rows.keys() | from_calls.keys()
            )
        )
        skill_rows = tuple(sorted((s, v[0], v[1], v[2]) for s, v in skills.get(sid, {}).items()))
        out[sid] = SessionSummary(counts.get(sid), user, assistant, tool, stored, tools, skill_rows)
    return out


@dataclass
class Collected:
    summaries: dict[str, SessionSummary]  # those computed, by session id
    missing: int  # sessions left uncomputed (the deadline stopped us)
    computed: int


def collect(
    sessions: list[tuple[str, int | None]],
    *,
    attributes: dict | None = None,
    key: str = "",
    time_limit: float | None = None,
    progress=None,
) -> Collected:
    """Compute the summaries of ``sessions`` ``(id, message_count)`` in chunks; with ``key``,
    store each chunk in the app database (with the sessions' ``attributes``).  A chunk that
    runs out of its statement's time, or the whole collection running past ``time_limit``
    seconds, ends it: what was computed is kept, and the next report carries on from there.
    ``progress(n)`` is told of each chunk stored."""
    stop_at = time.monotonic() + time_limit if time_limit is not None else None
    counts = dict(sessions)
    todo = [sid for sid, _ in sessions]
    out: dict[str, SessionSummary] = {}
    computed = 0
    missing = 0
    # A chunk's size is counted in sessions on a WAL file, in messages on a rollback-journal
    # file (where the clock keeps each chunk's statements short).
    clock = state_db.ChunkClock(CHUNK_SESSIONS, first=SHORT_READ_FIRST_MESSAGES)
    weight = (lambda sid: max(1, counts.get(sid) or 0)) if clock.short else (lambda sid: 1)

    def next_chunk(start: int, n: int) -> list[str]:
        """The sessions from ``start`` that weigh ``n`` at most (at least one of them)."""
        end, total = start, 0
        while end < len(todo) and end - start < CHUNK_SESSIONS:
            total += weight(todo[end])
            if total > n and end > start:
                break
            end += 1
        return todo[start:end]

    unsaved: dict[str, SessionSummary] = {}

    def flush() -> None:
        nonlocal unsaved
        if key and unsaved:
            summary_store.save(key, unsaved, attributes or {})
            if progress is not None:
                progress(len(unsaved))
        unsaved = {}

    start = 0
    while start < len(todo):
        if stop_at is not None and time.monotonic() > stop_at:
            missing = len(todo) - start
            break

        def work(n: int, start: int = start) -> tuple[list[str], dict[str, SessionSummary]]:
            chunk = next_chunk(start, n)
            return chunk, compute(chunk, counts)

        try:
            _, (chunk, fresh) = clock.run(work)
        except QueryTimeout:
            missing = len(todo) - start
            break
        start += len(chunk)
        out.update(fresh)
        computed += len(chunk)
        unsaved.update(fresh)
        # Stored a thousand sessions at a time, however small the chunks.
        if len(unsaved) >= CHUNK_SESSIONS:
            flush()
    flush()
    return Collected(summaries=out, missing=missing, computed=computed)
