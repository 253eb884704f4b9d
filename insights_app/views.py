"""``/insights/``: Hermes's insights report as a page, as JSON, and as CSV tables.

The view parses the window, asks :mod:`insights_app.reports` for the (cached) report, and
renders it through :mod:`insights_app.presenters` with the links of
:mod:`insights_app.drilldown`; ``_export=json`` gives Hermes's report dictionary,
``_export=csv&table=…`` one of its tables (:mod:`insights_app.export`).
"""

from __future__ import annotations

from django.conf import settings
from django.http import JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

from accounts_app.roles import can_export, can_see_content
from hermes_explorer import store
from hermes_explorer.hermes_db.deadline import query_budget
from sessions_app.facets import distinct_values

from . import explorer, export, presenters, reports
from .drilldown import Drill, linked_rows
from .forms import InsightsForm

TEMPLATE = "insights_app/report_detail.html"
BODY_TEMPLATE = "insights_app/_report_body.html"


@require_GET
def index(request):
    fmt, table = request.GET.get("_export", ""), request.GET.get("table", "")
    refused = export.refusal(fmt, table)
    if refused is not None:
        return refused
    shape = store.shape()
    form = InsightsForm(
        request.GET or None, sources=distinct_values("source"), activity_days=shape.has_daily_usage
    )
    if form.is_bound and not form.is_valid():
        if fmt:
            return JsonResponse({"errors": form.errors.get_json_data()}, status=400)
        context = {"report": None, "models_datalist": presenters.model_names()}
        return render(request, TEMPLATE, {"form": form, "shape": shape, **context})
    window, basis = form.window(), form.chart_basis()
    with query_budget(settings.HERMES_INSIGHTS_TIMEOUT):
        report = reports.report_for(
            window,
            activity_days=basis == "activity",
            collect_seconds=settings.HERMES_INSIGHTS_COLLECT_SECONDS,
        )
        before = explorer.previous_window(window, report.now)
        previous = (
            explorer.previous_report(before, report.now)
            if before is not None and not report.empty
            else None
        )
    drill = Drill(window=window, now=report.now)
    messages_allowed = can_see_content(request.user)
    if not fmt:
        return _page(request, form, shape, report, previous, drill, basis, messages_allowed)
    linked = linked_rows(report, drill, messages_allowed=messages_allowed)
    extra = explorer.extras_for(report, previous, drill)
    if fmt == "json":
        return export.json_response(report, linked, drill.all_sessions(), extra)
    return export.csv_response(report, table, basis, extra)


def _page(request, form, shape, report, previous, drill, basis, messages_allowed):
    """The page.  Its report part, charts and tables with hundreds of links, is rendered once
    per report and kept with it (same file, same report, same role and query): a repeat view
    renders only the frame around it."""
    context = {
        "report": report,
        "notes": presenters.page_notes(report, basis),
        "models_datalist": presenters.model_names(),
        "form": form,
        "shape": shape,
        "csv_tables": export.CSV_TABLES,
    }
    if not report.empty:
        signature = store.file_signature()
        variant = (
            "page-body",
            report.generated_at,
            basis,
            messages_allowed,
            can_export(request.user),
            request.GET.urlencode(),
        )
        key = reports.cache_key(signature, report.window, variant) if signature else None
        body = reports.cached_fragment(key) if key else None
        if body is None:
            linked = linked_rows(report, drill, messages_allowed=messages_allowed)
            extra = explorer.extras_for(report, previous, drill)
            body_context = {**presenters.page(report, drill, linked, basis), **context}
            body_context["extra"] = extra
            body_context["compared"] = [
                (k, label, extra.changes[k]) for k, label in explorer.COMPARED if k in extra.changes
            ]
            body_context["explorer_charts"] = presenters.explorer_charts(report, extra)
            body = render_to_string(BODY_TEMPLATE, body_context, request)
            if key and report.messages_complete:
                reports.keep_fragment(key, body)
        context["body"] = mark_safe(body)  # noqa: S308 - rendered by our own template above
    return render(request, TEMPLATE, context)
