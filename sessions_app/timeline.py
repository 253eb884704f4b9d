"""Where a session's time went: each message with the wait before it and what the wait was.

The wait before an ``assistant`` row is the model thinking, before a ``tool`` row a tool
running, before a ``user`` row the person answering (other roles: nothing).  A tool result is
also paired with the assistant message that called it (``tool_call_id`` against the ids in
that message's ``tool_calls``): ``tool_s`` is the time from the call to its result.  Calls made
by one assistant message run in parallel, so their ``tool_s`` overlap and add up to more than
the wall time; each such result says how many calls ran together.

The rows are the transcript's (same ``?show=`` toggles, :mod:`sessions_app.visibility`), in id
order, read in one statement on the ``(session_id, id)`` index without any message text.
Files without ``timestamp`` cannot time anything, files without ``tool_call_id`` cannot pair a
result with its call: :attr:`Timeline.missing` names what the file lacks.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass, field

from django.utils import timezone
from django.utils.translation import gettext_noop

from redaction import redact

from .content import call_id_and_name, call_objects
from .exports.isotime import iso_converter
from .formatting import french, seconds_text
from .models import Message
from .selectors import transcript_messages
from .visibility import Visibility

SPENT_ON = {"assistant": "model", "tool": "tool", "user": "user"}
SPENT_LABELS = {
    "model": gettext_noop("model"),
    "tool": gettext_noop("tool"),
    "user": gettext_noop("user"),
}
KINDS = ("model", "tool", "user")
SLOWEST = 10
EXPORT_COLUMNS = [
    "message_id",
    "role",
    "tool_name",
    "at",
    "waited_s",
    "spent_on",
    "tool_s",
    "parallel_calls",
]
# The chart: one bar the session's length, a segment per run of waits of one kind (runs
# narrower than ``MIN_WIDTH`` chart units cannot be seen and are left out: a long session
# has thousands), and one bar of the totals per kind.
CHART_WIDTH = 720
MIN_WIDTH = 0.5


@dataclass(slots=True)
class Step:
    message_id: int
    role: str | None
    tool_name: str | None
    at: float | None
    at_iso: str | None
    waited_s: float | None
    spent_on: str | None
    tool_s: float | None = None
    parallel_calls: int | None = None  # calls of the assistant message that asked for it
    calls: list[str] = field(default_factory=list)  # names, on assistant rows
    link: str | None = None  # the message in its transcript, for roles that read content

    def as_row(self) -> dict:
        row = {name: getattr(self, name) for name in EXPORT_COLUMNS}
        row.update(at=self.at_iso, waited_s=_rounded(self.waited_s), tool_s=_rounded(self.tool_s))
        return row

    @property
    def spent_label(self) -> str:
        return SPENT_LABELS.get(self.spent_on, "")

    @property
    def waited_text(self) -> str:
        return seconds_text(self.waited_s)


@dataclass
class Timeline:
    steps: list[Step]
    missing: list[str]  # columns the file lacks that the timeline needs
    totals: dict[str, float]
    counts: dict[str, int]
    tools: list[dict]  # per tool: calls, seconds, slowest (paired results only)
    slowest: list[Step]
    parallel: bool  # some results overlap
    span_s: float | None  # first message to last
    segments: list[dict]  # the chart's bar of the session
    stacked: list[dict]  # the chart's bar of the totals

    def rows(self) -> list[dict]:
        return [step.as_row() for step in self.steps]


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _columns() -> list[str]:
    qs = Message.objects.all()
    wanted = ("id", "role", "tool_name", "tool_call_id", "tool_calls", "timestamp")
    return [c for c in wanted if qs.has_column(c)]


def missing_columns() -> list[str]:
    qs = Message.objects.all()
    return [c for c in ("timestamp", "tool_call_id") if not qs.has_column(c)]


def session_timeline(session_id: str, visibility: Visibility) -> Timeline:
    """Every transcript message of the session with its wait, and the figures over them."""
    columns = _columns()
    to_iso = iso_converter(timezone.get_current_timezone())
    rows = transcript_messages(session_id, visibility).order_by("id").values_list(*columns)
    steps: list[Step] = []
    # call id → (time of the assistant message, tool name, calls in that message)
    calls: dict[str, tuple[float | None, str, int]] = {}
    # Each tool name redacted once.
    names = functools.cache(redact)
    previous: float | None = None
    for values in rows:
        row = dict(zip(columns, values, strict=True))
        at, role = row.get("timestamp"), row["role"]
        waited = None if at is None or previous is None else at - previous
        step = Step(
            row["id"], role, row.get("tool_name"), at, to_iso(at), waited, SPENT_ON.get(role)
        )
        if role == "assistant" and row.get("tool_calls"):
            # (id, function name) of each call; nothing from malformed JSON.
            parsed = [call_id_and_name(item) for item in call_objects(row["tool_calls"])[0]]
            for call_id, raw_name in parsed:
                name = names(raw_name)
                step.calls.append(name)
                if call_id:
                    calls[call_id] = (at, name, len(parsed))
        elif role == "tool":
            found = calls.get(row.get("tool_call_id") or "")
            if found is not None:
                called_at, name, together = found
                step.tool_name = step.tool_name or name
                if at is not None and called_at is not None:
                    step.tool_s = at - called_at
                step.parallel_calls = together
        steps.append(step)
        previous = at
    return _figures(steps)


def _figures(steps: list[Step]) -> Timeline:
    totals = dict.fromkeys(KINDS, 0.0)
    counts = dict.fromkeys(KINDS, 0)
    per_tool: dict[str, list[float]] = defaultdict(list)
    for step in steps:
        if step.spent_on is not None and step.waited_s is not None:
            totals[step.spent_on] += step.waited_s
            counts[step.spent_on] += 1
        if step.tool_s is not None:
            per_tool[step.tool_name or "?"].append(step.tool_s)
    tools = sorted(
        (
            {"tool": name, "calls": len(times), "seconds": sum(times), "slowest": max(times)}
            for name, times in per_tool.items()
        ),
        key=lambda t: (-t["seconds"], t["tool"]),
    )
    timed = [s for s in steps if s.waited_s is not None and s.spent_on is not None]
    slowest = sorted(timed, key=lambda s: -s.waited_s)[:SLOWEST]
    times = [s.at for s in steps if s.at is not None]
    return Timeline(
        steps=steps,
        missing=missing_columns(),
        totals=totals,
        counts=counts,
        tools=tools,
        slowest=slowest,
        parallel=any((s.parallel_calls or 0) > 1 for s in steps),
        span_s=(times[-1] - times[0]) if len(times) > 1 else None,
        segments=_segments(timed),
        stacked=_stacked(totals),
    )


def _stacked(totals: dict[str, float]) -> list[dict]:
    """The totals per kind side by side on one bar of ``CHART_WIDTH`` units."""
    whole = sum(max(v, 0.0) for v in totals.values()) or 1.0
    out, x, comma = [], 0.0, french()
    for kind in KINDS:
        width = max(totals[kind], 0.0) / whole * CHART_WIDTH
        if width > 0:
            text = seconds_text(totals[kind], comma)
            out.append({"kind": kind, "x": f"{x:.2f}", "width": f"{width:.2f}", "text": text})
        x += width
    return out


def _segments(timed: list[Step]) -> list[dict]:
    """Consecutive waits of one kind as one segment of the bar, its ``x`` and ``width`` in
    chart units; negative waits (clock drift) take no room."""
    runs: list[list] = []
    for step in timed:
        seconds = max(step.waited_s, 0.0)
        if runs and runs[-1][0] == step.spent_on:
            runs[-1][1] += seconds
            runs[-1][2] += 1
        else:
            runs.append([step.spent_on, seconds, 1, step.message_id])
    total = sum(r[1] for r in runs) or 1.0
    out, x, comma = [], 0.0, french()
    for kind, seconds, steps, message_id in runs:
        width = seconds / total * CHART_WIDTH
        if width >= MIN_WIDTH:
            out.append(
                {
                    "kind": kind,
                    "x": f"{x:.2f}",
                    "width": f"{width:.2f}",
                    "seconds": seconds,
                    "text": seconds_text(seconds, comma),
                    "steps": steps,
                    "message_id": message_id,
                }
            )
        x += width
    return out
