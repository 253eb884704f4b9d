"""Per-session message summaries (role counts, tools, skills), computed once in SQL and
stored: a session's messages almost never change once written.  Rows past the highest
``messages.id`` seen name the sessions to recompute (a lower maximum drops all), and each
summary records its session's ``message_count``.  They are computed in short chunks of
sessions, so a cold report never pins the WAL and stops at its deadline with what it has.
"""

from __future__ import annotations

import functools
import itertools
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from hermes_explorer import dialect
from hermes_explorer import store as state_db
from hermes_explorer.hermes_db.deadline import QueryTimeout
from sessions_app.toolcalls import call_sql

from . import pairing, summary_store

CHUNK_SESSIONS = 1000
# On a rollback-journal file: messages in the first chunk (the clock sizes the next ones).
SHORT_READ_FIRST_MESSAGES = 2000
# New rows past the mark beyond which dropping everything is cheaper than finding their sessions.
MAX_DIRTY_ROWS = 200_000
MAX_STORES = 4


@dataclass(frozen=True, slots=True)
class SessionSummary:
    message_count: int | None  # sessions.message_count when computed (a staleness check)
    user: int
    assistant: int
    tool: int
    stored: int  # every row, any role
    # Per tool name: the larger of its rows and calls (Hermes), and its rows alone.
    tools: tuple[tuple[str, int, int], ...]
    # (skill, loads, edits, last used epoch)
    skills: tuple[tuple[str, int, int, float | None], ...]
    # (tool, seconds from its call, result's message id) of each timed call
    # (:mod:`sessions_app.toolcalls`)
    calls: tuple[tuple[str, float, int], ...] = ()


EMPTY = SessionSummary(None, 0, 0, 0, 0, (), ())


@dataclass
class _Store:
    """What this process knows of one state.db: its key and mark (shared in the app database)."""

    key: int = 0  # the file's key in the app database (summary_store)
    high_water: int | None = None


@functools.lru_cache(maxsize=MAX_STORES)
def _store_of(identity: tuple) -> _Store:
    """One file's entry (by its identity), for the last ``MAX_STORES`` files read."""
    return _Store(key=summary_store.store_key())


def _store() -> _Store:
    return _store_of(state_db.file_identity())


def file_key() -> int:
    return _store().key


def forget_all() -> None:
    """Drop what this process knows (tests: "a restart"; the app database keeps the rest)."""
    _store_of.cache_clear()


def refresh_high_water() -> int:
    """Drop the summaries of sessions whose rows changed since the mark; return the file's key."""
    store = _store()
    (current,) = state_db.rows("SELECT MAX(id) FROM messages", [])[0]
    if store.high_water == current and current is not None:
        return store.key  # this process saw it already: nothing appended since
    # Another process may have moved the mark since: it is shared.
    previous = summary_store.high_water(store.key)
    if previous != current:
        dirty = None  # fewer rows than before (the file was rewritten), or too many new ones
        if previous is None:
            dirty = []  # nothing stored yet for this file, or a mark never set: nothing to drop
        elif current is not None and current > previous:
            changed = state_db.rows(
                "SELECT COUNT(*) FROM (SELECT 1 FROM messages WHERE id > %s AND id <= %s LIMIT %s)"
                " AS new",
                [previous, current, MAX_DIRTY_ROWS + 1],
            )[0][0]
            if changed <= MAX_DIRTY_ROWS:
                sql = "SELECT DISTINCT session_id FROM messages WHERE id > %s AND id <= %s"
                dirty = [r[0] for r in state_db.rows(sql, [previous, current])]
        summary_store.advance(store.key, current, dirty)
    store.high_water = current
    return store.key


# --- The SQL --------------------------------------------------------------------------------

# One pass over a chunk of sessions' messages in their ``(session_id, …)`` index order (no sort
# to group): per session, its rows by role, each tool row's ``tool_name``, and its calls.
# ``json_tree`` finds the ``name`` of each ``$[n].function`` of ``tool_calls``; a skill call
# (``skill_view``, ``skill_manage``) is an object with its arguments' ``name`` and the
# message's exact timestamp (``printf('%!.17g')``, ``%`` doubled for the driver).  Only valid
# JSON reaches the JSON functions, and ``CASE`` (not ``AND``) fixes the order of evaluation.
# The session's entries are joined into one JSON array, so no name can pass for a separator.
_ARGS = "json_extract(m.tool_calls, j.path || '.arguments')"
_SKILL = (
    f"CASE WHEN json_valid({_ARGS}) THEN"
    f" CASE WHEN json_type({_ARGS}, '$.name') = 'text' THEN json_extract({_ARGS}, '$.name') END"
    " END"
)
_EXACT_TIME = (
    "CASE typeof(m.timestamp) WHEN 'integer' THEN m.timestamp"
    " WHEN 'real' THEN printf('%%!.17g', m.timestamp) END"
)
_CALLS = f"""NULLIF(rtrim(ltrim((
        SELECT json_group_array(
            CASE WHEN j.atom IN ('skill_view', 'skill_manage')
                 THEN json_object('n', j.atom, 's', {_SKILL}, 't', {_EXACT_TIME})
                 ELSE j.atom END)
        FROM json_tree(CASE WHEN json_valid(m.tool_calls) THEN m.tool_calls END) AS j
        WHERE j.key = 'name' AND j.type = 'text' AND j.atom <> ''
          AND j.path GLOB '$[[][0-9]*].function'
          AND NOT substr(j.path, 3, length(j.path) - 12) GLOB '*[^0-9]*'), '['), ']'), '')"""

SUMMARY_SQL = f"""
    SELECT m.session_id, COUNT(*), SUM(m.role = 'user'), SUM(m.role = 'assistant'),
           SUM(m.role = 'tool'),
           json_group_array(m.tool_name)
               FILTER (WHERE m.role = 'tool' AND typeof(m.tool_name) = 'text'),
           group_concat({_CALLS}, ',')
               FILTER (WHERE m.role = 'assistant' AND m.tool_calls IS NOT NULL)
    FROM messages m WHERE m.session_id IN (SELECT value FROM json_each(%s))
    GROUP BY m.session_id"""


# Every call of the chunk's sessions (:mod:`sessions_app.toolcalls`, the definition every page
# shares): the session, the tool, the seconds from the call (NULL when untimed), the result.
def calls_sql(shape) -> str:
    sql = call_sql(shape)
    return (
        f"SELECT t.session_id, {sql.name}, {sql.seconds}, t.id FROM messages t {sql.joins}"
        f" WHERE t.session_id IN (SELECT value FROM json_each(%s)) AND {sql.where}"
    )


_BLANK = " \t\n\r\x0b\x0c"
_loads = json.loads


def _summary(count: int | None, row: tuple) -> SessionSummary:
    """One session's summary from its row of :data:`SUMMARY_SQL`."""
    _, n_all, n_user, n_assistant, n_tool, tool_rows, calls, timed = row
    from_rows = Counter(_loads(tool_rows)) if tool_rows else Counter()
    skills: dict[str, list] = {}
    if not calls:
        from_calls: Counter = Counter()
    elif "{" not in calls:  # names only: counted in C
        from_calls = Counter(_loads(f"[{calls}]"))
    else:
        names = _loads(f"[{calls}]")
        from_calls = Counter(n if type(n) is str else n["n"] for n in names)
        for call in names:
            if type(call) is str:
                continue
            skill = call["s"]
            if type(skill) is not str or not skill.strip(_BLANK):
                continue
            entry = skills.setdefault(skill, [0, 0, None])
            entry[0 if call["n"] == "skill_view" else 1] += 1
            at = call["t"]
            last = float(at) if type(at) is str else at
            if last is not None and (entry[2] is None or last > entry[2]):
                entry[2] = last
    tools = tuple(
        sorted(
            (name, max(from_rows[name], from_calls[name]), from_rows[name])
            for name in from_rows.keys() | from_calls.keys()
        )
    )
    skill_rows = tuple(sorted((s, v[0], v[1], v[2]) for s, v in skills.items()))
    return SessionSummary(
        count, n_user or 0, n_assistant or 0, n_tool or 0, n_all or 0, tools, skill_rows, timed
    )


def read(session_ids: list[str]) -> list[tuple]:
    """The rows of :data:`SUMMARY_SQL` for these sessions, each with its session's timed calls
    (:func:`calls_sql`) appended (the part that reads the store, and leaves Python's lock
    while it does)."""
    if dialect.postgres():
        return _read_in_python(session_ids)
    ids = json.dumps(session_ids)
    rows = state_db.rows(SUMMARY_SQL, [ids])
    timed: dict[str, list] = {}
    for sid, name, seconds, message_id in state_db.rows(calls_sql(state_db.shape()), [ids]):
        if seconds is not None:
            timed.setdefault(sid, []).append((str(name), float(seconds), message_id))
    return [(*row, tuple(timed.get(row[0], ()))) for row in rows]


# --- The same in Python, where the store's SQL cannot make the JSON decisions (:mod:`.pairing`).


def _named_calls(calls, timestamp) -> list:
    """The entries :data:`_CALLS` makes of one row's ``tool_calls``: each call's function
    name, or for a skill call ``{"n", "s", "t"}``."""
    out: list = []
    for call in calls if isinstance(calls, list) else ():
        function = call.get("function") if isinstance(call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or not name:
            continue
        if name not in ("skill_view", "skill_manage"):
            out.append(name)
            continue
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            arguments = pairing.strict_json(arguments)
        skill = arguments.get("name") if isinstance(arguments, dict) else None
        out.append({"n": name, "s": skill if isinstance(skill, str) else None, "t": timestamp})
    return out


def _read_in_python(session_ids: list[str]) -> list[tuple]:
    """:func:`read`'s rows from the sessions' messages, the JSON decisions made here: the
    same counts, names, skills and timed calls (:mod:`sessions_app.toolcalls`, on a layout
    without ``message_uid``) as :data:`SUMMARY_SQL` and :func:`calls_sql`."""
    has = state_db.shape().has_column
    columns = ", ".join(
        c if has("messages", c) else f"NULL AS {c}"
        for c in ("tool_name", "tool_calls", "tool_call_id", "timestamp")
    )
    found = state_db.rows(
        f"SELECT session_id, id, role, {columns} FROM messages"
        f" WHERE {dialect.in_json_list('session_id')} ORDER BY session_id, id",
        [json.dumps(session_ids)],
    )
    out = []
    for sid, group in itertools.groupby(found, key=lambda row: row[0]):
        rows = list(group)
        roles = Counter(row[2] for row in rows)
        tool_rows = [row[3] for row in rows if row[2] == "tool" and isinstance(row[3], str)]
        named, callers, timed = [], pairing.Callers(), []
        for _, mid, role, tool_name, tool_calls, call_id, at in rows:
            if role == "assistant" and tool_calls is not None:
                named += _named_calls(callers.add(mid, tool_calls, at), at)
            elif role == "tool" and call_id and (answer := callers.answered(mid, call_id)):
                called_at, called = answer
                if at is not None and called_at is not None:
                    timed.append(
                        (pairing.result_name(tool_name, called), float(at - called_at), mid)
                    )
        calls_text = json.dumps(named, ensure_ascii=False)[1:-1] or None
        out.append(
            (
                sid,
                len(rows),
                roles["user"],
                roles["assistant"],
                roles["tool"],
                json.dumps(tool_rows, ensure_ascii=False),
                calls_text,
                tuple(timed),
            )
        )
    return out


def summarise(
    session_ids: list[str], counts: dict[str, int | None], rows: list[tuple]
) -> dict[str, SessionSummary]:
    found = {row[0]: row for row in rows}
    return {
        sid: _summary(counts.get(sid), row)
        if (row := found.get(sid))
        else replace(EMPTY, message_count=counts.get(sid))
        for sid in session_ids
    }


def compute(session_ids: list[str], counts: dict[str, int | None]) -> dict[str, SessionSummary]:
    """Summaries of these sessions: one statement over their messages, nothing cached."""
    return summarise(session_ids, counts, read(session_ids))


@dataclass
class Collected:
    summaries: dict[str, SessionSummary]  # those computed, by session id
    missing: int  # sessions left uncomputed (the deadline stopped us)


class Saver:
    """Stores summaries of one file a thousand at a time; ``saved(n)`` hears of each batch."""

    def __init__(
        self, key: int, attributes: dict, saved: Callable[[int], None] | None = None
    ) -> None:
        self.key, self.attributes, self.saved = key, attributes, saved
        self.unsaved: dict[str, SessionSummary] = {}

    def add(self, fresh: dict[str, SessionSummary]) -> None:
        self.unsaved.update(fresh)
        if len(self.unsaved) >= CHUNK_SESSIONS:
            self.flush()

    def flush(self) -> None:
        if self.unsaved:
            summary_store.save(self.key, self.unsaved, self.attributes)
            if self.saved is not None:
                self.saved(len(self.unsaved))
        self.unsaved = {}


def collect(
    sessions: list[tuple], *, key: int | None = None, time_limit: float | None = None
) -> Collected:
    """Compute the summaries of ``sessions`` (rows of :func:`.summary_build.window_sessions`)
    in chunks, stored with ``key``; past ``time_limit`` seconds it stops, and the next report
    carries on."""
    stop_at = time.monotonic() + time_limit if time_limit is not None else None
    counts = {r[0]: r[1] for r in sessions}
    todo = list(counts)
    out: dict[str, SessionSummary] = {}
    saver = Saver(key, {r[0]: r[2:5] for r in sessions}) if key is not None else None
    for _, fresh in chunked(todo, counts, lambda chunk: compute(chunk, counts), stop_at=stop_at):
        out.update(fresh)
        if saver is not None:
            saver.add(fresh)
    if saver is not None:
        saver.flush()
    return Collected(summaries=out, missing=len(todo) - len(out))


def chunked(
    todo: list[str],
    counts: dict[str, int | None],
    step: Callable[[list[str]], Any],
    *,
    stop_at: float | None = None,
) -> Iterator[tuple[list[str], Any]]:
    """``(chunk, step(chunk))`` for consecutive chunks of the sessions ``todo``, until
    ``stop_at`` (``time.monotonic()``) or a chunk runs out of time.  A chunk is counted in
    sessions on a WAL file, in messages (``counts``) on a rollback-journal file."""
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

    start = 0
    while start < len(todo):
        if stop_at is not None and time.monotonic() > stop_at:
            return

        def work(n: int, start: int = start) -> tuple[list[str], Any]:
            chunk = next_chunk(start, n)
            return chunk, step(chunk)

        try:
            _, (chunk, result) = clock.run(work)
        except QueryTimeout:
            return
        start += len(chunk)
        yield chunk, result
