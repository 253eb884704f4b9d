"""Figure ``top_sessions``: the longest session, and those with most messages, tokens, tools.

Each is one part of the pass (``ORDER BY … LIMIT 1``); ties go to the most recently started.
NOTE: Hermes's "longest" considers every closed session and could name one whose clock
drifted (a negative duration) when no other is closed; we only consider positive ones.
NOTE: ``session_id`` is the whole id (Hermes cuts it to 16 characters for its terminal).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.utils import timezone
from django.utils.translation import gettext_noop

from hermes_explorer import store
from redaction import redact
from sessions_app.formatting import duration_compact

from ..window import Scope
from .registry import Figure, Part, Row

TOP_LABELS = {
    "longest": gettext_noop("Longest session"),
    "messages": gettext_noop("Most messages"),
    "tokens": gettext_noop("Most tokens"),
    "tool_calls": gettext_noop("Most tool calls"),
}


def parts(scope: Scope) -> list[Part]:
    top = [
        ("longest", "dur", "dur IS NOT NULL"),
        ("messages", "messages", "messages > 0"),
        ("tokens", "s_in + s_out", "s_in + s_out > 0"),
    ]
    if scope.shape.has_column("sessions", "tool_call_count"):
        top.append(("tool_calls", "tool_calls", "tool_calls > 0"))
    return [
        Part(
            f"'{kind}'",
            (("session_id", "id"), ("started_at", "started_at"), ("value", value)),
            f"FROM per WHERE {condition} ORDER BY {value} DESC, started_at DESC, id DESC LIMIT 1",
        )
        for kind, value, condition in top
    ]


def decode(scope: Scope, rows: list[Row]) -> list[dict[str, Any]]:
    """Hermes's notable sessions, in its order, with their titles (one more statement)."""
    found = dict(rows)
    titles = session_titles([top["session_id"] for top in found.values()], 100)
    tz = timezone.get_current_timezone()
    out = []
    for kind, label in TOP_LABELS.items():
        top = found.get(kind)
        if top is None:
            continue
        out.append(
            {
                "label": label,
                "session_id": top["session_id"],
                "value": _top_value(kind, top["value"]),
                "date": _short_date(top["started_at"], tz),
                # Ours.
                "metric": kind,
                "raw_value": top["value"],
                "title": redact(titles[top["session_id"]])
                if titles.get(top["session_id"])
                else None,
                "started_at": top["started_at"],
            }
        )
    return out


FIGURE = Figure("top_sessions", parts, decode)


def session_titles(ids: list[str], chars: int, budget: float | None = None) -> dict[str, str]:
    """The first ``chars`` characters of these sessions' titles (none where the file has none)."""
    if not ids or not store.shape().has_column("sessions", "title"):
        return {}
    marks = store.marks(ids)
    sql = f"SELECT id, substr(title, 1, {int(chars)}) FROM sessions WHERE id IN ({marks})"
    return dict(store.rows(sql, ids, budget))


_FORMATS = {"messages": "{:d} msgs", "tokens": "{:,d} tokens", "tool_calls": "{:d} calls"}


def _top_value(kind: str, value) -> str:
    if kind == "longest":
        return duration_compact(float(value))
    return _FORMATS[kind].format(int(value))


def _short_date(epoch: float | None, tz: dt.tzinfo) -> str:
    if not epoch:
        return "?"
    try:
        return dt.datetime.fromtimestamp(float(epoch), tz).strftime("%b %d")
    except (OverflowError, OSError, ValueError):
        return "?"
