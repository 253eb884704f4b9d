"""The SQL console (staff only; the role middleware enforces it for every ``sql:*`` URL).

``/sql/?sql=…&name=value`` runs one read-only statement (see ``readonly.py``) and shows the
rows; ``/sql/?query=<slug>`` opens a canned or saved query; ``&_export=csv|json|jsonl``
downloads the result.  GET, like Datasette's ``/state?sql=`` it replaces, so a result is a
link people can share; saving and deleting are POSTs.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import BadRequest
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_POST

from accounts_app import audit
from accounts_app.models import AuditEvent
from hermes_explorer import store
from sessions_app.redaction import redact

from . import canned
from .forms import ConsoleForm, SaveQueryForm
from .models import SavedQuery
from .readonly import ConsoleError, ConsoleTimeout, ConsoleUnavailable, QueryResult, run_readonly

# Characters of one cell shown in the HTML table; exports carry the whole value.
CELL_CHARS = 2_000
EXPORT_FORMATS = ("csv", "json", "jsonl")
DEFAULT_SQL = "SELECT id, title, source, datetime(started_at, 'unixepoch') AS started\nFROM sessions\nORDER BY started_at DESC\nLIMIT 20"


def _audit(request, sql: str, params: dict) -> None:
    detail = sql if not params else f"{sql}\n-- parameters: {params!r}"
    audit.record(request, AuditEvent.SQL, detail=detail)


def _display_cell(value):
    """What a cell shows: NULL, a blob's size, or text (redacted, cut for the page)."""
    if value is None:
        return {"null": True}
    if isinstance(value, bytes):
        return {"blob": len(value)}
    if isinstance(value, str):
        text = redact(value)
        if len(text) > CELL_CHARS:
            return {"text": text[:CELL_CHARS], "cut": len(text)}
        return {"text": text}
    return {"text": str(value), "number": True}


def _export_value(value):
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, str):
        return redact(value)
    return value


def _unique_columns(columns: list[str]) -> list[str]:
    """``SELECT 1, 1`` has two columns called "1": exports need distinct keys."""
    seen: dict[str, int] = {}
    out = []
    for name in columns:
        name = name or "column"
        if name in seen:
            seen[name] += 1
            name = f"{name}_{seen[name]}"
        else:
            seen[name] = 1
        out.append(name)
    return out


def _export_response(result: QueryResult, fmt: str, slug: str):
    from sessions_app.exports import export_filename, stream_export

    columns = _unique_columns(result.columns)
    rows = [
        {c: _export_value(v) for c, v in zip(columns, row, strict=False)} for row in result.rows
    ]
    response = stream_export(
        fmt=fmt,
        columns=columns,
        chunks=[rows],
        filename=export_filename("sql", [slug or "query"], fmt),
    )
    if result.truncated:
        response["X-Rows-Truncated"] = f"at {result.row_cap} rows"
    return response


@require_GET
def console(request):
    """The console: SQL, its parameters, the rows, and the named queries on the side."""
    named = None
    slug = request.GET.get("query", "").strip()
    if slug:
        named = canned.named_query(slug)
        if named is None:
            messages.warning(request, f"There is no query called “{slug[:80]}”.")
    sql = request.GET.get("sql")
    if sql is None:
        sql = named.sql if named else ""
    data = request.GET.copy()
    data["sql"] = sql
    form = ConsoleForm(data if sql else None, sql=sql, initial={"sql": sql or DEFAULT_SQL})

    fmt = request.GET.get("_export", "").strip().lower() or None
    if fmt is not None and fmt not in EXPORT_FORMATS:
        raise BadRequest("Unknown export format: use csv, json or jsonl.")

    result = error = None
    status = 200
    missing = form.missing_parameters() if sql else []
    if sql and not missing and form.is_valid():
        params = form.parameters()
        exporting = fmt is not None
        try:
            result = run_readonly(
                form.cleaned_data["sql"],
                params,
                path=store.name(),
                timeout=(
                    settings.HERMES_EXPORT_CHUNK_TIMEOUT
                    if exporting
                    else settings.HERMES_SQL_TIMEOUT
                ),
                max_rows=settings.HERMES_SQL_EXPORT_MAX_ROWS
                if exporting
                else settings.HERMES_SQL_MAX_ROWS,
                max_bytes=settings.HERMES_SQL_EXPORT_MAX_BYTES if exporting else None,
            )
        except ConsoleUnavailable as exc:
            error, status = str(exc), 503
        except ConsoleTimeout as exc:
            error, status = str(exc), 400
        except ConsoleError as exc:
            error, status = str(exc), 400
        _audit(request, form.cleaned_data["sql"], params)
        if result is not None and exporting:
            return _export_response(result, fmt, named.slug if named else "")
    elif sql and form.is_bound and not missing:
        status = 400

    canned_queries, saved_queries = canned.all_named_queries()
    rows = [[_display_cell(v) for v in row] for row in result.rows] if result is not None else []
    export_links = {}
    if result is not None and result.columns:
        base = request.GET.copy()
        for f in EXPORT_FORMATS:
            base["_export"] = f
            export_links[f] = "?" + base.urlencode()
    return render(
        request,
        "console_app/console_detail.html",
        {
            "form": form,
            "named": named,
            "sql": sql,
            "missing": missing,
            "result": result,
            "rows": rows,
            "error": error,
            "export_links": export_links,
            "canned_queries": canned_queries,
            "saved_queries": saved_queries,
            "save_form": SaveQueryForm(initial={"sql": sql}) if sql else None,
            "timeout": settings.HERMES_SQL_TIMEOUT,
            "row_cap": settings.HERMES_SQL_MAX_ROWS,
        },
        status=status,
    )


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
    if form.is_valid():
        query = form.save(commit=False)
        query.created_by = request.user
        query.save()
        messages.success(request, f"Saved “{query.name}”.")
        return redirect(reverse("sql:console") + "?" + urlencode({"query": query.slug}))
    sql = request.POST.get("sql", "")
    canned_queries, saved_queries = canned.all_named_queries()
    return render(
        request,
        "console_app/console_detail.html",
        {
            "form": ConsoleForm(sql=sql, initial={"sql": sql}),
            "sql": sql,
            "canned_queries": canned_queries,
            "saved_queries": saved_queries,
            "save_form": form,
            "timeout": settings.HERMES_SQL_TIMEOUT,
            "row_cap": settings.HERMES_SQL_MAX_ROWS,
        },
        status=400,
    )


@require_POST
def delete(request, slug: str):
    """Staff delete the queries they saved (superusers any)."""
    query = get_object_or_404(SavedQuery, slug=slug)
    if query.created_by_id != request.user.pk and not request.user.is_superuser:
        messages.error(
            request, f"“{query.name}” was saved by someone else: only they can delete it."
        )
        return HttpResponseRedirect(reverse("sql:saved"))
    name = query.name
    query.delete()
    messages.success(request, f"Deleted “{name}”.")
    return HttpResponseRedirect(reverse("sql:saved"))
