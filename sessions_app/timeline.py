"""Where a session's time went: each message with the wait before it and what the wait was.

The wait before an ``assistant`` row is the model thinking, before a ``tool`` row a tool
running, before a ``user`` row the person answering.  A tool result that is a call carries
``tool_s``, the time from the message that called it; calls of one message run in parallel, so
their ``tool_s`` overlap and each says how many ran together.  The figures come from one pass
over the session's ids, roles and times (no text), the rows a keyset page at a time.
"""

from __future__ import annotations

import functools
import heapq
from dataclasses import dataclass, field, fields
from operator import itemgetter

from django.db.models import TextField, Value
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from redaction import redact

from .content import call_id_and_name, call_objects
from .exports.isotime import iso_converter
from .formatting import page_formats, seconds_text
from .pagination import Keyset, KeysetPage
from .selectors import transcript_messages
from .toolcalls import session_calls
from .visibility import LIVE, Visibility, kind_of

SPENT_ON = {"assistant": "model", "tool": "tool", "user": "user"}
SPENT_LABELS = {
    "model": gettext_noop("model"),
    "tool": gettext_noop("tool"),
    "user": gettext_noop("user"),
}
KINDS = ("model", "tool", "user")
SLOWEST = 10
PER_PAGE = 100
KEYSET = Keyset((("id", False),), name="id")
PAGE_COLUMNS = ("id", "role", "tool_name", "tool_calls", "timestamp")
# The chart: a bar of the session, a segment per run of waits of one kind (those narrower
# than ``MIN_WIDTH`` units cannot be seen: a long session has thousands).
CHART_WIDTH = 720
MIN_WIDTH = 0.5


@dataclass(slots=True)
class Step:
    message_id: int
    role: str | None
    tool_name: str | None  # redacted
    at: float | None
    at_iso: str | None
    waited_s: float | None
    spent_on: str | None
    tool_s: float | None = None
    parallel_calls: int | None = None  # calls of the assistant message that asked for it
    calls: list[str] = field(default_factory=list)  # names (redacted), on assistant rows

    def as_row(self) -> dict:
        row = {name: getattr(self, name) for name in EXPORT_COLUMNS}
        row.update(at=self.at_iso, waited_s=_rounded(self.waited_s), tool_s=_rounded(self.tool_s))
        return row


# An export row is a step's fields in order, ``at`` in ISO 8601, without the call names.
EXPORT_COLUMNS = [f.name for f in fields(Step) if f.name not in ("at_iso", "calls")]


@dataclass
class Timeline:
    steps: list[Step]  # every row, for an export
    totals: dict[str, float]
    counts: dict[str, int]
    tools: list[dict]  # per tool: calls, seconds, slowest (timed calls the toggles show)
    slowest: list[Step]
    parallel: bool  # some results overlap
    span_s: float | None  # first message to last
    segments: list[dict]  # the chart's bar of the session
    stacked: list[dict]  # the chart's bar of the totals


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def shown_calls(session_id: str, visibility: Visibility, ids=None) -> dict[int, tuple]:
    """Result id → (name redacted, seconds or None, calls of its message), of the calls the
    toggles show (with results ``ids`` only, when given)."""
    names = functools.cache(redact)
    out = {}
    for message_id, name, seconds, together, *state in session_calls(session_id, ids):
        kind = kind_of(*state)
        if kind == LIVE or getattr(visibility, kind):
            out[message_id] = (names(str(name)), seconds, together)
    return out


def session_timeline(session_id: str, visibility: Visibility, *, every_row=False) -> Timeline:
    """The session's figures in one pass over its transcript rows (every row if ``every_row``)."""
    qs = transcript_messages(session_id, visibility).order_by("id")
    calls = shown_calls(session_id, visibility)
    step, steps = _stepper(calls, functools.cache(redact)), []
    totals, counts = dict.fromkeys(KINDS, 0.0), dict.fromkeys(KINDS, 0)
    runs: list[list] = []
    timed: list[tuple] = []
    first = previous = None
    n_times = 0
    read = [
        n if qs.has_column(n) else Value(None, output_field=TextField())
        for n in ("id", "role", "tool_name", "timestamp")
    ]
    for message_id, role, tool_name, at in qs.values_list(*read):
        waited = None if at is None or previous is None else at - previous
        if at is not None:
            first = at if first is None else first
            previous, n_times = at, n_times + 1
        if every_row:
            steps.append(step(message_id, role, tool_name, at, waited))
        kind = SPENT_ON.get(role)
        if kind is None or waited is None:
            continue
        totals[kind] += waited
        counts[kind] += 1
        call = calls.get(message_id)
        timed.append((waited, message_id, role, tool_name or (call and call[0]), at))
        if runs and runs[-1][0] == kind:
            runs[-1][1] += max(waited, 0.0)
            runs[-1][2] += 1
        else:
            runs.append([kind, max(waited, 0.0), 1, message_id])
    return Timeline(
        steps=steps,
        totals=totals,
        counts=counts,
        tools=_tools(calls.values()),
        slowest=[
            step(i, r, n, at, w) for w, i, r, n, at in heapq.nlargest(SLOWEST, timed, itemgetter(0))
        ],
        parallel=any(together > 1 for _, _, together in calls.values() if together),
        span_s=(previous - first) if n_times > 1 else None,
        segments=_segments(runs),
        # The totals side by side on one bar.
        stacked=_segments([[kind, max(totals[kind], 0.0), 0, None] for kind in KINDS], 0.0),
    )


def _stepper(calls: dict[int, tuple], names):
    to_iso = iso_converter(timezone.get_current_timezone())

    def step(message_id, role, tool_name, at, waited) -> Step:
        name = tool_name and names(tool_name)
        s = Step(message_id, role, name, at, to_iso(at), waited, SPENT_ON.get(role))
        call = calls.get(message_id)
        if call is not None:
            s.tool_name = s.tool_name or call[0]
            s.tool_s, s.parallel_calls = call[1], call[2]
        return s

    return step


def session_page(
    session_id: str, visibility: Visibility, cursor: str | None
) -> tuple[list[Step], KeysetPage]:
    """The keyset page of transcript rows after ``cursor``, each with its wait."""
    qs = transcript_messages(session_id, visibility).order_by("id")
    page = KEYSET.paginate(
        qs.values(*[c for c in PAGE_COLUMNS if qs.has_column(c)]), cursor, PER_PAGE
    )
    names = functools.cache(redact)
    step = _stepper(shown_calls(session_id, visibility, [row["id"] for row in page.rows]), names)
    previous, steps = None, []
    if page.prev_cursor and qs.has_column("timestamp"):  # the first page has no row before
        before = qs.filter(id__lt=page.rows[0]["id"], timestamp__isnull=False)
        previous = before.order_by("-id").values_list("timestamp", flat=True).first()
    for row in page.rows:
        message_id, role, at = row["id"], row["role"], row.get("timestamp")
        waited = None if at is None or previous is None else at - previous
        previous = previous if at is None else at
        s = step(message_id, role, row.get("tool_name"), at, waited)
        steps.append(s)
        if role == "assistant" and row.get("tool_calls"):
            objects = call_objects(row["tool_calls"])[0]
            s.calls = [names(call_id_and_name(item)[1]) for item in objects]
    return steps, page


def _tools(calls) -> list[dict]:
    per_tool: dict[str, list[float]] = {}
    for name, seconds, _ in calls:
        if seconds is not None:
            per_tool.setdefault(name, []).append(seconds)
    return sorted(
        (
            {"tool": name, "calls": len(times), "seconds": sum(times), "slowest": max(times)}
            for name, times in per_tool.items()
        ),
        key=lambda t: (-t["seconds"], t["tool"]),
    )


def _segments(runs: list[list], min_width: float = MIN_WIDTH) -> list[dict]:
    """Runs ``[kind, seconds, steps, first message id]`` as a bar's segments in chart units."""
    total = sum(r[1] for r in runs) or 1.0
    out, x, formats = [], 0.0, page_formats()
    labels = {kind: gettext(label) for kind, label in SPENT_LABELS.items()}
    for kind, seconds, steps, message_id in runs:
        width = seconds / total * CHART_WIDTH
        if width > 0 and width >= min_width:
            out.append(
                {
                    "kind": kind,
                    "label": labels[kind],
                    "x": f"{x:.2f}",
                    "width": f"{width:.2f}",
                    "seconds": seconds,
                    "text": seconds_text(seconds, formats),
                    "steps": steps,
                    "message_id": message_id,
                }
            )
        x += width
    return out
