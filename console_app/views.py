"""The SQL console (staff only; the role middleware enforces it for every ``sql:*`` URL).

``/sql/?sql=…&name=value`` and ``/sql/?query=<slug>`` fill in the form, so a query is a link
people can share, but a GET never runs anything: only a POST (CSRF-protected) runs, saves or
deletes.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import BadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.utils.translation import gettext
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from hermes_explorer import dialect
from hermes_explorer.params import truthy

from . import canned, services
from .forms import ConsoleForm, SaveQueryForm
from .models import SavedQuery
from .readonly import ConsoleError

DEFAULT_SQL = "SELECT id, title, source, datetime(started_at, 'unixepoch') AS started\nFROM sessions\nORDER BY started_at DESC\nLIMIT 20"
DEFAULT_POSTGRES_SQL = "SELECT id, title, source, to_timestamp(started_at) AS started\nFROM sessions\nORDER BY started_at DESC NULLS LAST\nLIMIT 20"


@require_http_methods(["GET", "HEAD", "POST"])
def console(request):
    """The form (filled in by a GET), the rows of a POST, and the named queries on the side."""
    data = request.POST if request.method == "POST" else request.GET
    slug = data.get("query", "").strip()
    named = canned.named_query(slug) if slug else None
    if slug and named is None:
        messages.warning(
            request, gettext("There is no query called “%(slug)s”.") % {"slug": slug[:80]}
        )
    # ``sql`` first, else the named query's.
    sql = data.get("sql", named.sql if named else "")
    if sql:
        data = data.copy()
        data["sql"] = sql
    form = ConsoleForm(
        data if sql else None,  # no SQL: an empty form, not an invalid one
        sql=sql,
        initial={"sql": sql or dialect.pick(DEFAULT_SQL, DEFAULT_POSTGRES_SQL)},
    )
    missing = form.missing_parameters() if sql else []
    if request.method != "POST" or not sql or missing:
        return _page(request, form, named, sql=sql, missing=missing)
    fmt = data.get("_export", "").strip().lower() or None
    if fmt is not None and fmt not in services.EXPORT_FORMATS:
        raise BadRequest("Unknown export format: use csv, json or jsonl.")
    if not form.is_valid():
        return _page(request, form, named, sql=sql, status=400)
    sql, params = form.cleaned_data["sql"], form.parameters()
    if fmt is None:
        outcome = services.run_for_page(request, sql, params)
    else:
        try:
            slug = named.slug if named else ""
            options = {"spreadsheet": truthy(data.get("_bom")), "raw": truthy(data.get("_raw"))}
            return services.export_response(request, sql, params, fmt=fmt, slug=slug, **options)
        except ConsoleError as exc:
            outcome = services.Outcome.failed(exc)
    return _page(request, form, named, sql=sql, outcome=outcome, status=outcome.status)


@require_safe
def saved(request):
    """Every named query: the ones that ship with the console and the ones staff saved."""
    return render(request, "console_app/query_list.html", canned.all_named_queries())


@require_POST
def save(request):
    form = SaveQueryForm(request.POST)
    if not form.is_valid():
        sql = request.POST.get("sql", "")
        console_form = ConsoleForm(sql=sql, initial={"sql": sql})
        return _page(request, console_form, None, sql=sql, save_form=form, status=400)
    form.instance.created_by = request.user
    query = form.save()
    messages.success(request, gettext("Saved “%(name)s”.") % {"name": query.name})
    return redirect(reverse("sql:console") + "?" + urlencode({"query": query.slug}))


@require_POST
def delete(request, slug: str):
    """Staff delete the queries they saved (superusers any)."""
    query = get_object_or_404(SavedQuery, slug=slug)
    if not query.manageable_by(request.user):
        messages.error(
            request,
            gettext("“%(name)s” was saved by someone else: only they can delete it.")
            % {"name": query.name},
        )
    else:
        query.delete()
        messages.success(request, gettext("Deleted “%(name)s”.") % {"name": query.name})
    return redirect("sql:saved")


def _page(request, form, named, *, sql, missing=(), outcome=None, save_form=None, status=200):
    # The fields that run this statement again (download buttons, the shareable link).
    replay = []
    if outcome is not None and outcome.result is not None:
        replay = [("sql", form.cleaned_data["sql"]), *form.parameters().items()]
        if named is not None:
            replay.append(("query", named.slug))
    if save_form is None and sql:
        save_form = SaveQueryForm(initial={"sql": sql})
    return render(
        request,
        "console_app/console_detail.html",
        {
            "form": form,
            "named": named,
            "missing": list(missing),
            "result": outcome.result if outcome else None,
            "rows": outcome.result.rows if outcome and outcome.result else [],
            "error": outcome.error if outcome else None,
            "replay": replay,
            "share_link": reverse("sql:console") + "?" + urlencode(replay) if replay else "",
            "export_formats": services.EXPORT_FORMATS if outcome and outcome.result else (),
            "prefilled": request.method != "POST" and bool(sql) and not missing,
            **canned.all_named_queries(),
            "save_form": save_form,
            "timeout": settings.HERMES_SQL_TIMEOUT,
            "row_cap": settings.HERMES_SQL_MAX_ROWS,
            "size_cap": settings.HERMES_SQL_MAX_BYTES,
        },
        status=status,
    )
