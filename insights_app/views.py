"""``/insights/``: Hermes's insights report as a page, as JSON, and as CSV tables."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.http import JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import get_script_prefix
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

from accounts_app.roles import can_export, can_see_content
from hermes_explorer import store
from hermes_explorer.hermes_db.deadline import query_budget
from profiles_app.links import store_reverse
from sessions_app import formatting
from sessions_app.facets import distinct_values
from sessions_app.merged_list import chosen_stores

from . import explorer, export, presenters, reports
from . import merged as merged_insights
from .drilldown import Drill, linked_rows
from .forms import InsightsForm
from .stats import Report

TEMPLATE = "insights_app/report_detail.html"
BODY_TEMPLATE = "insights_app/_report_body.html"


@dataclass
class Found:
    """The report of the page's window over ``served``, the previous period's overview, and
    what the page links and groups them by."""

    report: Report
    previous: Report | None
    drill: Drill
    basis: str
    served: list | None = None
    profile_rows: list | None = None


@require_GET
def index(request):
    fmt, table = request.GET.get("_export", ""), request.GET.get("table", "")
    refused = export.refusal(fmt, table)
    if refused is not None:
        return refused
    shape = store.shape()
    notes: list[str] = []
    parts = chosen_stores(request, notes)
    sources = distinct_values("source") if parts is None else merged_insights.merged_sources(parts)
    form = InsightsForm(
        request.GET or None, sources=sources, activity_days=shape.has_table("session_daily_usage")
    )
    if form.is_bound and not form.is_valid():
        if fmt:
            return JsonResponse({"errors": form.errors.get_json_data()}, status=400)
        context = {"form": form, "shape": shape, "report": None}
        return render(request, TEMPLATE, {**context, "models_datalist": presenters.model_names()})
    with query_budget(settings.HERMES_INSIGHTS_TIMEOUT):
        found = _found(request, form, parts, notes)
    if found is None:
        return render(
            request, TEMPLATE, {"form": form, "shape": shape, "report": None, "notes": notes}
        )
    if not fmt:
        return _page(request, form, shape, found, notes)
    return _export(request, fmt, table, found)


def _found(request, form, parts, notes) -> Found | None:
    """The report(s) of the form's window: of the current store, or summed over ``parts``."""
    window, basis = form.window(), form.chart_basis()
    options = {
        "activity_days": basis == "activity",
        "collect_seconds": settings.HERMES_INSIGHTS_COLLECT_SECONDS,
    }
    if parts is None:
        report, previous = explorer.report_and_previous(window, **options)
        return Found(report, previous, Drill(window=window, now=report.now), basis)
    found = merged_insights.each(
        parts, lambda _store: explorer.report_and_previous(window, **options), notes
    )
    if not found:
        return None
    reports_found = [(s, r) for s, (r, _p) in found]
    report = merged_insights.combine(reports_found)
    earlier = [(s, p) for s, (_r, p) in found if p is not None]
    query = {k: v for k, v in request.GET.items() if k not in ("_export", "table")}
    return Found(
        report,
        merged_insights.combine(earlier) if earlier else None,
        Drill(window=window, now=report.now),
        basis,
        served=[s for s, _ in found],
        profile_rows=merged_insights.breakdown(reports_found, query),
    )


def _export(request, fmt: str, table: str, found: Found):
    allowed = can_see_content(request.user)
    linked, extra = _linked_and_extra(found, allowed)
    if fmt == "json":
        sessions_url = found.drill.all_sessions()
        return export.json_response(found.report, linked, sessions_url, extra, found.profile_rows)
    return export.csv_response(found.report, table, found.basis, extra)


def _linked_and_extra(found: Found, messages_allowed: bool):
    """The report's drill-down links and the explorer's extras (summed over profiles)."""
    report, previous, drill = found.report, found.previous, found.drill
    linked = linked_rows(report, drill, messages_allowed=messages_allowed)
    if found.served is None:
        return linked, explorer.extras_for(report, previous, drill)
    for row in linked["top_sessions"]:  # each into the profile it comes from
        row["url"] = store_reverse("sessions:detail", [row["session_id"]], row.pop("store"))
    return linked, merged_insights.merged_extras(report, previous, drill, found.served)


def _page(request, form, shape, found: Found, notes):
    """The page; its report part (hundreds of links) is rendered once per report, role and
    query, so a repeat view renders only the frame."""
    report = found.report
    context = {
        "report": report,
        "notes": [*notes, *presenters.page_notes(report, found.basis)],
        "models_datalist": presenters.model_names(),
        "reload_seconds": (
            presenters.BUILD_RELOAD_SECONDS if report.summaries_build is not None else None
        ),
        "form": form,
        "shape": shape,
        "csv_tables": export.CSV_TABLES,
    }
    if not report.empty:
        context["body"] = mark_safe(_body(request, found, context))  # noqa: S308 - our template
    return render(request, TEMPLATE, context)


def _body(request, found: Found, context: dict) -> str:
    """The report part of the page, kept with its report (the key names the stores, the
    report's time, the language, the role and the query)."""
    report, allowed = found.report, can_see_content(request.user)
    stores_read = store.name() if found.served is None else tuple(s.name for s in found.served)
    variant = (
        "page-body",
        stores_read,
        formatting.language(),
        report.generated_at,
        found.basis,
        allowed,
        can_export(request.user),
        request.GET.urlencode(),
        get_script_prefix(),  # the links name the profile the page is under, or none
    )
    key = reports.cache_key((), report.window, variant)
    body = cache.get(key)
    if body is None:
        linked, extra = _linked_and_extra(found, allowed)
        body_context = {**presenters.page(report, found.drill, linked, found.basis), **context}
        body_context["extra"] = extra
        body_context["compared"] = [
            (k, label, extra.changes[k]) for k, label in explorer.COMPARED if k in extra.changes
        ]
        body_context["explorer_charts"] = presenters.explorer_charts(report, extra, found.drill)
        if found.profile_rows is not None:
            body_context["profile_rows"] = found.profile_rows
            body_context["profile_chart"] = merged_insights.profiles_chart(found.profile_rows)
        body = render_to_string(BODY_TEMPLATE, body_context, request)
        if report.messages_complete:
            cache.set(key, body, reports.REPORT_TTL)
    return body
