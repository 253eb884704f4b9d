"""Which sessions are active now, read cheaply enough to be polled by many open pages.

A session is *active* when something happened in it within the last N minutes, or it has not
ended and started within the last day (on older files without ``last_activity_at``: by the
newest message ids).  Every read is by index, so the page costs what its ~100 rows cost.
"""

from __future__ import annotations

import functools
import json
import time
from dataclasses import dataclass

from hermes_explorer import dialect, store
from insights_app.pairing import strict_json
from redaction import redact
from sessions_app.content import as_text
from sessions_app.following import OPEN_HORIZON
from sessions_app.formatting import short_model

from .failures import scol

DEFAULT_MINUTES = 15
MAX_MINUTES = 24 * 60
# How many of the newest message ids stand for "recent" on files without last_activity_at.
RECENT_MESSAGE_IDS = 5_000
LIMIT = 100
PREVIEW_CHARS = 160
# Short per-statement budget: the page is polled, it must never queue up behind a slow read.
BUDGET = 2.0


@dataclass
class LiveSession:
    id: str
    source: str
    title: str
    model: str
    started_at: float | None
    ended_at: float | None
    activity: float | None
    message_count: int
    tool_call_count: int | None
    tokens: int
    cost: float | None
    last_message_id: int | None = None
    last_role: str = ""
    preview: str = ""
    last_tool: str = ""

    @property
    def running_seconds(self) -> float | None:
        if self.started_at is None:
            return None
        end = self.ended_at if self.ended_at is not None else time.time()
        return max(0.0, end - self.started_at)

    @property
    def is_open(self) -> bool:
        return self.ended_at is None


def clamp_minutes(raw: str | None) -> int:
    try:
        value = int(raw or DEFAULT_MINUTES)
    except (TypeError, ValueError):
        return DEFAULT_MINUTES
    return max(1, min(value, MAX_MINUTES))


def _candidate_ids(now: float, minutes: int) -> list[str]:
    shape = store.shape()
    since = now - minutes * 60
    if shape.has_column("sessions", "last_activity_at"):
        rows = store.rows(
            "SELECT id FROM sessions WHERE COALESCE(last_activity_at, started_at) >= %s "
            "ORDER BY COALESCE(last_activity_at, started_at) DESC, id DESC LIMIT %s",
            [since, LIMIT],
            BUDGET,
        )
    else:
        rows = store.rows(
            "SELECT session_id FROM messages WHERE id > "
            "(SELECT COALESCE(MAX(id), 0) FROM messages) - %s "
            "GROUP BY session_id HAVING MAX(timestamp) >= %s "
            "ORDER BY MAX(timestamp) DESC, session_id DESC LIMIT %s",
            [RECENT_MESSAGE_IDS, since, LIMIT],
            BUDGET,
        )
    rows += store.rows(
        "SELECT id FROM sessions WHERE started_at >= %s AND ended_at IS NULL "
        "ORDER BY started_at DESC, id DESC LIMIT %s",
        [now - OPEN_HORIZON, LIMIT],
        BUDGET,
    )
    return list(dict.fromkeys(r[0] for r in rows))


def _session_rows(ids: list[str]) -> list[LiveSession]:
    shape = store.shape()
    col = functools.partial(scol, shape)
    activity = (
        "COALESCE(s.last_activity_at, s.started_at)"
        if shape.has_column("sessions", "last_activity_at")
        else "s.started_at"
    )
    sql = (
        f"SELECT s.id, s.source, {col('title')}, s.model, s.started_at, s.ended_at, {activity}, "
        f"COALESCE(s.message_count, 0), {col('tool_call_count')}, "
        f"COALESCE(s.input_tokens, 0) + COALESCE(s.output_tokens, 0), {col('estimated_cost_usd')}, "
        "(SELECT MAX(m.id) FROM messages m WHERE m.session_id = s.id) "
        f"FROM sessions s WHERE {dialect.in_json_list('s.id')}"
    )
    # The columns in the order of LiveSession's fields; counts and tokens are never NULL.
    return [
        LiveSession(sid, source or "", redact(title or ""), short_model(redact(model)), *rest)
        for sid, source, title, model, *rest in store.rows(sql, [json.dumps(ids)], BUDGET)
    ]


def _latest_messages(sessions: list[LiveSession], with_content: bool) -> None:
    """Fill each session's newest message: time (activity), role, preview and last tool."""
    by_id = {s.last_message_id: s for s in sessions if s.last_message_id is not None}
    if not by_id:
        return
    marks = store.marks(by_id)
    body = "substr(content, 1, 600)" if with_content else "NULL"
    for mid, role, ts, head in store.rows(
        f"SELECT id, role, timestamp, {body} FROM messages WHERE id IN ({marks})",
        list(by_id),
        BUDGET,
    ):
        session = by_id[mid]
        session.last_role = role or ""
        if ts is not None and (session.activity is None or ts > session.activity):
            session.activity = ts
        if with_content and head:
            flat = " ".join(redact(as_text(head)).split())
            session.preview = (
                flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1] + "…"
            )
    # The newest tool call: walk each session's assistant rows backwards on its own index.
    # PostgreSQL cannot test for valid JSON before parsing it: the row's text, parsed here.
    last = dialect.pick(
        "CASE WHEN json_valid(m.tool_calls) "
        "THEN json_extract(m.tool_calls, '$[#-1].function.name') END",
        "m.tool_calls",
    )
    names = dict(
        store.rows(
            f"SELECT s.id, (SELECT {last} "
            "FROM messages m WHERE m.session_id = s.id AND m.role = 'assistant' "
            "AND m.tool_calls IS NOT NULL ORDER BY m.id DESC LIMIT 1) "
            f"FROM sessions s WHERE {dialect.in_json_list('s.id')}",
            [json.dumps([s.id for s in sessions])],
            BUDGET,
        )
    )
    for session in sessions:
        name = names.get(session.id)
        if dialect.postgres():
            calls = strict_json(name)
            call = calls[-1] if isinstance(calls, list) and calls else None
            function = call.get("function") if isinstance(call, dict) else None
            name = function.get("name") if isinstance(function, dict) else None
        if isinstance(name, str):
            session.last_tool = redact(name)


def live_sessions(*, minutes: int, with_content: bool, now: float | None = None):
    """The active sessions, newest activity first, then the greater id (at most ``LIMIT``)."""
    now = time.time() if now is None else now
    ids = _candidate_ids(now, minutes)
    if not ids:
        return []
    sessions = _session_rows(ids)
    _latest_messages(sessions, with_content)
    since = now - minutes * 60
    sessions = [s for s in sessions if s.is_open or (s.activity or 0) >= since]
    # Ties by id, as the session list breaks them (each database orders a tie its own way).
    sessions.sort(key=lambda s: (s.activity or 0, s.id), reverse=True)
    return sessions
