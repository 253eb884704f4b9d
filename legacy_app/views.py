"""The old Datasette URLs on the database ``state`` keep working.

The team's bookmarks and scripts point at the Datasette instance this explorer replaces
(``/state``, ``/state/sessions?source=telegram&_sort_desc=started_at``,
``/state/messages.csv?session_id=…``, ``/state/messages?_search=…``). Each URL is read the way
Datasette read it (``legacy_app.filters``) and answered:

* by a redirect to the explorer's own page (``/sessions/``, ``/messages/``, a session or a
  message) when that page shows exactly the same rows in the same order
  (``legacy_app.translate``);
* otherwise directly, with Datasette's rows in Datasette's order and pages
  (``legacy_app.pages``), and a link to the closest explorer page (``/search/`` for
  ``_search``, whose ranked hits are not Datasette's rows);
* ``.csv`` / ``.json``: Datasette's own API (``legacy_app.api``).

Unknown parameters are ignored and said so (on the page, or as a message after a redirect).
"""

from __future__ import annotations

from django.contrib import messages as flash
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext
from django.views.decorators.http import require_safe

from hermes_explorer import store
from profiles_app.links import store_reverse
from sessions_app.models import Message
from sessions_app.tables import MessageTable, SessionTable

from .api import policy
from .api import views as api_views
from .filters import MODELS, filtered_queryset, parse
from .pages import PAGE_BUDGET, direct_page
from .paging import tilde_decode
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


@require_safe
def database(request: HttpRequest, fmt: str | None = None) -> HttpResponse:
    """``/state``: Datasette's page of the database; ``?sql=`` was its SQL editor."""
    if fmt:
        return api_views.database(request, fmt)
    if request.GET.get("sql"):
        return redirect(reverse("sql:console") + "?" + request.GET.urlencode())
    catalog = store.shape().catalog
    tables = sorted(
        name
        for name, info in catalog.tables.items()
        if not info.virtual and name not in catalog.hidden
    )
    return render(request, "legacy_app/database.html", {"shape": store.shape(), "tables": tables})


@require_safe
def table(request: HttpRequest, table: str, fmt: str | None = None) -> HttpResponse:
    if fmt:
        return api_views.table(request, table, fmt)
    catalog = store.shape().catalog
    info = catalog.table(table)
    if info is None or info.virtual or table in catalog.hidden:
        raise Http404(
            gettext(
                "The old address /state/%(table)s has no page in the explorer (it is not a "
                "table of this state.db, or it belongs to the full-text index)."
            )
            % {"table": table}
        )
    refused = policy.refusals(table, request.GET, request.user)
    if refused:
        return _refused(request, table, refused)
    policy.audit_secret_reads(request, table)
    if table not in MODELS:
        return _direct(request, table, notes=[], closest=None)
    shape = store.shape()
    query = parse(table, request.GET, shape)
    filtered_queryset(query, shape)  # notes about values a column cannot hold

    if query.search is not None and table == "messages":
        # The search page ranks its hits 20 at a time: not Datasette's rows, so a link.
        t = translate_search(query)
        return _direct(
            request,
            table,
            notes=query.notes + t.notes,
            closest=_with_params(reverse("search:results"), t.params),
        )
    if query.search is not None:
        query.notes.append(
            gettext("Datasette had no full-text search on sessions: _search ignored.")
        )

    if query.only_id is not None:
        to_row = _to_session if table == "sessions" else _to_message
        return to_row(request, query.only_id, query.notes)
    if table == "sessions":
        t = translate_sessions(query)
        target = reverse("sessions:list")
    else:
        t = translate_messages(query, shape)
        target = reverse("messages:list")
    if t.exact:
        return _redirect(request, _with_params(target, t.params), query.notes + t.notes)
    return _direct(
        request, table, notes=query.notes + t.notes, closest=_with_params(target, t.params)
    )


def _refused(request: HttpRequest, table: str, reasons: list[str]):
    """A filter the role may not ask: 400, and no query runs, so every probe gets the same
    answer whatever the rows hold."""
    closest = reverse(f"{table}:list") if table in MODELS else reverse("legacy:database")
    return _render_table(
        request, table, [], [], notes=reasons, closest=closest, refused=True, status=400
    )


def _to_session(request: HttpRequest, session_id: str, notes: list[str]) -> HttpResponse:
    try:
        url = store_reverse("sessions:detail", [session_id])
    except NoReverseMatch as exc:
        raise Http404(gettext("No such session.")) from exc
    return _redirect(request, url, notes)


def _to_message(request: HttpRequest, message_id: str, notes: list[str]) -> HttpResponse:
    try:
        pk = int(message_id)
    except ValueError as exc:
        raise Http404(gettext("No such message.")) from exc
    message = Message.objects.only("id", "session").filter(pk=pk).first()
    if message is None:
        raise Http404(gettext("No such message in this state.db."))
    try:
        url = store_reverse("sessions:message", [message.session_id, message.id])
    except NoReverseMatch as exc:
        raise Http404(gettext("This message's session id cannot be linked.")) from exc
    return _redirect(request, url, notes)


@require_safe
def row(request: HttpRequest, table: str, pk: str, fmt: str | None = None) -> HttpResponse:
    """Datasette's row pages: ``/state/sessions/<id>`` and ``/state/messages/<id>``."""
    if fmt:
        return api_views.row(request, table, pk)
    pk = tilde_decode(pk)
    if table == "sessions":
        return _to_session(request, pk, [])
    if table == "messages":
        return _to_message(request, pk, [])
    raise Http404(
        gettext("The old address /state/%(table)s/… has no page in the explorer.")
        % {"table": table}
    )


def _direct(request: HttpRequest, table: str, *, notes: list[str], closest: str | None):
    """An old URL no explorer page says exactly: Datasette's rows, in its order and pages."""
    page = direct_page(request, table, request.user)
    return _render_table(
        request,
        table,
        page.columns,
        page.rows,
        notes=list(dict.fromkeys(notes + page.notes + ([page.error] if page.error else []))),
        closest=closest,
        next_url=page.next_url,
        timed_out=page.timed_out,
    )


def _render_table(request, table, columns, rows, *, status=200, **context) -> HttpResponse:
    if table == "sessions":
        context["table"] = SessionTable(rows, order_by=None, shape=store.shape(), orderable=False)
    elif table == "messages":
        context["table"] = MessageTable(rows, order_by=None, orderable=False)
    else:
        context.update(plain_columns=columns, plain_rows=rows)
    context.update(legacy_table=table, budget=PAGE_BUDGET)
    return render(request, "legacy_app/table.html", context, status=status)
