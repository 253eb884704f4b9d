"""``/failures/``: failures by window, grouped by tool, model, source and day (see
:mod:`live_app.failures`), as a page, as JSON and as CSV.  Viewers see the same counts and
metadata as everyone: the page never shows message content."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.http import JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext, pgettext
from django.views.decorators.http import require_GET

from hermes_explorer import store
from insights_app import charts
from sessions_app.exports import stream_export
from sessions_app.formatting import date_text

from .failures import KIND_LABELS, MAX_DAYS, Filters, local_day, report_for

CSV_COLUMNS = ["group", "key", "failures", "tool_calls", "tool_errors_per_100_calls", "sessions"]
CSV_COLUMNS += sorted(KIND_LABELS)


def _filters(request) -> Filters:
    try:
        days = int(request.GET.get("days") or 30)
    except (TypeError, ValueError):
        days = 30
    clean = {k: (request.GET.get(k) or "").strip()[:200] for k in ("source", "model", "tool")}
    return Filters(days=max(1, min(days, MAX_DAYS)), **clean)


def _link(f: Filters, **changes) -> str:
    params = {"days": f.days, "source": f.source, "model": f.model, "tool": f.tool, **changes}
    return reverse("failures:index") + "?" + urlencode({k: v for k, v in params.items() if v})


def _chart(report):
    rows = [
        (dt.date.fromisoformat(day), {"failures": sum(kinds.values())})
        for day, kinds in report.by_day
    ]
    first = dt.date.fromisoformat(local_day(report.since))
    last = dt.date.fromisoformat(local_day(report.now))
    _size, buckets = charts.buckets(rows, first, last)
    columns = [
        charts.Column(
            label=b.label,
            tick=b.tick,
            value=b.values.get("failures", 0),
            href=_sessions_link(report.filters, b.first, b.last),
        )
        for b in buckets
    ]
    return charts.column_chart(
        columns,
        title=gettext("Failures over time"),
        desc=gettext("%(n)s failures between %(first)s and %(last)s, per day.")
        % {"n": report.failures, "first": date_text(first), "last": date_text(last)},
        unit=pgettext("unit", "failures"),
    )


def _sessions_link(f: Filters, first: dt.date, last: dt.date) -> str:
    """The sessions started in these days (and from this source): where a bar leads."""
    params = {"started_after": first.isoformat(), "started_before": last.isoformat()}
    if f.source:
        params["source"] = f.source
    return reverse("sessions:list") + "?" + urlencode(params)


def _group_rows(report):
    for name, groups in (
        ("tool", report.by_tool),
        ("model", report.by_model),
        ("source", report.by_source),
    ):
        for g in groups:
            yield name, g


@require_GET
def index(request):
    f = _filters(request)
    with_budget = settings.HERMES_INSIGHTS_TIMEOUT
    report = report_for(f, budget=with_budget)
    fmt = request.GET.get("_export", "")
    if fmt == "json":
        return JsonResponse(_as_json(report))
    if fmt == "csv":
        return stream_export(
            fmt="csv",
            columns=CSV_COLUMNS,
            chunks=[[_csv_row(name, g) for name, g in _group_rows(report)]],
            filename=f"failures-{f.days}d.csv",
        )
    for name, g in _group_rows(report):
        g.href = _link(f, **{name: "" if g.key == "(unnamed)" else g.key})
    return render(
        request,
        "live_app/failure_list.html",
        {
            "report": report,
            "filters": f,
            "chart": _chart(report),
            "day_rows": [
                (
                    day,
                    _sessions_link(f, dt.date.fromisoformat(day), dt.date.fromisoformat(day)),
                    [counts.get(k, 0) for k in KIND_LABELS],
                )
                for day, counts in report.by_day
            ],
            "kinds": [(k, label, report.kinds.get(k, 0)) for k, label in KIND_LABELS.items()],
            "clear_link": _link(Filters(days=f.days)),
            "shape": store.shape(),
        },
    )


def _csv_row(name, g) -> dict:
    rate = g.per_100_calls
    row = {
        "group": name,
        "key": g.key,
        "failures": g.failures,
        "tool_calls": g.tool_calls,
        "tool_errors_per_100_calls": round(rate, 2) if rate is not None else None,
        "sessions": g.sessions,
    }
    row.update({k: g.by_kind.get(k, 0) for k in KIND_LABELS})
    return row


def _as_json(report) -> dict:
    return {
        "window": {"days": report.filters.days, "since": report.since, "until": report.now},
        "filters": {
            "source": report.filters.source,
            "model": report.filters.model,
            "tool": report.filters.tool,
        },
        "failures": report.failures,
        "by_kind": {k: report.kinds.get(k, 0) for k in KIND_LABELS},
        "tool_calls": report.tool_calls,
        "tool_errors_per_100_calls": report.tool_error_rate,
        "sessions": report.sessions,
        "failed_sessions": report.failed_sessions,
        "groups": [_csv_row(name, g) for name, g in _group_rows(report)],
        "by_day": [{"day": d, **dict(k)} for d, k in report.by_day],
        "examples": report.examples,
        "recorded": report.recorded,
    }
