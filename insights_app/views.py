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
from sessions_app.merged_list import chosen_stores

from . import explorer, export, presenters, reports
from . import merged as merged_insights
from .drilldown import Drill, linked_rows
from .forms import InsightsForm
from .profiles import merged_extras, merged_sources, profiles_chart, with_profiles

TEMPLATE = "insights_app/report_detail.html"


@require_GET
def index(request):
    fmt, table = request.GET.get("_export", ""), request.GET.get("table", "")
    refused = export.refusal(fmt, table)
    if refused is not None:
        return refused
    shape = store.shape()
    notes: list[str] = []
    parts = chosen_stores(request, notes)
    sources = distinct_values("source") if parts is None else merged_sources(parts)
    form = InsightsForm(request.GET or None, sources=sources, activity_days=shape.has_daily_usage)
    if form.is_bound and not form.is_valid():
        if fmt:
            return JsonResponse({"errors": form.errors.get_json_data()}, status=400)
        context = {"report": None, "models_datalist": presenters.model_names()}
        return render(request, TEMPLATE, {"form": form, "shape": shape, **context})
    window, basis = form.window(), form.chart_basis()
    profile_rows = None
    with query_budget(settings.HERMES_INSIGHTS_TIMEOUT):
        if parts is None:
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
        else:
            found = merged_insights.reports_of(
                parts,
                window,
                activity_days=basis == "activity",
                collect_seconds=settings.HERMES_INSIGHTS_COLLECT_SECONDS,
                notes=notes,
            )
            if not found:
                context = {"report": None, "notes": notes}
                return render(request, TEMPLATE, {"form": form, "shape": shape, **context})
            report = merged_insights.combine([(s, r) for s, r, _p in found])
            earlier = [(s, p) for s, _r, p in found if p is not None]
            previous = merged_insights.combine(earlier) if earlier else None
            query = {k: v for k, v in request.GET.items() if k not in ("_export", "table")}
            profile_rows = merged_insights.breakdown([(s, r) for s, r, _p in found], query)
    drill = Drill(window=window, now=report.now)
    linked = linked_rows(report, drill, messages_allowed=can_see_content(request.user))
    if parts is None:
        extra = explorer.extras_for(report, previous, drill)
    else:
        merged_insights.link_top_sessions(linked)
        extra = merged_extras(report, previous, drill, [s for s, _r, _p in found])
    if fmt == "json":
        response = export.json_response(report, linked, drill.all_sessions(), extra)
        if profile_rows is not None:
            response = with_profiles(response, profile_rows)
        return response
    if fmt == "csv":
        return export.csv_response(report, table, basis, extra)
    context = presenters.page(report, drill, linked, basis)
    context["extra"] = extra
    context["compared"] = [
        (key, label, extra.changes[key]) for key, label in explorer.COMPARED if key in extra.changes
    ]
    context["explorer_charts"] = presenters.explorer_charts(report, extra)
    if profile_rows is not None:
        context["profile_rows"] = profile_rows
        context["profile_chart"] = profiles_chart(profile_rows)
    context["notes"] = notes + list(context.get("notes") or [])
    return render(
        request,
        TEMPLATE,
        {"form": form, "shape": shape, "csv_tables": export.CSV_TABLES, **context},
    )
