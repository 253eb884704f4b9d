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
from django.urls import get_script_prefix
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

from accounts_app.roles import can_export, can_see_content
from hermes_explorer import store, stores
from hermes_explorer.hermes_db.deadline import query_budget
from sessions_app import formatting
from sessions_app.facets import distinct_values
from sessions_app.merged_list import chosen_stores

from . import explorer, export, presenters, reports
from . import merged as merged_insights
from .drilldown import Drill, linked_rows
from .forms import InsightsForm
from .profiles import merged_extras, merged_sources, profiles_chart, with_profiles

TEMPLATE = "insights_app/report_detail.html"
BODY_TEMPLATE = "insights_app/_report_body.html"


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
    datalist = presenters.model_names
    with query_budget(settings.HERMES_INSIGHTS_TIMEOUT):
        if parts is None:
            report, previous = explorer.report_and_previous(
                window,
                activity_days=basis == "activity",
                collect_seconds=settings.HERMES_INSIGHTS_COLLECT_SECONDS,
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
    messages_allowed = can_see_content(request.user)
    served = None if parts is None else [s for s, _r, _p in found]
    if not fmt:
        return _page(
            request,
            form,
            shape,
            report,
            previous,
            drill,
            basis,
            messages_allowed,
            notes=notes,
            served=served,
            profile_rows=profile_rows,
            datalist=datalist,
        )
    linked, extra = _linked_and_extra(report, previous, drill, messages_allowed, served)
    if fmt == "json":
        response = export.json_response(report, linked, drill.all_sessions(), extra)
        if profile_rows is not None:
            response = with_profiles(response, profile_rows)
        return response
    return export.csv_response(report, table, basis, extra)


def _linked_and_extra(report, previous, drill, messages_allowed, served):
    """The report's drill-down links and the explorer's extras; over several profiles
    (``served``), notable sessions link into their own profile and the extras sum theirs."""
    linked = linked_rows(report, drill, messages_allowed=messages_allowed)
    if served is None:
        return linked, explorer.extras_for(report, previous, drill)
    merged_insights.link_top_sessions(linked)
    return linked, merged_extras(report, previous, drill, served)


def _signature(served) -> tuple | None:
    """What the report part depends on: the file read, or every profile's file (None when
    one cannot be read: nothing is kept then)."""
    if served is None:
        return store.file_signature()
    signatures = []
    for one in served:
        with stores.using(one):
            signature = store.file_signature()
        if signature is None:
            return None
        signatures.append((one.name, signature))
    return tuple(signatures)


def _page(
    request,
    form,
    shape,
    report,
    previous,
    drill,
    basis,
    messages_allowed,
    *,
    notes=(),
    served=None,
    profile_rows=None,
    datalist=presenters.model_names,
):
    """The page.  Its report part, charts and tables with hundreds of links, is rendered once
    per report and kept with it (same files, same report, same role and query): a repeat view
    renders only the frame around it."""
    context = {
        "report": report,
        "notes": [*notes, *presenters.page_notes(report, basis)],
        "models_datalist": datalist(),
        "reload_seconds": (
            presenters.BUILD_RELOAD_SECONDS if report.summaries_build is not None else None
        ),
        "form": form,
        "shape": shape,
        "csv_tables": export.CSV_TABLES,
    }
    if not report.empty:
        signature = _signature(served)
        variant = (
            "page-body",
            formatting.language(),
            report.generated_at,
            basis,
            messages_allowed,
            can_export(request.user),
            request.GET.urlencode(),
            # The links name the profile the page is under (``/p/<profile>/``) or none.
            get_script_prefix(),
        )
        key = reports.cache_key(signature, report.window, variant) if signature else None
        body = reports.cached_fragment(key) if key else None
        if body is None:
            linked, extra = _linked_and_extra(report, previous, drill, messages_allowed, served)
            body_context = {**presenters.page(report, drill, linked, basis), **context}
            body_context["extra"] = extra
            body_context["compared"] = [
                (k, label, extra.changes[k]) for k, label in explorer.COMPARED if k in extra.changes
            ]
            body_context["explorer_charts"] = presenters.explorer_charts(report, extra)
            if profile_rows is not None:
                body_context["profile_rows"] = profile_rows
                body_context["profile_chart"] = profiles_chart(profile_rows)
            body = render_to_string(BODY_TEMPLATE, body_context, request)
            if key and report.messages_complete:
                reports.keep_fragment(key, body)
        context["body"] = mark_safe(body)  # noqa: S308 - rendered by our own template above
    return render(request, TEMPLATE, context)
