"""The numbers behind ``/insights/``: what ``hermes insights`` reports, computed in SQL, with
the field names of Hermes's dictionary (so ``_export=json`` can replace a script that parsed
it) and Hermes's semantics except where a ``NOTE:`` says otherwise."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

from django.utils import timezone

from .figures import one_pass, tool_latency
from .figures.activity import activity
from .figures.days import DayRow, days_by_activity
from .figures.messages import message_figures, skill_breakdown, tool_breakdown
from .figures.platforms import overview, platform_rows, totals
from .localtime import offset_segments
from .window import Window, scope_of, window_span

# ``Window`` is what a report is asked for: callers import it from here with the report.
__all__ = ["DayRow", "Report", "Window", "build_report", "current_time"]


def current_time() -> float:
    """The clock windows are measured from (tests replace it; ``build_report`` takes ``now``)."""
    return time.time()


@dataclass
class Report:
    """Everything the page, the JSON and the CSV downloads show for one window."""

    window: Window
    now: float
    lo: float | None
    hi: float | None
    generated_at: float
    empty: bool = True
    overview: dict[str, Any] = field(default_factory=dict)
    models: list[dict[str, Any]] = field(default_factory=list)
    platforms: list[dict[str, Any]] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    skills: dict[str, Any] = field(default_factory=lambda: skill_breakdown([]))
    activity: dict[str, Any] = field(default_factory=dict)
    top_sessions: list[dict[str, Any]] = field(default_factory=list)
    heatmap: list[list[int]] = field(default_factory=lambda: [[0] * 24 for _ in range(7)])
    days_by_start: list[DayRow] = field(default_factory=list)
    days_by_activity: list[DayRow] | None = None  # None: not asked, or the file has none
    # Ours: estimated cost per start day and model ({"day", "model", "cost"}).
    day_models: list[dict[str, Any]] = field(default_factory=list)
    models_from: str = "session_model_usage"  # or "sessions" on files without that table
    sessions_uncounted: int = 0  # window sessions whose messages the deadline left uncounted
    # (done, total) sessions of the summaries being built in the background, when they are.
    summaries_build: tuple[int, int] | None = None
    # Ours: per tool, its result rows (what its drill-down lists; Hermes's count may be more).
    tool_result_rows: dict[str, int] = field(default_factory=dict)
    # Ours: per tool, the time from each call to its result (:mod:`.figures.tool_latency`);
    # None when the file cannot pair or time calls.
    tool_latency: list[dict[str, Any]] | None = field(default_factory=list)
    timezone: str = "UTC"
    elapsed: float = 0.0

    @property
    def messages_complete(self) -> bool:
        return self.sessions_uncounted == 0

    def day_rows(self, basis: str) -> list[DayRow]:
        """The days by ``basis``: "activity" (when read) or "start"."""
        if basis == "activity" and self.days_by_activity is not None:
            return self.days_by_activity
        return self.days_by_start

    def as_hermes_dict(self) -> dict[str, Any]:
        """Hermes's report dictionary (same keys), plus fields of ours beside them."""
        w = self.window
        return {
            "days": w.days if not w.is_custom else None,
            "source_filter": w.source,
            "empty": self.empty,
            "generated_at": self.generated_at,
            "overview": self.overview,
            "models": self.models,
            "platforms": self.platforms,
            "tools": self.tools,
            "skills": self.skills,
            "activity": self.activity,
            "top_sessions": self.top_sessions,
            # Ours.
            "model_filter": w.model,
            "window": {
                "label": w.label,
                "started_at_min": self.lo,
                "started_at_max_exclusive": self.hi,
                "start_day": w.start_day.isoformat() if w.start_day else None,
                "end_day": w.end_day.isoformat() if w.end_day else None,
                "time_zone": self.timezone,
            },
            "models_from": self.models_from,
            "messages_complete": self.messages_complete,
            "sessions_uncounted": self.sessions_uncounted,
            "summaries_being_built": (
                {"done": self.summaries_build[0], "total": self.summaries_build[1]}
                if self.summaries_build is not None
                else None
            ),
            "daily_by_start_day": [d.as_dict() for d in self.days_by_start],
            "daily_by_activity_day": (
                [d.as_dict() for d in self.days_by_activity]
                if self.days_by_activity is not None
                else None
            ),
            "weekday_hour_sessions": self.heatmap,
            "tool_latency": self.tool_latency,
            "cost_note": "Token and cost figures are local estimates, not a bill.",
        }


def build_report(
    window: Window,
    *,
    now: float | None = None,
    activity_days: bool = False,
    use_cache: bool = True,
    collect_seconds: float | None = None,
) -> Report:
    """The whole report for ``window`` (``use_cache=False``: every summary recomputed;
    ``collect_seconds``: the time for summaries not stored yet)."""
    started = time.monotonic()
    now = current_time() if now is None else float(now)
    tz = timezone.get_current_timezone()
    scope = scope_of(window, now)
    lo, hi = window.bounds(now)
    report = Report(
        window=window,
        now=now,
        lo=lo,
        hi=hi,
        generated_at=time.time(),
        timezone=str(tz),
        models_from="session_model_usage" if scope.has_usage else "sessions",
    )
    scope, first, last = window_span(scope)
    if not scope.sessions:
        report.elapsed = time.monotonic() - started
        return report
    report.empty = False
    figures, messages = one_pass(
        scope,
        offset_segments(tz, first, last),
        lambda: message_figures(
            scope, window, (lo, hi), use_cache=use_cache, time_limit=collect_seconds
        ),
    )
    report.models = figures["models"].table
    report.overview = overview(totals(figures["platforms"]), messages.roles, report.models)
    report.platforms = platform_rows(figures["platforms"])
    _set_messages(report, messages)
    report.heatmap = figures["heatmap"]
    report.days_by_start = figures["days"]
    report.activity = activity(report.heatmap, [d.day for d in report.days_by_start if d.sessions])
    report.top_sessions = figures["top_sessions"]
    report.day_models = figures["models"].by_day
    if activity_days and scope.shape.has_table("session_daily_usage"):
        report.days_by_activity = days_by_activity(scope)
    report.elapsed = time.monotonic() - started
    return report


def _set_messages(report: Report, messages) -> None:
    report.sessions_uncounted = messages.sessions_uncounted
    report.summaries_build = messages.build
    report.tools = tool_breakdown(messages.tools)
    report.tool_result_rows = dict(messages.tool_rows)
    report.skills = skill_breakdown(messages.skills)
    found = messages.latency
    report.tool_latency = None if found is None else tool_latency.latency_rows(*found)
    tool_latency.add_calls(report.tools, report.tool_latency)
    report.overview.update({f"{role}_messages": n for role, n in messages.roles.items()})


def with_messages(report: Report, *, collect_seconds: float | None = None) -> Report:
    """``report``, whose summaries were still being built, with its message figures read
    again over the same window and clock."""
    started = time.monotonic()
    scope, _first, _last = window_span(scope_of(report.window, report.now))
    messages = message_figures(
        scope, report.window, (report.lo, report.hi), use_cache=True, time_limit=collect_seconds
    )
    fresh = replace(report, overview=dict(report.overview), generated_at=time.time())
    _set_messages(fresh, messages)
    fresh.elapsed = time.monotonic() - started
    return fresh
