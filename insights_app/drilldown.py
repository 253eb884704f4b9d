"""Where each insights figure leads: the session or message list behind it.

A model, a platform, a run of days or a tool links to the list page filtered the same way as
the report's window (its days, source and model), so the numbers can be checked row by row.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.urls import NoReverseMatch, reverse
from django.utils.http import urlencode

from sessions_app.timefmt import local_date

from .stats import Report
from .window import Window


def _url(name: str, fallback: str, *args) -> str:
    try:
        return reverse(name, args=args)
    except NoReverseMatch:
        return fallback


@dataclass
class Drill:
    """Where each figure leads: the session (or message) list behind it."""

    window: Window
    now: float

    def _dates(self) -> dict[str, str]:
        w = self.window
        if w.is_custom:
            out = {}
            if w.start_day:
                out["started_after"] = w.start_day.isoformat()
            if w.end_day:
                out["started_before"] = w.end_day.isoformat()
            return out
        if w.days is None:
            return {}
        # The session list filters whole local days: from the window's first day.
        return {"started_after": local_date(self.now - w.days * 86_400).isoformat()}

    def _sessions(self, params: dict[str, str | None]) -> str:
        base = _url("sessions:list", "/sessions/")
        query = urlencode({k: v for k, v in params.items() if v})
        return f"{base}?{query}" if query else base

    def model(self, name: str) -> str:
        return self._sessions({**self._dates(), "source": self.window.source, "model": name})

    def source(self, name: str) -> str:
        return self._sessions({**self._dates(), "source": name, "model": self.window.model})

    def days(self, first: dt.date, last: dt.date) -> str:
        return self._sessions(
            {
                "started_after": first.isoformat(),
                "started_before": last.isoformat(),
                "source": self.window.source,
                "model": self.window.model,
            }
        )

    def tool(self, name: str) -> str:
        params = {"tool_name": name, "source": self.window.source}
        query = urlencode({k: v for k, v in params.items() if v})
        return f"{_url('messages:list', '/messages/')}?{query}"

    def session(self, session_id: str) -> str | None:
        try:
            return reverse("sessions:detail", args=[session_id])
        except NoReverseMatch:
            return None  # an id the URL pattern cannot carry (a slash): shown, not linked

    def all_sessions(self) -> str:
        return self._sessions(
            {**self._dates(), "source": self.window.source, "model": self.window.model}
        )


def linked_rows(
    report: Report, drill: Drill, *, messages_allowed: bool
) -> dict[str, list[dict[str, Any]]]:
    """The report's rows with the URL each leads to (tools only for roles that may read
    messages: the link would be a 403 for the others)."""
    return {
        "models": [{**m, "url": drill.model(m["model"])} for m in report.models],
        "platforms": [{**p, "url": drill.source(p["platform"])} for p in report.platforms],
        "tools": [
            {**t, "url": drill.tool(t["tool"]) if messages_allowed else None} for t in report.tools
        ],
        "top_sessions": [{**t, "url": drill.session(t["session_id"])} for t in report.top_sessions],
    }
