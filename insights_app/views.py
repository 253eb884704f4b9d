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
from django.views.decorators.http import require_GET

from accounts_app.roles import can_see_content
from hermes_explorer import store
from hermes_explorer.hermes_db.deadline import query_budget
from sessions_app.facets import distinct_values

from . import explorer, export, presenters, reports
from .drilldown import Drill, linked_rows
from .forms import InsightsForm

TEMPLATE = "insights_app/report_detail.html"


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
    linked = linked_rows(report, drill, messages_allowed=can_see_content(request.user))
    extra = explorer.extras_for(report, previous, drill)
    if fmt == "json":
        return export.json_response(report, linked, drill.all_sessions(), extra)
    if fmt == "csv":
        return export.csv_response(report, table, basis, extra)
    context = presenters.page(report, drill, linked, basis)
    context["extra"] = extra
    context["compared"] = [
        (key, label, extra.changes[key]) for key, label in explorer.COMPARED if key in extra.changes
    ]
    context["explorer_charts"] = presenters.explorer_charts(report, extra)
    return render(
        request,
        TEMPLATE,
        {"form": form, "shape": shape, "csv_tables": export.CSV_TABLES, **context},
    )
