"""Insights over several profiles: the per-profile reports (each cached as on its own page),
summed figure by figure into one; averages and shares are recomputed from the sums, and each
notable session is the most notable of the profiles' (linking into its profile).
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections import Counter
from typing import Any

from django.core.cache import cache
from django.db import DatabaseError
from django.utils.http import urlencode
from django.utils.safestring import SafeString
from django.utils.translation import gettext

from hermes_explorer import stores as registry
from hermes_explorer.stores import Store
from insights_app import charts, explorer, reports, summaries, summary_store
from insights_app.drilldown import Drill
from insights_app.figures import tool_latency
from insights_app.figures.activity import activity
from insights_app.figures.days import DayRow
from insights_app.figures.messages import add_skill, skill_breakdown, tool_breakdown
from insights_app.figures.platforms import overview, totals
from insights_app.figures.registry import TOKEN_KEYS
from insights_app.stats import Report
from profiles_app.links import store_reverse
from sessions_app.search.merged import merged_choices

# Overview fields that are sums of the profiles' own: all but the averages and the date range.
_ADDED = [
    key
    for key in overview(totals({}), dict.fromkeys(summary_store.ROLES, 0), [])
    if not key.startswith(("avg_", "date_range_"))
]


def add_rows(lists, key: str) -> dict[Any, dict]:
    """Rows of the same ``key`` value summed (numbers), other fields from the first seen."""
    merged: dict[Any, dict] = {}
    for rows in lists:
        for row in rows:
            into = merged.get(row[key])
            if into is None:
                merged[row[key]] = dict(row)
                continue
            for name, value in row.items():
                if name != key and isinstance(value, int | float) and not isinstance(value, bool):
                    into[name] = (into.get(name) or 0) + value
    return merged


def _overview(reports: list[Report]) -> dict[str, Any]:
    views = [r.overview for r in reports if r.overview]
    out = {key: sum(v.get(key) or 0 for v in views) for key in _ADDED}
    n, durations = out["total_sessions"], out["sessions_with_duration"]
    out["avg_session_duration"] = out["total_hours"] * 3600 / durations if durations else 0
    out["avg_messages_per_session"] = out["total_messages"] / n if n else 0
    out["avg_tokens_per_session"] = out["total_tokens"] / n if n else 0
    starts = [v["date_range_start"] for v in views if v.get("date_range_start") is not None]
    ends = [v["date_range_end"] for v in views if v.get("date_range_end") is not None]
    out["date_range_start"] = min(starts) if starts else None
    out["date_range_end"] = max(ends) if ends else None
    return out


def _days(lists: list[list[DayRow] | None]) -> list[DayRow]:
    by_day: dict[dt.date, DayRow] = {}
    for rows in lists:
        for row in rows or []:
            into = by_day.setdefault(row.day, DayRow(day=row.day))
            for name in ("sessions", "messages", *TOKEN_KEYS, "cost", "tool_calls"):
                setattr(into, name, getattr(into, name) + getattr(row, name))
    return [by_day[day] for day in sorted(by_day)]


def _tool_latency(out: Report, parts: list[tuple[Store, Report]]) -> None:
    """Tool latency over every profile's calls (a median of medians is no median): read from
    each profile's stored summaries over the window, kept while the profiles' reports are
    the same ones.  The slowest calls name their profile."""
    timed = [(store, r) for store, r in parts if r.tool_latency is not None]
    if not timed:
        out.tool_latency = None
        return
    versions = tuple((store.name, r.generated_at) for store, r in timed)
    key = reports.cache_key((), out.window, ("tool-latency", versions))
    rows = cache.get(key)
    if rows is None:
        w = out.window
        calls = []
        for store, report in timed:
            with registry.using(store):
                q = summary_store.window_q(report.lo, report.hi, w.source, w.model)
                calls += [(*c, store.name) for c in summary_store.calls(summaries.file_key(), q)]
        rows = tool_latency.latency_rows(*tool_latency.gather(calls))
        cache.set(key, rows, reports.REPORT_TTL)
    out.tool_latency = rows


def combine(parts: list[tuple[Store, Report]]) -> Report:
    """One report of every ``(store, report)``: the sum of the profiles' reports."""
    reports = [r for _store, r in parts]
    first = reports[0]
    out = Report(
        window=first.window,
        now=first.now,
        lo=first.lo,
        hi=first.hi,
        generated_at=min(r.generated_at for r in reports),
        timezone=first.timezone,
    )
    out.empty = all(r.empty for r in reports)
    out.models_from = (
        first.models_from
        if len({r.models_from for r in reports}) == 1
        else "session_model_usage where the profile has it, else sessions"
    )
    out.sessions_uncounted = sum(r.sessions_uncounted for r in reports)
    out.elapsed = sum(r.elapsed for r in reports)
    builds = [r.summaries_build for r in reports if r.summaries_build is not None]
    if builds:
        # Profiles whose summaries are being built: how far all of those builds are.
        out.summaries_build = (sum(d for d, _t in builds), sum(t for _d, t in builds))
    if out.empty:
        return out
    out.overview = _overview(reports)
    out.models = sorted(
        add_rows([r.models for r in reports], "model").values(),
        key=lambda m: (-m["total_tokens"], -m["sessions"], m["model"]),
    )
    out.platforms = sorted(
        add_rows([r.platforms for r in reports], "platform").values(),
        key=lambda p: (-p["sessions"], p["platform"]),
    )
    tools, result_rows, day_costs = Counter(), Counter(), Counter()
    skills: dict[str, dict] = {}
    best: dict[str, dict] = {}  # the notable sessions, in the order their metrics come
    for store, report in parts:
        for tool in report.tools:
            tools[tool["tool"]] += tool["count"]
        result_rows.update(report.tool_result_rows)
        for s in report.skills["top_skills"]:
            add_skill(skills, s["skill"], s["view_count"], s["manage_count"], s["last_used_at"])
        for row in report.day_models:
            day_costs[row["day"], row["model"]] += row["cost"]
        for top in report.top_sessions:
            metric = top["metric"]
            if metric not in best or (top["raw_value"] or 0) > (best[metric]["raw_value"] or 0):
                best[metric] = {**top, "profile": store.name, "store": store}
    out.tools = tool_breakdown(tools)
    out.tool_result_rows = dict(result_rows)
    out.skills = skill_breakdown(list(skills.values()))
    _tool_latency(out, parts)
    tool_latency.add_calls(out.tools, out.tool_latency)
    out.heatmap = [[sum(r.heatmap[d][h] for r in reports) for h in range(24)] for d in range(7)]
    out.days_by_start = _days([r.days_by_start for r in reports])
    if any(r.days_by_activity is not None for r in reports):
        out.days_by_activity = _days([r.days_by_activity for r in reports])
    out.activity = activity(out.heatmap, [d.day for d in out.days_by_start if d.sessions])
    out.top_sessions = list(best.values())
    out.day_models = [
        {"day": day, "model": model, "cost": cost}
        for (day, model), cost in sorted(day_costs.items())
    ]
    return out


def breakdown(parts: list[tuple[Store, Report]], query: dict[str, str]) -> list[dict[str, Any]]:
    """A row per profile: sessions, messages, tokens, cost, top model, and its links."""
    params = urlencode(query)
    return [
        {
            "profile": store.name,
            "sessions": report.overview.get("total_sessions", 0),
            "messages": report.overview.get("total_messages", 0),
            "total_tokens": report.overview.get("total_tokens", 0),
            "estimated_cost": report.overview.get("estimated_cost", 0.0),
            "top_model": report.models[0]["model"] if report.models else None,
            "url": store_reverse("insights:index", (), store) + (f"?{params}" if params else ""),
        }
        for store, report in parts
    ]


def each(parts, compute, notes: list[str]) -> list[tuple]:
    """``[(store, compute(store))]`` for every store of ``parts`` that could be read (None:
    the current store); the others are named in ``notes``."""
    found = []
    for store in parts:
        try:
            with registry.using(store):
                found.append((store, compute(store)))
        except (DatabaseError, sqlite3.Error) as exc:
            if store is None:
                raise
            notes.append(
                registry.unavailable_note(store, registry.REGISTRY.failed(store, exc).reason)
            )
    return found


def merged_sources(parts: list[Store]) -> list[str]:
    return [value for value, _label in merged_choices(parts)]


def merged_extras(
    report: Report, previous: Report | None, drill: Drill, parts: list[Store]
) -> explorer.Extras:
    """The explorer's figures of a combined report; the projection from every profile's
    month-to-date cost."""
    extra = explorer.extras(report, previous, drill)
    if extra.projection:
        mtd = 0.0
        for store in parts:
            with registry.using(store):
                mtd += explorer.month_to_date_cost(report.window, report.now)[0]
        days, in_month = extra.projection["days_elapsed"], extra.projection["days_in_month"]
        extra.projection = {
            **extra.projection,
            "month_to_date_cost": mtd,
            "projected_cost": mtd / days * in_month if days else 0.0,
        }
    return extra


def profiles_chart(rows: list[dict]) -> SafeString:
    return charts.hbar_chart(
        [charts.Bar(r["profile"], r["sessions"], r["url"]) for r in rows],
        title=gettext("Sessions per profile"),
        desc=gettext(
            "Sessions of the window in each profile; each bar opens that profile's report."
        ),
    )
