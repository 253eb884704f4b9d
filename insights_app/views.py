"""``/insights/``: Hermes's insights report as a page, as JSON, and as CSV tables.

The view parses the window, asks :mod:`insights_app.reports` for the (cached) report, and
renders it with its charts and drill-down links; ``_export=json`` gives Hermes's report
dictionary, ``_export=csv&table=…`` one of its tables.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.http import HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.views.decorators.http import require_GET

from accounts_app.roles import can_see_content
from hermes_explorer import store
from hermes_explorer.hermes_db.deadline import query_budget
from sessions_app.facets import distinct_values

from . import charts, reports
from .forms import InsightsForm
from .stats import TOKEN_KEYS, WEEKDAYS, DayRow, Report, Window

TEMPLATE = "insights_app/report_detail.html"
CSV_TABLES = ("models", "platforms", "tools", "skills", "daily")
TOKEN_PARTS = (
    ("k-input", "input_tokens", "input"),
    ("k-output", "output_tokens", "output"),
    ("k-cache-read", "cache_read_tokens", "cache read"),
    ("k-cache-write", "cache_write_tokens", "cache write"),
)
TOP_TOOLS_CHART = 15


def _budget() -> float:
    # The first report after a start reads every message of the window once, in chunks of
    # sessions (see summaries.py): each statement gets more room than a list page's...
    return float(getattr(settings, "HERMES_INSIGHTS_TIMEOUT", 15))


def _collect_seconds() -> float:
    # ...and the whole first pass stops after this long, well inside the worker timeout;
    # the page says what is missing and the next load carries on.
    return float(getattr(settings, "HERMES_INSIGHTS_COLLECT_SECONDS", 20))


def _local_date(epoch: float) -> dt.date:
    return dt.datetime.fromtimestamp(epoch, timezone.get_current_timezone()).date()


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
        return {"started_after": _local_date(self.now - w.days * 86_400).isoformat()}

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


# --- Rows with links -------------------------------------------------------------------------


def _linked(
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


def _day_rows(report: Report, basis: str) -> list[DayRow]:
    if basis == "activity" and report.days_by_activity is not None:
        return report.days_by_activity
    return report.days_by_start


def _span(report: Report, rows: list[DayRow]) -> tuple[dt.date, dt.date] | None:
    """The days the daily charts cover: the window's own days, widened to the data."""
    w = report.window
    data = [r.day for r in rows]
    today = _local_date(report.now)
    if w.is_custom:
        first = w.start_day or (min(data) if data else None)
        last = w.end_day or today
    elif w.days is not None:
        first, last = _local_date(report.lo), today
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


def _daily(report: Report, drill: Drill, basis: str) -> dict[str, Any]:
    rows = _day_rows(report, basis)
    span = _span(report, rows)
    if span is None:
        return {"size": "day", "buckets": [], "charts": {}}
    size, series = charts.buckets(
        [
            (
                r.day,
                {
                    "sessions": r.sessions,
                    "messages": r.messages,
                    "tokens": r.total_tokens,
                    **{k: getattr(r, k) for k in TOKEN_KEYS},
                    "cost": r.cost,
                },
            )
            for r in rows
        ],
        *span,
    )
    for b in series:
        # Activity days are not start days: the session list cannot show "usage on day X".
        b.href = drill.days(b.first, b.last) if basis == "start" else None
    per = {"day": "day", "week": "week", "month": "month", "year": "year"}[size]
    how = "by start day" if basis == "start" else "by activity day"

    def chart(key: str, title: str, fmt, unit: str, css: str):
        values = [b.values.get(key, 0) for b in series]
        peak = max(values, default=0)
        total = sum(values)
        busiest = series[values.index(peak)].label if peak else "none"
        return charts.column_chart(
            [charts.Column(b.label, b.tick, b.values.get(key, 0), b.href) for b in series],
            title=f"{title} per {per}, {how}",
            desc=(
                f"{len(series)} bars from {series[0].label} to {series[-1].label}; "
                f"total {fmt(total)}{(' ' + unit) if unit else ''}; "
                f"busiest: {busiest} with {fmt(peak)}."
            ),
            fmt=fmt,
            unit=unit,
            css=css,
        )

    return {
        "size": size,
        "buckets": series,
        "charts": {
            "sessions": chart("sessions", "Sessions", charts.compact, "sessions", "bar"),
            "tokens": chart("tokens", "Tokens", charts.compact, "tokens", "bar bar-tokens"),
            "cost": chart("cost", "Estimated cost", charts.money, "", "bar bar-cost"),
        },
    }


def _charts(report: Report, linked: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    models = linked["models"]
    tools = linked["tools"][:TOP_TOOLS_CHART]
    platforms = linked["platforms"]
    busiest = report.activity.get("busiest_day", {}) if report.activity else {}
    busiest_hour = report.activity.get("busiest_hour", {}) if report.activity else {}
    return {
        "models": charts.hbar_chart(
            [
                charts.Bar(
                    m["model"],
                    m["total_tokens"],
                    m["url"],
                    parts=[(css, m[key]) for css, key, _label in TOKEN_PARTS],
                    note=", ".join(
                        f"{charts.compact(m[key])} {label}" for _css, key, label in TOKEN_PARTS
                    ),
                )
                for m in models
                if m["total_tokens"] > 0
            ],
            title="Tokens per model",
            desc=(
                f"{len(models)} models; stacked bars split input, output, cache read and cache "
                "write tokens" + (f"; most tokens: {models[0]['model']}." if models else ".")
            ),
            unit="tokens",
        ),
        "tools": charts.hbar_chart(
            [
                charts.Bar(t["tool"], t["count"], t["url"], note=f"{t['percentage']:.1f}% of calls")
                for t in tools
            ],
            title="Top tools by calls",
            desc=(
                f"The {len(tools)} most used tools"
                + (
                    f"; first: {tools[0]['tool']} with {tools[0]['count']:,} calls."
                    if tools
                    else "."
                )
            ),
            unit="calls",
        ),
        "platforms": charts.hbar_chart(
            [
                charts.Bar(
                    p["platform"],
                    p["sessions"],
                    p["url"],
                    note=f"{p['messages']:,} messages, {charts.compact(p['total_tokens'])} tokens",
                )
                for p in platforms
            ],
            title="Sessions per platform",
            desc=(
                f"{len(platforms)} platforms"
                + (
                    f"; busiest: {platforms[0]['platform']} with {platforms[0]['sessions']:,} sessions."
                    if platforms
                    else "."
                )
            ),
            unit="sessions",
        ),
        "heatmap": charts.heatmap(
            report.heatmap,
            title="Sessions started by weekday and hour",
            desc=(
                f"Times in {report.timezone}. Busiest day: {busiest.get('day', 'none')} "
                f"({busiest.get('count', 0)} sessions); busiest hour: "
                f"{busiest_hour.get('hour', 0):02d}:00 ({busiest_hour.get('count', 0)} sessions)."
            ),
            weekdays=WEEKDAYS,
        ),
    }


def _notes(report: Report, basis: str) -> list[str]:
    notes = []
    if report.models_from == "sessions":
        notes.append(
            "This state.db has no session_model_usage table: the models table comes from each "
            "session's own counters (its recorded model), so model switches and auxiliary "
            "calls (titles, compression, vision) are not visible."
        )
    if not report.messages_complete:
        notes.append(
            f"Counting messages and tools ran out of time: {report.sessions_uncounted:,} "
            "sessions of this window are not in the message, tool and skill figures yet. "
            "Reload in a moment (the work done so far is kept), or narrow the window."
        )
    if basis == "activity":
        notes.append(
            "Daily charts by activity day use session_daily_usage: usage recorded before Hermes "
            "kept daily rows is missing from them. Bars do not link to sessions (the session "
            "list filters by start day)."
        )
    if report.window.model:
        notes.append(
            "The model filter selects sessions by their recorded model; the models table still "
            "shows every model those sessions used (switches and auxiliary tasks)."
        )
    return notes


# --- Exports --------------------------------------------------------------------------------


def _json(report: Report, linked: dict[str, list[dict[str, Any]]]) -> JsonResponse:
    data = report.as_hermes_dict()
    for key in ("models", "platforms", "tools", "top_sessions"):
        data[key] = linked[key]
    response = JsonResponse(data, json_dumps_params={"ensure_ascii": False})
    response["Content-Disposition"] = f'inline; filename="{_filename(report, "report", "json")}"'
    return response


def _filename(report: Report, table: str, ext: str) -> str:
    w = report.window
    if w.is_custom:
        span = f"{w.start_day or 'start'}_{w.end_day or 'today'}"
    else:
        span = "all-time" if w.days is None else f"{w.days}d"
    return f"hermes-insights-{table}-{span}.{ext}"


def _cell(value: Any) -> Any:
    # A spreadsheet runs a cell that starts with = + - @ as a formula: names come from the
    # state.db, so text cells are defused with a leading quote. Numbers stay numbers.
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def _csv(report: Report, table: str, basis: str) -> HttpResponse:
    if table == "models":
        header = [
            "model",
            "sessions",
            "input_tokens",
            "output_tokens",
            "cache_read_tokens",
            "cache_write_tokens",
            "reasoning_tokens",
            "total_tokens",
            "api_calls",
            "tool_calls",
            "cost",
            "actual_cost",
        ]
        rows = [[m[k] for k in header] for m in report.models]
    elif table == "platforms":
        header = [
            "platform",
            "sessions",
            "messages",
            *TOKEN_KEYS,
            "total_tokens",
            "tool_calls",
            "estimated_cost",
        ]
        rows = [[p[k] for k in header] for p in report.platforms]
    elif table == "tools":
        header = ["tool", "count", "percentage"]
        rows = [[t["tool"], t["count"], round(t["percentage"], 4)] for t in report.tools]
    elif table == "skills":
        header = ["skill", "view_count", "manage_count", "total_count", "last_used_at"]
        rows = [
            [
                s["skill"],
                s["view_count"],
                s["manage_count"],
                s["total_count"],
                _iso(s["last_used_at"]),
            ]
            for s in report.skills["top_skills"]
        ]
    else:
        header = ["day", "sessions", "messages", *TOKEN_KEYS, "total_tokens", "cost"]
        rows = [[d.as_dict()[k] for k in header] for d in _day_rows(report, basis)]
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    writer.writerows([[_cell(v) for v in row] for row in rows])
    response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{_filename(report, table, "csv")}"'
    return response


def _iso(epoch: float | None) -> str:
    if epoch is None:
        return ""
    try:
        moment = dt.datetime.fromtimestamp(float(epoch), timezone.get_current_timezone())
    except (OverflowError, OSError, ValueError):
        return ""
    return moment.isoformat(timespec="seconds")


# --- The page -------------------------------------------------------------------------------


@require_GET
def index(request):
    shape = store.shape()
    export = request.GET.get("_export", "")
    if export not in ("", "json", "csv"):
        return HttpResponseBadRequest(
            "Unknown _export format: use json, or csv with table=" + "|".join(CSV_TABLES) + ".",
            content_type="text/plain; charset=utf-8",
        )
    table = request.GET.get("table", "")
    if export == "csv" and table not in CSV_TABLES:
        return HttpResponseBadRequest(
            "CSV export needs table=" + "|".join(CSV_TABLES) + ".",
            content_type="text/plain; charset=utf-8",
        )
    form = InsightsForm(
        request.GET or None,
        sources=distinct_values("source"),
        activity_days=shape.has_daily_usage,
    )
    if form.is_bound and not form.is_valid():
        if export:
            return JsonResponse({"errors": form.errors.get_json_data()}, status=400)
        return render(
            request,
            TEMPLATE,
            {"form": form, "report": None, "shape": shape, "models_datalist": _model_names()},
        )
    window, basis = form.window(), form.chart_basis()
    with query_budget(_budget()):
        report = reports.report_for(
            window, activity_days=basis == "activity", collect_seconds=_collect_seconds()
        )
    drill = Drill(window=window, now=report.now)
    linked = _linked(report, drill, messages_allowed=can_see_content(request.user))
    if export == "json":
        return _json(report, linked)
    if export == "csv":
        return _csv(report, table, basis)
    return render(
        request,
        TEMPLATE,
        {
            "form": form,
            "report": report,
            "shape": shape,
            "basis": basis,
            "linked": linked,
            "daily": _daily(report, drill, basis) if not report.empty else None,
            "charts": _charts(report, linked) if not report.empty else None,
            "notes": _notes(report, basis),
            "drill": drill,
            "heat_rows": [(WEEKDAYS[i], row, sum(row)) for i, row in enumerate(report.heatmap)],
            "models_datalist": _model_names(),
            "csv_tables": CSV_TABLES,
        },
    )


def _model_names() -> list[str]:
    """Short model names for the model box's suggestions (a cached facet)."""
    return sorted({(m or "").split("/")[-1] for m in distinct_values("model")} - {""})
