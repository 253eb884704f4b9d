"""``/failures/``: failures by window, grouped by tool, model, source and day, as a page, JSON
and CSV, every count a link to its rows (``&rows=1`` exports one row per failure).  The page
never shows message content, so viewers see it as everyone does."""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
from dataclasses import replace

from django.conf import settings
from django.http import JsonResponse
from django.shortcuts import render
from django.urls import get_script_prefix, reverse
from django.utils.http import urlencode
from django.utils.translation import gettext, pgettext
from django.views.decorators.http import require_GET

from hermes_explorer import store
from hermes_explorer import stores as registry
from insights_app import charts
from sessions_app.exports import export_filename, requested_format, stream_export
from sessions_app.formatting import date_text
from sessions_app.links import TranscriptLinks
from sessions_app.merged_list import chosen_stores, requested_profiles
from sessions_app.timefmt import iso, local_date

from . import across
from .failures import KIND_LABELS, LIST_LIMIT, Filters
from .forms import FailuresForm

CSV_COLUMNS = ["group", "key", "failures", "tool_calls", "tool_errors_per_100_calls", "sessions"]
CSV_COLUMNS += sorted(KIND_LABELS)
# ``?rows=1``: one row per failure (metadata only, never a message's content).
ROW_COLUMNS = [
    "kind",
    "when",
    "session_id",
    "title",
    "message_id",
    "tool",
    "model",
    "source",
    "end_reason",
]


def _link(f: Filters, **changes) -> str:
    """``/failures/`` with these filters: where a count leads (the rows behind it)."""
    params = {**dataclasses.asdict(f), **changes}
    query = urlencode({k: v for k, v in params.items() if v}, doseq=True)
    return _base(get_script_prefix()) + "?" + query


@functools.lru_cache(maxsize=64)
def _base(prefix: str) -> str:
    """``/failures/`` under the script prefix (``/p/<profile>/``): a page links it hundreds of
    times (every count), and ``reverse`` costs a tenth of a millisecond each."""
    return reverse("failures:index")


def _chart(report):
    rows = [
        (dt.date.fromisoformat(day), {"failures": sum(kinds.values())})
        for day, kinds in report.by_day
    ]
    first, last = local_date(report.since), local_date(report.now)
    _size, buckets = charts.buckets(rows, first, last)
    columns = [
        charts.Column(
            b.label,
            b.tick,
            b.values.get("failures", 0),
            _link(report.filters, start=b.first, end=b.last),
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


def _group_rows(report):
    for name in ("tool", "model", "source"):
        for g in getattr(report, f"by_{name}"):
            yield name, g


@require_GET
def index(request):
    notes: list[str] = []
    parts = chosen_stores(request, notes) or [None]
    form = FailuresForm(request.GET)
    valid = form.is_valid()
    f = replace(form.filters(), profile=tuple(requested_profiles(request)))
    fmt = requested_format(request)
    if fmt and not valid:
        return JsonResponse({"errors": form.errors.get_json_data()}, status=400)
    budget = settings.HERMES_INSIGHTS_TIMEOUT
    report = across.report(parts, f.counted, budget=budget, notes=notes)
    if report is None:
        context = {"form": form, "notes": notes, "filters": f}
        return render(request, "live_app/failure_list.html", context)
    if fmt and request.GET.get("rows"):
        return stream_export(
            fmt=fmt,
            columns=(["profile"] if registry.multi() else []) + ROW_COLUMNS,
            chunks=(
                [_export_row(row) for row in chunk]
                for chunk in across.every_row(parts, f, budget=budget)
                if chunk
            ),
            filename=export_filename("failures", [f"{f.days}d", "rows"], fmt),
        )
    failing, more_failing = across.page(
        parts, "messages", f, form.position("mpos"), LIST_LIMIT, budget=budget, notes=notes
    )
    failed, more_failed = across.page(
        parts, "sessions", f, form.position("spos"), LIST_LIMIT, budget=budget, notes=notes
    )
    if fmt == "json":
        return JsonResponse(_as_json(report, (failing, failed)))
    if fmt:
        return stream_export(
            fmt=fmt,
            columns=CSV_COLUMNS,
            chunks=[[_csv_row(name, g) for name, g in _group_rows(report)]],
            filename=export_filename("failures", [f"{f.days}d"], fmt),
        )
    for name, g in _group_rows(report):
        value = "" if g.key == "(unnamed)" else g.key
        g.href = _link(f, **{name: value})
        g.kind_hrefs = {k: _link(f, **{name: value, "kind": k}) for k in g.by_kind}
    here = {k: v for k, v in request.GET.lists() if k not in ("mpos", "spos")}
    return render(
        request,
        "live_app/failure_list.html",
        {
            "form": form,
            "notes": notes,
            "report": report,
            "filters": f,
            "chart": _chart(report),
            "day_rows": [_day_row(f, day, counts) for day, counts in report.by_day],
            "kinds": [
                (k, label, report.kinds.get(k, 0), _link(f, kind=k))
                for k, label in KIND_LABELS.items()
            ],
            "failing": _linked(failing),
            "failed_sessions": _linked(failed),
            "older_failing": _older(here, "mpos", more_failing, request.GET.get("spos")),
            "older_failed": _older(here, "spos", more_failed, request.GET.get("mpos")),
            "paged": bool(request.GET.get("mpos") or request.GET.get("spos")),
            "first_page": "?" + urlencode(here, doseq=True),
            "multi": parts != [None],
            "list_limit": LIST_LIMIT,
            "narrowed": bool(f.kind or f.start or f.end),
            "kind_label": KIND_LABELS.get(f.kind, ""),
            "unnarrowed_link": _link(f.counted, profile=f.profile),
            "clear_link": _link(Filters(days=f.days, profile=f.profile)),
            "shape": store.shape(),
        },
    )


def _older(here: dict, name: str, token: str | None, other: str | None) -> str | None:
    """The link to a list's next (older) page; the other list stays where it is."""
    if token is None:
        return None
    kept = {"mpos" if name == "spos" else "spos": other} if other else {}
    return "?" + urlencode({**here, **kept, name: token}, doseq=True)


def _linked(rows: list[dict]) -> list[dict]:
    """The rows with their session's and message's links (each route reversed once)."""
    links = TranscriptLinks()
    return [
        {
            **row,
            "href": links.session(row["session_id"], row.get("store")),
            "message_href": row["message_id"] is not None
            and links.message(row["session_id"], row["message_id"], row.get("store")),
        }
        for row in rows
    ]


def _day_row(f: Filters, day: str, counts) -> tuple:
    """A day of the table: its link and, per kind, its count and link."""
    date = dt.date.fromisoformat(day)
    link = _link(f, start=date, end=date, kind="")
    cells = [(counts.get(k, 0), _link(f, start=date, end=date, kind=k)) for k in KIND_LABELS]
    return day, link, cells


def _export_row(row: dict) -> dict:
    out = {k: row[k] for k in ROW_COLUMNS if k != "when"}
    return {"profile": row.get("profile", ""), **out, "when": iso(row["timestamp"])}


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


def _as_json(report, listing) -> dict:
    return {
        "window": {"days": report.filters.days, "since": report.since, "until": report.now},
        "filters": {k: getattr(report.filters, k) for k in ("source", "model", "tool")},
        "failures": report.failures,
        "by_kind": {k: report.kinds.get(k, 0) for k in KIND_LABELS},
        "tool_calls": report.tool_calls,
        "tool_errors_per_100_calls": report.tool_error_rate,
        "sessions": report.sessions,
        "failed_sessions": report.failed_sessions,
        "groups": [_csv_row(name, g) for name, g in _group_rows(report)],
        "by_day": [{"day": d, **dict(k)} for d, k in report.by_day],
        # The newest of each sort (the page's list); ``&rows=1`` has them all.
        "list": {
            "failing_messages": [_export_row(row) for row in listing[0]],
            "failed_sessions": [_export_row(row) for row in listing[1]],
        },
        "recorded": report.recorded,
    }
