"""The explorer's own figures beside Hermes's report (they never change Hermes's fields): the
previous period's overview and each figure's change, cache-hit rates, daily cost by model,
cost per active day, the month's projected cost (an estimate) and reasoning tokens per model.
"""

from __future__ import annotations

import calendar
import datetime as dt
import time
from dataclasses import dataclass, field, replace
from typing import Any

from django.core.cache import cache
from django.utils import timezone
from django.utils.translation import gettext_lazy, gettext_noop

from hermes_explorer import store
from hermes_explorer.dialect import greatest
from sessions_app.timefmt import day_start_epoch, local_date

from . import reports, stats, summary_store
from .drilldown import Drill
from .figures import compute, models, platforms
from .figures.platforms import overview, totals
from .localtime import offset_segments
from .stats import Report
from .window import DAY_SECONDS, Window, scope_of, window_span

# Overview figures compared with the previous period, with their card labels.
COMPARED = (
    ("total_sessions", gettext_lazy("Sessions")),
    ("total_messages", gettext_lazy("Messages")),
    ("total_tool_calls", gettext_lazy("Tool calls")),
    ("total_tokens", gettext_lazy("Tokens")),
    ("total_hours", gettext_lazy("Active time (h)")),
    ("estimated_cost", gettext_lazy("Estimated cost")),
)
# Kept in English in the cached figures; the page translates it.
PROJECTION_METHOD = gettext_noop(
    "Estimate: cost of the sessions started since the 1st of this month, divided by the days "
    "of the month so far (today counted whole), times the days in the month."
)


def previous_window(window: Window, now: float) -> Window | None:
    """The period of the same length just before ``window``; None when it has no length."""
    if window.is_epoch:
        return None
    if window.is_custom:
        if window.start_day is None or window.end_day is None:
            return None
        before = window.start_day - dt.timedelta(days=1)
        return replace(
            window,
            days=None,
            start_day=before - (window.end_day - window.start_day),
            end_day=before,
        )
    if window.days is None:
        return None
    span = window.days * DAY_SECONDS
    return replace(window, days=None, from_epoch=now - 2 * span, to_epoch=now - span)


# The pass of the previous period: the overview's sums only.
PREVIOUS_FIGURES = (platforms.ALL_SOURCES, models.TOTALS)
# Overview fields that need the messages (roles): not computed for the previous period.
_ROLE_FIELDS = tuple(f"{role}_messages" for role in summary_store.ROLES)


def previous_report(window: Window, now: float) -> Report:
    """The overview of ``window`` alone, without message summaries (no compared figure needs
    them); reused while the file is unchanged."""
    signature = store.file_signature()
    key = reports.cache_key(signature, window, "overview-only") if signature else None
    cached = cache.get(key) if key else None
    if cached is None:
        cached = reports.recent_report(window, "overview-only")
    if cached is not None:
        return cached
    lo, hi = window.bounds(now)
    report = Report(window=window, now=now, lo=lo, hi=hi, generated_at=time.time())
    scope, first, last = window_span(scope_of(window, now))
    if scope.sessions:
        segments = offset_segments(timezone.get_current_timezone(), first, last)
        figures = compute(scope, segments, PREVIOUS_FIGURES)
        report.empty = False
        roles = dict.fromkeys(summary_store.ROLES, 0)
        full = overview(totals(figures["platforms"]), roles, [figures["model_totals"]])
        report.overview = {k: v for k, v in full.items() if k not in _ROLE_FIELDS}
    if key:
        cache.set(key, report, reports.REPORT_TTL)
    reports.keep_latest(window, "overview-only", report)
    return report


def report_and_previous(
    window: Window,
    *,
    activity_days: bool = False,
    collect_seconds: float | None = None,
    fresh: bool = False,
) -> tuple[Report, Report | None]:
    """The report of ``window`` and the overview of the period just before it (or None), from
    the report's clock; ``fresh``: never an earlier version's."""
    report = reports.report_for(
        window,
        activity_days=activity_days,
        collect_seconds=collect_seconds,
        now=stats.current_time() if fresh else None,
    )
    if report.empty:
        return report, None
    before = previous_window(window, report.now)
    return report, previous_report(before, report.now) if before is not None else None


def hit_rate(input_tokens: int, cache_read: int, cache_write: int) -> float | None:
    """Cache-read tokens over all input-side tokens; None without any."""
    whole = input_tokens + cache_read + cache_write
    return cache_read / whole if whole else None


def change(current: float, previous: float) -> dict[str, Any]:
    """``current`` against ``previous``: the difference, the % (None from zero) and ▲/▼/=."""
    pct = (current - previous) / previous * 100 if previous else None
    arrow = "▲" if current > previous else "▼" if current < previous else "="
    return {
        "current": current,
        "previous": previous,
        "difference": current - previous,
        "change_pct": pct,
        "arrow": arrow,
    }


@dataclass
class Extras:
    """The explorer's own figures for one report."""

    previous: Report | None = None
    changes: dict[str, dict[str, Any]] = field(default_factory=dict)
    cache_hit_rate: float | None = None
    cache_by_model: list[dict[str, Any]] = field(default_factory=list)
    cache_by_day: list[dict[str, Any]] = field(default_factory=list)
    cost_by_day_model: list[dict[str, Any]] = field(default_factory=list)
    active_days: int = 0
    cost_per_active_day: float | None = None
    projection: dict[str, Any] = field(default_factory=dict)
    reasoning_by_model: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "note": "The explorer's own figures, not part of Hermes's report.",
            "previous_period": (
                {
                    "started_at_min": self.previous.lo,
                    "started_at_max_exclusive": self.previous.hi,
                    "overview": self.previous.overview,
                }
                if self.previous is not None
                else None
            ),
            "changes": self.changes,
            "cache_hit_rate": self.cache_hit_rate,
            "cache_hit_rate_by_model": self.cache_by_model,
            "cache_hit_rate_by_day": self.cache_by_day,
            "cost_by_day_and_model": self.cost_by_day_model,
            "active_days": self.active_days,
            "cost_per_active_day": self.cost_per_active_day,
            "month_projection": self.projection,
            "reasoning_by_model": self.reasoning_by_model,
        }


def month_to_date_cost(window: Window, now: float) -> tuple[float, float]:
    """Estimated cost of the window's sessions started this month (local), and that bound."""
    today = local_date(now)
    first = day_start_epoch(today.replace(day=1))
    scope = scope_of(
        Window(days=None, source=window.source, model=window.model, from_epoch=first), now
    )
    if scope.has_usage:
        u = scope.ucol("estimated_cost_usd", "NULL")
        rows = (
            f"(SELECT COALESCE(SUM(COALESCE({u}, 0.0)), 0.0) FROM session_model_usage u"
            " WHERE u.session_id = s.id)"
        )
    else:
        rows = "0.0"
    own = f"COALESCE({scope.scol('estimated_cost_usd', 'NULL')}, 0.0)"
    sql = f"SELECT COALESCE(SUM({greatest(own, rows)}), 0.0) FROM sessions s WHERE {scope.where}"
    return float(store.rows(sql, scope.params)[0][0] or 0.0), first


def _cache_row(name: str, value, tokens: dict, drilldown: str) -> dict[str, Any]:
    parts = {k: tokens[k] for k in ("input_tokens", "cache_read_tokens", "cache_write_tokens")}
    return {
        name: value,
        "cache_hit_rate": hit_rate(*parts.values()),
        **parts,
        "drilldown": drilldown,
    }


def extras(report: Report, previous: Report | None, drill: Drill) -> Extras:
    """Every figure of this module for ``report`` (and the previous period's report)."""
    out = Extras(previous=previous)
    o = report.overview
    if previous is not None and not report.empty:
        p = previous.overview
        out.changes = {key: change(o.get(key, 0), p.get(key, 0)) for key, _ in COMPARED}
    if report.empty:
        return out
    out.cache_hit_rate = hit_rate(
        o["total_input_tokens"], o["total_cache_read_tokens"], o["total_cache_write_tokens"]
    )
    out.cache_by_model = [
        _cache_row("model", m["model"], m, drill.model(m["model"])) for m in report.models
    ]
    out.cache_by_day = [
        _cache_row("day", d.day.isoformat(), vars(d), drill.day(d.day))
        for d in report.days_by_start
    ]
    out.cost_by_day_model = [
        {**row, "drilldown": drill.day_model(dt.date.fromisoformat(row["day"]), row["model"])}
        for row in report.day_models
    ]
    out.active_days = sum(1 for d in report.days_by_start if d.sessions)
    cost = o["estimated_cost"]
    out.cost_per_active_day = cost / out.active_days if out.active_days else None
    mtd, first = month_to_date_cost(report.window, report.now)
    today = local_date(report.now)
    in_month = calendar.monthrange(today.year, today.month)[1]
    out.projection = {
        "month": today.strftime("%Y-%m"),
        "month_to_date_cost": mtd,
        "days_elapsed": today.day,
        "days_in_month": in_month,
        "projected_cost": mtd / today.day * in_month,
        "method": PROJECTION_METHOD,
        "drilldown": Drill(
            window=Window(
                days=None, source=report.window.source, model=report.window.model, from_epoch=first
            ),
            now=report.now,
        ).all_sessions(),
    }
    out.reasoning_by_model = [
        {
            "model": m["model"],
            "reasoning_tokens": m["reasoning_tokens"],
            "output_tokens": m["output_tokens"],
            "share_of_output": (
                m["reasoning_tokens"] / m["output_tokens"] if m["output_tokens"] else None
            ),
            "drilldown": drill.model(m["model"]),
        }
        for m in report.models
        if m["reasoning_tokens"]
    ]
    return out


def extras_for(report: Report, previous: Report | None, drill: Drill) -> Extras:
    """:func:`extras`, reused with its report while the file is unchanged."""
    variant = ("extras", report.window, report.generated_at, previous and previous.generated_at)
    return store.while_unchanged(
        "insights-extras", variant, lambda: extras(report, previous, drill), reports.REPORT_TTL
    )
