"""Where each insights figure leads: the session or message list behind it."""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass, field
from typing import Any

from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils.http import urlencode

from hermes_explorer.hermes_db.current import current_alias
from sessions_app.links import store_link
from sessions_app.timefmt import day_end_epoch, day_start_epoch

from .stats import Report
from .window import Window


def _url(name: str) -> str:
    # A list page's own URL: the same for every link of a report (hundreds of them), and
    # for every report of the profile (its URLs differ from another profile's).
    return _profile_url(name, current_alias(), get_script_prefix(), get_urlconf())


@functools.lru_cache(maxsize=64)
def _profile_url(name: str, *profile) -> str:
    return reverse(name)


def _epoch(value: float) -> str:
    # repr() round-trips: the list compares with exactly the report's bound.
    return repr(float(value))


# Insights count archived and hidden sessions, which the session list hides unless asked.
ALL_FLAGS = {"flags": "all"}
_FLAGS = urlencode(ALL_FLAGS)
# And every stored message: compacted, rewound and hidden rows count for tools.
ALL_MESSAGES = [("show", "compacted"), ("show", "rewound"), ("show", "hidden")]


@dataclass
class Drill:
    """Where each figure leads: the session (or message) list behind it, filtered by the
    window to the second, its source and model, archived and hidden sessions included, so each
    list holds exactly the rows its figure counts."""

    window: Window
    now: float
    _day_heads: dict = field(default_factory=dict, repr=False, compare=False)
    _model_tails: dict = field(default_factory=dict, repr=False, compare=False)

    def _bounds(self, lo: float | None = None, hi: float | None = None) -> dict[str, str]:
        w_lo, w_hi = self.window.bounds(self.now)
        if w_lo is not None:
            lo = w_lo if lo is None else max(lo, w_lo)
        if w_hi is not None:
            hi = w_hi if hi is None else min(hi, w_hi)
        out = {}
        if lo is not None:
            out["started_from_epoch"] = _epoch(lo)
        if hi is not None:
            out["started_to_epoch"] = _epoch(hi)
        return out

    def _in_window(self, lo: float | None = None, hi: float | None = None, **params) -> str:
        """The sessions of the window (within ``[lo, hi)``), of its source and model."""
        w = self.window
        params = {**self._bounds(lo, hi), "source": w.source, "model": w.model, **params}
        query = urlencode({k: v for k, v in {**params, **ALL_FLAGS}.items() if v})
        return f"{_url('sessions:list')}?{query}"

    def model(self, name: str) -> str:
        return self._in_window(used_model=name)

    def source(self, name: str) -> str:
        return self._in_window(source=name)

    def day(self, day: dt.date, tail: str = _FLAGS) -> str:
        # The day's part of the query is encoded once per day (a year's report links each day
        # from four tables); ``tail`` is the rest.
        head = self._day_heads.get(day)
        if head is None:
            bounds = self._bounds(day_start_epoch(day), day_end_epoch(day))
            params = {**bounds, "source": self.window.source, "model": self.window.model}
            head = self._day_heads[day] = urlencode({k: v for k, v in params.items() if v})
        base = _url("sessions:list")
        return f"{base}?{head}&{tail}" if head else f"{base}?{tail}"

    def day_model(self, day: dt.date, name: str) -> str:
        """The sessions started on ``day`` that used model ``name`` (a thousand links a year:
        the day's part is encoded once per day, the model's once per model)."""
        tail = self._model_tails.get(name)
        if tail is None:
            params = {"used_model": name, **ALL_FLAGS}
            tail = self._model_tails[name] = urlencode({k: v for k, v in params.items() if v})
        return self.day(day, tail)

    def days(self, first: dt.date, last: dt.date) -> str:
        return self._in_window(day_start_epoch(first), day_end_epoch(last))

    def skill(self, name: str) -> str:
        """The assistant messages that load or edit skill ``name``."""
        return self._messages([("skill", name), ("role", "assistant")])

    def tool(self, name: str) -> str:
        return self._messages([("tool_name", name), ("role", "tool")])

    def _messages(self, what: list[tuple[str, str]]) -> str:
        params = [
            *what,
            ("source", self.window.source),
            ("session_model", self.window.model),
            *[("session_" + k, v) for k, v in self._bounds().items()],
            *ALL_MESSAGES,
        ]
        query = urlencode([(k, v) for k, v in params if v])
        return f"{_url('messages:list')}?{query}"

    def session(self, session_id: str) -> str | None:
        # None for an id the URL pattern cannot carry (a slash): shown, not linked.
        return store_link("sessions:detail", [session_id])

    def all_sessions(self) -> str:
        return self._in_window()


def linked_rows(
    report: Report, drill: Drill, *, messages_allowed: bool
) -> dict[str, list[dict[str, Any]]]:
    """The report's rows with ``url`` (the page's link) and ``drilldown`` (the same list for
    the JSON export); tools only for roles that may read messages.  A tool's list holds its
    result rows, ``drilldown_count``, which with ``calls_without_result`` make Hermes's count.
    """

    def both(url: str | None) -> dict[str, str | None]:
        return {"url": url, "drilldown": url}

    return {
        "models": [{**m, **both(drill.model(m["model"]))} for m in report.models],
        "platforms": [{**p, **both(drill.source(p["platform"]))} for p in report.platforms],
        "tools": [
            {
                **t,
                **both(drill.tool(t["tool"]) if messages_allowed else None),
                # Ours: the rows the link lists, and unanswered calls; Hermes's count is both.
                "drilldown_count": report.tool_result_rows.get(t["tool"], 0),
                "calls_without_result": t["count"] - report.tool_result_rows.get(t["tool"], 0),
            }
            for t in report.tools
        ],
        "top_skills": [
            {**k, **both(drill.skill(k["skill"]) if messages_allowed else None)}
            for k in report.skills.get("top_skills", [])
        ],
        "top_sessions": [{**t, "url": drill.session(t["session_id"])} for t in report.top_sessions],
        "daily_by_start_day": [
            {**d.as_dict(), "drilldown": drill.day(d.day)} for d in report.days_by_start
        ],
    }
