"""The insights report as the page shows it: charts (:mod:`insights_app.charts`), each with
the words that describe it and its drill-down links, and the page's notes."""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter, defaultdict
from typing import Any

from django.utils.dates import WEEKDAYS_ABBR
from django.utils.translation import gettext, gettext_noop, pgettext

from hermes_explorer import stores
from profiles_app.links import store_reverse
from sessions_app.facets import distinct_values
from sessions_app.formatting import compact, decimal, money, number, short_model
from sessions_app.timefmt import local_date

from . import charts
from .drilldown import Drill
from .figures.activity import WEEKDAYS
from .figures.days import DayRow
from .stats import Report

TOKEN_PARTS = (
    ("k-input", "input_tokens", gettext_noop("input")),
    ("k-output", "output_tokens", gettext_noop("output")),
    ("k-cache-read", "cache_read_tokens", gettext_noop("cache read")),
    ("k-cache-write", "cache_write_tokens", gettext_noop("cache write")),
)
# Chart titles, one sentence per case so each language can order its words.
DAILY_TITLES = {
    ("sessions", "start"): gettext_noop("Sessions per %(bucket)s, by start day"),
    ("sessions", "activity"): gettext_noop("Sessions per %(bucket)s, by activity day"),
    ("tokens", "start"): gettext_noop("Tokens per %(bucket)s, by start day"),
    ("tokens", "activity"): gettext_noop("Tokens per %(bucket)s, by activity day"),
    ("cost", "start"): gettext_noop("Estimated cost per %(bucket)s, by start day"),
    ("cost", "activity"): gettext_noop("Estimated cost per %(bucket)s, by activity day"),
}


def _bucket(size: str) -> str:
    return {
        "day": pgettext("chart bucket", "day"),
        "week": pgettext("chart bucket", "week"),
        "month": pgettext("chart bucket", "month"),
        "year": pgettext("chart bucket", "year"),
    }.get(size, size)


TOP_TOOLS_CHART = 15


def weekday_name(name: str) -> str:
    """Hermes's ``Mon`` … ``Sun`` in the page's language."""
    return str(WEEKDAYS_ABBR[WEEKDAYS.index(name)])


def _span(report: Report, rows: list[DayRow]) -> tuple[dt.date, dt.date] | None:
    """The days the daily charts cover: the window's own days, widened to the data."""
    w = report.window
    data = [r.day for r in rows]
    today = local_date(report.now)
    if w.is_custom:
        first = w.start_day or (min(data) if data else None)
        last = w.end_day or today
    elif w.days is not None:
        first, last = local_date(report.lo), today
    else:
        first, last = (min(data), max(data)) if data else (None, None)
    if first is None or last is None:
        return None
    if data:
        first, last = min(first, min(data)), max(last, max(data))
        if (last - first).days > 20 * 366:
            # A range far wider than the data (a custom range from 1970): show the data.
            first, last = min(data), max(data)
    return first, last


def daily(report: Report, drill: Drill, basis: str) -> dict[str, Any]:
    """Sessions, tokens and cost per day (or week, month, year), bars linked to the days."""
    rows = report.day_rows(basis)
    span = _span(report, rows)
    if span is None:
        return {"size": "day", "buckets": [], "charts": {}}
    size, series = charts.buckets(
        [(r.day, {"sessions": r.sessions, "tokens": r.total_tokens, "cost": r.cost}) for r in rows],
        *span,
    )
    for b in series:
        # Activity days are not start days: the session list cannot show "usage on day X".
        b.href = drill.days(b.first, b.last) if basis == "start" else None
    per = _bucket(size)

    def chart(key: str, fmt, unit: str, css: str):
        values = [b.values.get(key, 0) for b in series]
        peak = max(values, default=0)
        total = sum(values)
        busiest = series[values.index(peak)].label if peak else pgettext("busiest", "none")
        return charts.column_chart(
            [
                charts.Column(b.label, b.tick, v, b.href)
                for b, v in zip(series, values, strict=True)
            ],
            title=gettext(DAILY_TITLES[key, basis]) % {"bucket": per},
            desc=gettext(
                "%(n)s bars from %(first)s to %(last)s; total %(total)s; "
                "busiest: %(busiest)s with %(peak)s."
            )
            % {
                "n": len(series),
                "first": series[0].label,
                "last": series[-1].label,
                "total": f"{fmt(total)} {unit}" if unit else fmt(total),
                "busiest": busiest,
                "peak": fmt(peak),
            },
            fmt=fmt,
            unit=unit,
            css=css,
        )

    return {
        "size": size,
        "buckets": series,
        "charts": {
            "sessions": chart("sessions", compact, pgettext("unit", "sessions"), "bar"),
            "tokens": chart("tokens", compact, pgettext("unit", "tokens"), "bar bar-tokens"),
            "cost": chart("cost", money, "", "bar bar-cost"),
        },
    }


def bar_charts(report: Report, linked: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Tokens per model, top tools, sessions per platform, and the weekday-hour heatmap."""
    models = linked["models"]
    tools = linked["tools"][:TOP_TOOLS_CHART]
    platforms = linked["platforms"]
    busiest, busiest_hour = report.activity["busiest_day"], report.activity["busiest_hour"]
    return {
        "models": charts.hbar_chart(
            [
                charts.Bar(
                    m["model"],
                    m["total_tokens"],
                    m["url"],
                    parts=[(css, m[key]) for css, key, _label in TOKEN_PARTS],
                    note=", ".join(
                        f"{compact(m[key])} {gettext(label)}" for _css, key, label in TOKEN_PARTS
                    ),
                )
                for m in models
                if m["total_tokens"] > 0
            ],
            title=gettext("Tokens per model"),
            desc=(
                gettext(
                    "%(n)s models; stacked bars split input, output, cache read and cache write "
                    "tokens; most tokens: %(model)s."
                )
                % {"n": len(models), "model": models[0]["model"]}
                if models
                else gettext(
                    "%(n)s models; stacked bars split input, output, cache read and cache write "
                    "tokens."
                )
                % {"n": len(models)}
            ),
            unit=pgettext("unit", "tokens"),
        ),
        "tools": charts.hbar_chart(
            [
                charts.Bar(
                    t["tool"],
                    t["count"],
                    t["url"],
                    note=gettext("%(pct)s%% of calls") % {"pct": decimal(t["percentage"], 1)},
                )
                for t in tools
            ],
            title=gettext("Top tools by calls"),
            desc=(
                gettext("The %(n)s most used tools; first: %(tool)s with %(count)s calls.")
                % {"n": len(tools), "tool": tools[0]["tool"], "count": number(tools[0]["count"])}
                if tools
                else gettext("The %(n)s most used tools.") % {"n": len(tools)}
            ),
            unit=pgettext("unit", "calls"),
        ),
        "platforms": charts.hbar_chart(
            [
                charts.Bar(
                    p["platform"],
                    p["sessions"],
                    p["url"],
                    note=gettext("%(messages)s messages, %(tokens)s tokens")
                    % {"messages": number(p["messages"]), "tokens": compact(p["total_tokens"])},
                )
                for p in platforms
            ],
            title=gettext("Sessions per platform"),
            desc=(
                gettext("%(n)s platforms; busiest: %(platform)s with %(count)s sessions.")
                % {
                    "n": len(platforms),
                    "platform": platforms[0]["platform"],
                    "count": number(platforms[0]["sessions"]),
                }
                if platforms
                else gettext("%(n)s platforms.") % {"n": len(platforms)}
            ),
            unit=pgettext("unit", "sessions"),
        ),
        "heatmap": charts.heatmap(
            report.heatmap,
            title=gettext("Sessions started by weekday and hour"),
            desc=gettext(
                "Times in %(zone)s. Busiest day: %(day)s (%(day_count)s sessions); busiest hour: "
                "%(hour)s:00 (%(hour_count)s sessions)."
            )
            % {
                "zone": report.timezone,
                "day": weekday_name(busiest["day"]),
                "day_count": busiest["count"],
                "hour": f"{busiest_hour['hour']:02d}",
                "hour_count": busiest_hour["count"],
            },
            weekdays=[weekday_name(d) for d in WEEKDAYS],
        ),
    }


def page_notes(report: Report, basis: str) -> list[str]:
    """What the reader should know about these numbers (missing tables, cut counts)."""
    notes = []
    if report.models_from == "sessions":
        notes.append(
            gettext(
                "This state.db has no session_model_usage table: the models table comes from "
                "each session's own counters (its recorded model), so model switches and "
                "auxiliary calls (titles, compression, vision) are not visible."
            )
        )
    if report.summaries_build is not None:
        done, total = report.summaries_build
        pct = (
            gettext("%(pct)s%%") % {"pct": 100 * done // total}
            if total
            else pgettext("summaries build", "starting")
        )
        notes.append(
            gettext(
                "Summaries being built: %(pct)s (%(done)s of %(total)s sessions). The message, "
                "tool and skill figures leave out the %(left)s sessions of this window not "
                "summarised yet; every other figure is complete. This page reloads itself every "
                "%(seconds)s seconds until they are all in."
            )
            % {
                "pct": pct,
                "done": number(done),
                "total": number(total),
                "left": number(report.sessions_uncounted),
                "seconds": BUILD_RELOAD_SECONDS,
            }
        )
    elif not report.messages_complete:
        notes.append(
            gettext(
                "Counting messages and tools ran out of time: %(n)s sessions of this window are "
                "not in the message, tool and skill figures yet. Reload in a moment (the work "
                "done so far is kept), or narrow the window."
            )
            % {"n": number(report.sessions_uncounted)}
        )
    if basis == "activity":
        notes.append(
            gettext(
                "Daily charts by activity day use session_daily_usage: usage recorded before "
                "Hermes kept daily rows is missing from them. Bars do not link to sessions (the "
                "session list filters by start day)."
            )
        )
    if report.window.model:
        notes.append(
            gettext(
                "The model filter selects sessions by their recorded model; the models table "
                "still shows every model those sessions used (switches and auxiliary tasks)."
            )
        )
    return notes


def page(report: Report, drill: Drill, linked: dict[str, list[dict[str, Any]]], basis: str) -> dict:
    """The template context of a report that is not empty (the page adds its notes)."""
    return {
        "basis": basis,
        "linked": linked,
        "daily": daily(report, drill, basis),
        "charts": bar_charts(report, linked),
        "drill": drill,
        "heat_rows": [(WEEKDAYS[i], row, sum(row)) for i, row in enumerate(report.heatmap)],
        "tool_latency": latency_links(report.tool_latency),
    }


def latency_links(rows: list[dict] | None) -> list[dict] | None:
    """The tool latency rows, each slowest call with a link to its message in its session's
    timeline (in the call's own profile when several are combined).  The route is reversed
    once per profile and filled in with each plain id (as :class:`sessions_app.links.
    TranscriptLinks` does): a report has a few hundred of these links."""
    if rows is None:
        return None
    routes: dict[str | None, list[str]] = {}

    def url(call: dict) -> str:
        profile, session_id = call["profile"], call["session_id"]
        store = stores.by_name(profile) if profile else None
        if profile not in routes:
            routes[profile] = store_reverse("sessions:timeline", [_PLACEHOLDER], store).split(
                _PLACEHOLDER
            )
        route = routes[profile]
        if len(route) == 2 and _PLAIN.match(session_id):
            return f"{route[0]}{session_id}{route[1]}#m{call['message_id']}"
        return store_reverse("sessions:timeline", [session_id], store) + f"#m{call['message_id']}"

    return [{**row, "slowest": [{**c, "url": url(c)} for c in row["slowest"]]} for row in rows]


_PLACEHOLDER = "hx-session-placeholder"
_PLAIN = re.compile(r"[A-Za-z0-9_-]+\Z")


# Seconds between two reloads of a page whose summaries are being built (a ``refresh`` meta
# tag: no script needed, and none runs once they are built).
BUILD_RELOAD_SECONDS = 3


def model_names() -> list[str]:
    """Short model names for the model box's suggestions (a cached facet)."""
    return sorted({short_model(m) for m in distinct_values("model")} - {""})


STACKED_MODELS = 4


def _percent(value: float) -> str:
    return decimal(value, 1) + "%"


def explorer_charts(report: Report, extra: Any, drill: Drill) -> dict[str, Any]:
    """The explorer's own charts of a report that is not empty: cost by day and model,
    cache-hit rates, reasoning tokens."""
    totals: Counter = Counter()
    for row in extra.cost_by_day_model:
        totals[row["model"]] += row["cost"]
    ranked = sorted(totals, key=lambda m: (-totals[m], m))
    css = {m: f"m-{i}" if i < STACKED_MODELS else "m-other" for i, m in enumerate(ranked)}
    legend = [(css[m], m) for m in ranked[:STACKED_MODELS]]
    if len(ranked) > STACKED_MODELS:
        legend.append(
            ("m-other", gettext("%(n)s other models") % {"n": len(ranked) - STACKED_MODELS})
        )
    span = _span(report, report.days_by_start)
    out: dict[str, Any] = {"legend": legend}
    if span is not None:
        per_day: dict[dt.date, Counter] = defaultdict(Counter)
        for row in extra.cost_by_day_model:
            per_day[dt.date.fromisoformat(row["day"])][css[row["model"]]] += row["cost"]
        size, series = charts.buckets(sorted(per_day.items()), *span)
        order = [c for c, _ in legend]
        out["cost_by_model"] = charts.column_chart(
            [
                charts.Column(
                    b.label,
                    b.tick,
                    sum(b.values.values()),
                    drill.days(b.first, b.last),
                    parts=[(c, b.values.get(c, 0.0)) for c in order],
                )
                for b in series
            ],
            title=gettext("Estimated cost per %(bucket)s by model") % {"bucket": _bucket(size)},
            desc=gettext("%(n)s bars; each split by model, the costliest at the bottom.")
            % {"n": len(series)},
            fmt=money,
        )
        sums = [
            (d.day, {"i": d.input_tokens, "cr": d.cache_read_tokens, "cw": d.cache_write_tokens})
            for d in report.days_by_start
        ]
        size, series = charts.buckets(sums, *span)
        columns = []
        for b in series:
            whole = sum(b.values.values())
            rate = 100 * b.values.get("cr", 0) / whole if whole else 0.0
            columns.append(charts.Column(b.label, b.tick, rate, drill.days(b.first, b.last)))
        out["cache_by_day"] = charts.column_chart(
            columns,
            title=gettext("Cache-hit rate per %(bucket)s") % {"bucket": _bucket(size)},
            desc=gettext(
                "Cache-read tokens over input, cache-read and cache-write tokens, by start day."
            ),
            fmt=_percent,
        )
    out["cache_by_model"] = charts.hbar_chart(
        [
            charts.Bar(m["model"], 100 * m["cache_hit_rate"], m["drilldown"])
            for m in extra.cache_by_model
            if m["cache_hit_rate"] is not None
        ],
        title=gettext("Cache-hit rate per model"),
        desc=gettext("Cache-read tokens over every input-side token, per model."),
        fmt=_percent,
    )
    out["reasoning"] = charts.hbar_chart(
        [
            charts.Bar(m["model"], m["reasoning_tokens"], m["drilldown"])
            for m in extra.reasoning_by_model
        ],
        title=gettext("Reasoning tokens per model"),
        desc=gettext("%(n)s models with reasoning tokens.") % {"n": len(extra.reasoning_by_model)},
        unit=pgettext("unit", "tokens"),
    )
    return out
