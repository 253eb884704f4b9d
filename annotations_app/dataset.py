"""``?_export=dataset`` on a session list: the listed sessions as a chat-format dataset.

One JSON line per session, in the list's order: ``{"messages": [...], "metadata": {...}}``
(the OpenAI chat format; the team's tags and score tallies).  The sessions come from the list's
own export plan, their messages a group of about ``GROUP_MESSAGES`` at a time (bounded memory),
redacted a column at a time.

NOTE: a tool row that names no call (files older than ``tool_call_id``, CLI rows) answers the
oldest call not yet answered, the order Hermes runs them in.
"""

from __future__ import annotations

import json
from collections import deque

from accounts_app.middleware import forbidden
from accounts_app.roles import CONTENT, can_see_content
from hermes_explorer import store
from hermes_explorer import stores as registry
from redaction import redact, redact_many
from sessions_app.content import MULTIMODAL_PREFIX, call_objects
from sessions_app.exports import export_filename, invalid_filters_response, stream_export
from sessions_app.exports.merged import export_parts
from sessions_app.exports.request import session_filename_bits
from sessions_app.models import Message

from .selectors import NONE, for_sessions
from .targets import current_store

FORMAT = "dataset"
# Messages one statement reads for a group of sessions (a longer session is read alone).
GROUP_MESSAGES = 2_000
MESSAGE_FIELDS = ("session_id", "id", "role", "content", "tool_calls", "tool_call_id")
CHAT_ROLES = frozenset({"system", "user", "assistant", "tool"})


def _content(value):
    """Text as text, multimodal content as its list of parts (as stored), None as None."""
    if isinstance(value, str) and value.startswith(MULTIMODAL_PREFIX):
        try:
            parts = json.loads(value[len(MULTIMODAL_PREFIX) :])
        except ValueError:
            return value[len(MULTIMODAL_PREFIX) :]
        return parts if isinstance(parts, list) else [parts]
    return value


def chat_messages(rows, system_prompt: str | None) -> list[dict]:
    """Transcript rows (dicts of the state.db's columns, redacted) as chat messages."""
    out: list[dict] = []
    if system_prompt:
        out.append({"role": "system", "content": system_prompt})
    unanswered: deque[str] = deque()
    for row in rows:
        role = row.get("role")
        if role not in CHAT_ROLES:
            continue
        message: dict = {"role": role, "content": _content(row.get("content"))}
        if role == "assistant":
            calls = call_objects(row.get("tool_calls"))[0]
            if calls:
                message["tool_calls"] = calls
                unanswered.extend(str(c["id"]) for c in calls if c.get("id"))
        elif role == "tool":
            call_id = row.get("tool_call_id")
            if not call_id and unanswered:
                call_id = unanswered[0]
            if call_id in unanswered:
                unanswered.remove(call_id)
            message["tool_call_id"] = call_id
        if message["content"] is None and role != "assistant":
            message["content"] = ""
        out.append(message)
    return out


def system_prompts(session_ids: list[str]) -> dict[str, str]:
    """``{id: whole stored system prompt}`` of those sessions that have one, inline or in
    ``system_prompts`` (redacted): one statement."""
    shape = store.shape()
    inline = shape.column_or_null("sessions", "system_prompt", "s")
    shared, join = "NULL", ""
    if shape.has_column("sessions", "system_prompt_hash") and shape.has_table("system_prompts"):
        shared, join = "p.prompt", " LEFT JOIN system_prompts p ON p.hash = s.system_prompt_hash"
    if inline == "NULL" and shared == "NULL":
        return {}
    marks = store.marks(session_ids)
    found = {
        sid: a or b
        for sid, a, b in store.rows(
            f"SELECT s.id, {inline}, {shared} FROM sessions s{join} WHERE s.id IN ({marks})",
            session_ids,
        )
        if a or b
    }
    return dict(zip(found, redact_many(found.values()), strict=True))


def transcripts(session_ids: list[str]) -> dict[str, list[dict]]:
    """``{id: its live rows in id order}`` (the columns a chat message needs, as dicts of the
    state.db's column names; text and tool calls redacted a column at a time): one statement
    for the group."""
    qs = Message.objects.filter(session_id__in=session_ids).transcript_visible(compacted=False)
    fields = [f for f in MESSAGE_FIELDS if qs.has_column(f)]
    fetched = list(qs.order_by("session_id", "id").values_list(*fields))
    columns = [list(c) for c in zip(*fetched, strict=True)] or [[] for _ in fields]
    for name in ("content", "tool_calls"):
        if name in fields:
            columns[fields.index(name)] = redact_many(columns[fields.index(name)])
    out: dict[str, list[dict]] = {sid: [] for sid in session_ids}
    for row in zip(*columns, strict=True):
        found = dict(zip(fields, row, strict=True))
        out[found["session_id"]].append(found)
    return out


def metadata(row: dict, profile: str | None, annotations) -> dict:
    """The metadata of a session row of the export plan, with its annotations."""
    # The plan's columns are redacted as metadata already; the team's words are redacted here.
    return {
        "session_id": row["id"],
        "profile": profile,
        "source": row.get("source"),
        "model": row.get("model"),
        "started_at": row.get("started_at"),
        "tags": [redact(t.name) for t in annotations.tags],
        "scores": {
            redact(name): {redact(value): n for value, n in tally.items()}
            for name, tally in annotations.scores.items()
        },
    }


def groups(rows: list[dict]):
    """Consecutive session rows whose messages make about ``GROUP_MESSAGES`` rows together
    (a longer session alone): what one message statement reads and memory holds."""
    group, total = [], 0
    for row in rows:
        count = row.get("message_count") or 1
        if group and total + count > GROUP_MESSAGES:
            yield group
            group, total = [], 0
        group.append(row)
        total += count
    if group:
        yield group


def _records(view):
    """Lists of ``(messages, metadata)``, a group of sessions at a time, of every store the
    list reads (each store's export plan narrowed like the list)."""
    user, parts = view.request.user, export_parts(view.request)
    for part in parts if parts is not None else [None]:
        with registry.using(part):
            plan = view._store_plan(view.narrowed)
        if plan is None:
            continue
        chunks = plan.chunks()
        while True:
            with registry.using(part):
                chunk = next(chunks, None)
                if chunk is None:
                    break
                found = for_sessions([r[0] for r in chunk], user)
                current = registry.current()
                profile = current.name if current is not None else current_store()
            rows = [dict(zip(plan.columns, values, strict=False)) for values in chunk]
            for group in groups(rows):
                ids = [row["id"] for row in group]
                with registry.using(part):
                    messages, prompts = transcripts(ids), system_prompts(ids)
                yield [
                    (
                        chat_messages(messages[row["id"]], prompts.get(row["id"])),
                        metadata(row, profile, found.get(row["id"], NONE)),
                    )
                    for row in group
                ]


def export(view):
    """The streamed dataset of the list ``view`` was prepared for (analysts and staff), as
    the session list's JSONL export of two columns."""
    request = view.request
    if not can_see_content(request.user):
        return forbidden(request, CONTENT)
    if view.filterset.is_bound and not view.filterset.is_valid():
        return invalid_filters_response(view.filterset.form)
    return stream_export(
        fmt="jsonl",
        columns=["messages", "metadata"],
        chunks=_records(view),
        filename=export_filename("dataset", session_filename_bits(view.filterset), "jsonl"),
    )
