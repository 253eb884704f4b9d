"""The old Datasette URLs on the database ``state`` keep working.

The team's bookmarks and scripts point at the Datasette instance this explorer replaces
(``/state``, ``/state/sessions?source=telegram&_sort_desc=started_at``,
``/state/messages.csv?session_id=…``, ``/state/messages?_search=…``). Each URL is read the way
Datasette read it (``legacy_app.filters``) and answered:

* by a redirect to the explorer's own page (``/sessions/``, ``/messages/``, ``/search/``, a
  session or a message) when its parameters say exactly the same thing
  (``legacy_app.translate``);
* otherwise directly, with a table of exactly those rows (``legacy_app.selectors``);
* ``.csv`` / ``.json``: the explorer's streamed export of the same rows (``_export=``).
  NOTE: the export gives every matching row, where Datasette gave one page (unless
  ``_stream=on``); and Datasette's default ``.json`` was an object
  ``{"columns": […], "rows": [[…], …], "next": …}``, where the explorer's JSON export is a
  list of row objects, i.e. Datasette's ``?_shape=array``.

Unknown parameters are ignored and said so (on the page, or as a message after a redirect).
"""

from __future__ import annotations

from django.contrib import messages as flash
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_GET

from hermes_explorer import store
from sessions_app import selectors as session_selectors
from sessions_app.models import Message
from sessions_app.tables import MessageTable, SessionTable

from . import access
from .api import views as api_views
from .filters import MODELS, LegacyQuery, parse
from .paging import tilde_decode
from .selectors import DIRECT_BUDGET, direct_page
from .translate import translate_messages, translate_search, translate_sessions


def _with_params(url: str, params: list[tuple[str, str]]) -> str:
    query = QueryDict(mutable=True)
    for key, value in params:
        query.appendlist(key, value)
    encoded = query.urlencode()
    return f"{url}?{encoded}" if encoded else url


def _redirect(request: HttpRequest, url: str, notes: list[str]) -> HttpResponse:
    for note in notes:
        flash.info(request, note)
    return redirect(url)


@require_GET
def database(request: HttpRequest, fmt: str | None = None) -> HttpResponse:
    """``/state``: Datasette's page of the database; ``?sql=`` was its SQL editor."""
    if fmt:
        return api_views.database(request, fmt)
    if request.GET.get("sql"):
        return redirect(reverse("sql:console") + "?" + request.GET.urlencode())
    return render(request, "legacy_app/database.html", {"shape": store.shape()})


@require_GET
def table(request: HttpRequest, table: str, fmt: str | None = None) -> HttpResponse:
    if fmt:
        return api_views.table(request, table, fmt)
    if table not in MODELS:
        raise Http404(
            f"The old address /state/{table} has no page in the explorer "
            "(only sessions and messages were browsed there)."
        )
    refused = access.refusals(table, request.GET, request.user)
    if refused:
        return _refused(request, table, fmt, refused)
    shape = store.shape()
    query = parse(table, request.GET, shape)

    if query.search is not None:
        if table != "messages":
            query.notes.append("Datasette had no full-text search on sessions: _search ignored.")
        else:
            t = translate_search(query)
            notes = query.notes + t.notes
            if fmt:
                notes.append("Search results have no download: showing them as a page.")
            return _redirect(request, _with_params(reverse("search:results"), t.params), notes)

    if query.only_id is not None and not fmt:
        to_row = _to_session if table == "sessions" else _to_message
        return to_row(request, query.only_id, query.notes)
    if table == "sessions":
        t = translate_sessions(query)
        target = reverse("sessions:list")
    else:
        t = translate_messages(query, shape)
        target = reverse("messages:list")

    if t.exact:
        params = t.params + ([("_export", fmt)] if fmt else [])
        # A download has no page to show notes on.
        notes = [] if fmt else query.notes + t.notes
        return _redirect(request, _with_params(target, params), notes)
    return _direct(request, query, shape, fmt=fmt, closest=_with_params(target, t.params))


def _refused(request: HttpRequest, table: str, fmt: str | None, reasons: list[str]):
    """A filter the role may not ask: 400, and no query runs, so every probe gets the same
    answer whatever the rows hold."""
    message = " ".join(reasons)
    if fmt == "json":
        # Datasette's error object.
        body = {"ok": False, "error": message, "status": 400, "title": "Refused filter"}
        return JsonResponse(body, status=400, json_dumps_params={"ensure_ascii": False})
    if fmt == "csv":
        return HttpResponse(message + "\n", status=400, content_type="text/plain; charset=utf-8")
    closest = reverse(f"{table}:list")
    return _render_table(
        request, table, store.shape(), [], notes=reasons, closest=closest, refused=True, status=400
    )


def _to_session(request: HttpRequest, session_id: str, notes: list[str]) -> HttpResponse:
    try:
        url = reverse("sessions:detail", args=[session_id])
    except NoReverseMatch as exc:
        raise Http404("No such session.") from exc
    return _redirect(request, url, notes)


def _to_message(request: HttpRequest, message_id: str, notes: list[str]) -> HttpResponse:
    try:
        pk = int(message_id)
    except ValueError as exc:
        raise Http404("No such message.") from exc
    message = Message.objects.only("id", "session").filter(pk=pk).first()
    if message is None:
        raise Http404("No such message in this state.db.")
    try:
        url = reverse("sessions:message", args=[message.session_id, message.id])
    except NoReverseMatch as exc:
        raise Http404("This message's session id cannot be linked.") from exc
    return _redirect(request, url, notes)


@require_GET
def row(request: HttpRequest, table: str, pk: str, fmt: str | None = None) -> HttpResponse:
    """Datasette's row pages: ``/state/sessions/<id>`` and ``/state/messages/<id>``."""
    if fmt:
        return api_views.row(request, table, pk)
    pk = tilde_decode(pk)
    if table == "sessions":
        return _to_session(request, pk, [])
    if table == "messages":
        return _to_message(request, pk, [])
    raise Http404(f"The old address /state/{table}/… has no page in the explorer.")


def _direct(
    request: HttpRequest, query: LegacyQuery, shape, *, fmt: str | None, closest: str
) -> HttpResponse:
    """An old URL whose filters the explorer's pages cannot say: the same rows, with
    Datasette's paging (``_size``, ``_next``)."""
    page = direct_page(query, shape)
    if fmt:
        page.notes.append(
            f"This download ({fmt.upper()}) uses filters the explorer's export does not carry: "
            "the rows are shown as a page instead."
        )
    next_url = None
    if page.next_token:
        params = request.GET.copy()
        params["_next"] = page.next_token
        next_url = request.path + "?" + params.urlencode()
    return _render_table(
        request,
        query.table,
        shape,
        page.rows,
        notes=page.notes,
        filters=query.filters,
        closest=closest,
        next_url=next_url,
        timed_out=page.timed_out,
    )


def _render_table(request, table, shape, rows, *, status=200, **context) -> HttpResponse:
    if table == "sessions":
        table_obj = SessionTable(rows, order_by=None, shape=shape, orderable=False)
    else:
        rows = session_selectors.link_messages(rows)
        table_obj = MessageTable(rows, order_by=None, orderable=False)
    context.update(legacy_table=table, table=table_obj, budget=DIRECT_BUDGET, shape=shape)
    return render(request, "legacy_app/table.html", context, status=status)
