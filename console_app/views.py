"""The SQL console (staff only; the role middleware enforces it for every ``sql:*`` URL).

``/sql/?sql=…&name=value`` runs one read-only statement and shows the rows;
``/sql/?query=<slug>`` opens a canned or saved query; ``&_export=csv|json|jsonl`` downloads
the result.  GET, like Datasette's ``/state?sql=`` it replaces, so a result is a link people
can share; saving and deleting are POSTs.  Running, auditing and exporting live in
``services.py``; these views parse the request and render.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import BadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_POST

from . import canned, services
from .forms import ConsoleForm, SaveQueryForm
from .models import SavedQuery
from .readonly import ConsoleError

DEFAULT_SQL = "SELECT id, title, source, datetime(started_at, 'unixepoch') AS started\nFROM sessions\nORDER BY started_at DESC\nLIMIT 20"


@require_GET
def console(request):
    """The console: SQL, its parameters, the rows, and the named queries on the side."""
    named, sql = _named_query_and_sql(request, request.GET)
    form = ConsoleForm(_with_sql(request.GET, sql), sql=sql, initial={"sql": sql or DEFAULT_SQL})
    fmt = _export_format(request.GET)
    missing = form.missing_parameters() if sql else []
    if not sql or missing:
        return _page(request, form, named, sql=sql, missing=missing)
    if not form.is_valid():
        return _page(request, form, named, sql=sql, status=400)
    sql, params = form.cleaned_data["sql"], form.parameters()
    if fmt is not None:
        try:
            return services.export_response(
                request, sql, params, fmt=fmt, slug=named.slug if named else ""
            )
        except ConsoleError as exc:
            outcome = services.Outcome(error=str(exc), status=services.error_status(exc))
    else:
        outcome = services.run_for_page(request, sql, params)
    return _page(request, form, named, sql=sql, outcome=outcome, status=outcome.status)


@require_GET
def saved(request):
    """Every named query: the ones that ship with the console and the ones staff saved."""
    canned_queries, saved_queries = canned.all_named_queries()
    return render(
        request,
        "console_app/query_list.html",
        {"canned_queries": canned_queries, "saved_queries": saved_queries},
    )


@require_POST
def save(request):
    form = SaveQueryForm(request.POST)
    if not form.is_valid():
        sql = request.POST.get("sql", "")
        console_form = ConsoleForm(sql=sql, initial={"sql": sql})
        return _page(request, console_form, None, sql=sql, save_form=form, status=400)
    query = form.save(commit=False)
    query.created_by = request.user
    query.save()
    messages.success(request, f"Saved “{query.name}”.")
    return redirect(reverse("sql:console") + "?" + urlencode({"query": query.slug}))


@require_POST
def delete(request, slug: str):
    """Staff delete the queries they saved (superusers any)."""
    query = get_object_or_404(SavedQuery, slug=slug)
    if not query.manageable_by(request.user):
        messages.error(
            request, f"“{query.name}” was saved by someone else: only they can delete it."
        )
    else:
        query.delete()
        messages.success(request, f"Deleted “{query.name}”.")
    return redirect("sql:saved")


# Request parsing and rendering -----------------------------------------------------------------
def _named_query_and_sql(request, data):
    """The canned or saved query named by ``?query=`` (a note when unknown), and the SQL to
    show: the request's own ``sql`` first, else the named query's."""
    named = None
    slug = data.get("query", "").strip()
    if slug:
        named = canned.named_query(slug)
        if named is None:
            messages.warning(request, f"There is no query called “{slug[:80]}”.")
    sql = data.get("sql")
    if sql is None:
        sql = named.sql if named else ""
    return named, sql


def _with_sql(data, sql: str):
    """The form's data (None when there is no SQL: an empty form, not an invalid one)."""
    if not sql:
        return None
    data = data.copy()
    data["sql"] = sql
    return data


def _export_format(data) -> str | None:
    fmt = data.get("_export", "").strip().lower() or None
    if fmt is not None and fmt not in services.EXPORT_FORMATS:
        raise BadRequest("Unknown export format: use csv, json or jsonl.")
    return fmt


def _export_links(request, outcome) -> dict[str, str]:
    if outcome is None or outcome.result is None or not outcome.result.columns:
        return {}
    links = {}
    base = request.GET.copy()
    for fmt in services.EXPORT_FORMATS:
        base["_export"] = fmt
        links[fmt] = "?" + base.urlencode()
    return links


def _page(request, form, named, *, sql, missing=(), outcome=None, save_form=None, status=200):
    canned_queries, saved_queries = canned.all_named_queries()
    if save_form is None and sql:
        save_form = SaveQueryForm(initial={"sql": sql})
    return render(
        request,
        "console_app/console_detail.html",
        {
            "form": form,
            "named": named,
            "sql": sql,
            "missing": list(missing),
            "result": outcome.result if outcome else None,
            "rows": outcome.rows if outcome else [],
            "error": outcome.error if outcome else None,
            "export_links": _export_links(request, outcome),
            "canned_queries": canned_queries,
            "saved_queries": saved_queries,
            "save_form": save_form,
            "timeout": settings.HERMES_SQL_TIMEOUT,
            "row_cap": settings.HERMES_SQL_MAX_ROWS,
        },
        status=status,
    )
