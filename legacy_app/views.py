"""The pages of the old Datasette URLs: the same rows, order and pages as the URL's ``.json``
(:mod:`legacy_app.api.tables`), ids linked to explorer pages.
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext
from django.views.decorators.http import require_safe

from hermes_explorer import store
from profiles_app.links import store_reverse
from sessions_app.links import TranscriptLinks
from sessions_app.models import Message

from .api import policy, tables
from .api import views as api_views
from .api.errors import ApiError
from .api.tokens import tilde_decode

# Characters of one value shown in a cell.
CELL_CHARS = 300
# Parameters that mean the same on the explorer's own list pages (its closest page).
CARRIED = {
    "sessions": ("source", "model", "user_id"),
    "messages": ("session_id", "role", "tool_name"),
}


@require_safe
def database(request: HttpRequest, fmt: str | None = None) -> HttpResponse:
    """``/state``: Datasette's page of the database; ``?sql=`` was its SQL editor."""
    if fmt:
        return api_views.database(request, fmt)
    if request.GET.get("sql"):
        return redirect(reverse("sql:console") + "?" + request.GET.urlencode())
    catalog = store.shape().catalog
    tables_ = sorted(
        name
        for name, info in catalog.tables.items()
        if not info.virtual and name not in catalog.hidden
    )
    return render(request, "legacy_app/database.html", {"shape": store.shape(), "tables": tables_})


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
    info = policy.keyed_for(info, request.user)
    context = {
        "legacy_table": table,
        "budget": tables.page_budget(),
        "closest": _closest(request, table),
    }
    refused = policy.refusals(table, request.GET, request.user)
    if refused:
        # No query runs: every probe of a refused column gets the same answer.
        plain = reverse(f"{table}:list") if table in CARRIED else None
        context.update(refused=True, notes=refused, closest=plain)
        return render(request, "legacy_app/table.html", context, status=400)
    policy.audit_secret_reads(request, table)
    try:
        data, columns, rows = tables.table_page(request, info, user=request.user)
    except ApiError as exc:
        context.update(error=exc.message, timed_out=exc.title == "SQL Interrupted")
        return render(request, "legacy_app/table.html", context, status=exc.status)
    next_url = data["next_url"]
    context.update(
        columns=columns,
        rows=_cells(table, columns, rows),
        count=data["filtered_table_rows_count"],
        facets=list(data["facet_results"].values()),
        next_url=request.path + "?" + next_url.partition("?")[2] if next_url else None,
    )
    return render(request, "legacy_app/table.html", context)


def _closest(request: HttpRequest, table: str) -> str | None:
    """The explorer's own page for this table, with the parameters that mean the same there."""
    if table == "messages" and request.GET.get("_search"):
        return reverse("search:results") + "?q=" + quote(request.GET["_search"], safe="")
    if table not in CARRIED:
        return None
    encoded = urlencode([(key, v) for key in CARRIED[table] for v in request.GET.getlist(key)])
    return reverse(f"{table}:list") + (f"?{encoded}" if encoded else "")


def _cells(table: str, columns: list[str], rows: list) -> list[list[tuple]]:
    """Each row as ``(text, link or None)`` cells, ids linked to their explorer page."""
    links = TranscriptLinks()
    session_at = columns.index("session_id") if "session_id" in columns else None

    def link(column: str, value, row) -> str | None:
        if value is None:
            return None
        if column == ("id" if table == "sessions" else "session_id"):
            return links.session(value)
        if (table, column) == ("messages", "id") and session_at is not None:
            return links.message(_value(row[session_at]), value)
        return None

    return [
        [(_text(v), link(c, _value(v), row)) for c, v in zip(columns, row, strict=True)]
        for row in rows
    ]


def _value(value):
    """A cell's stored value (an expanded label keeps it under ``value``)."""
    return value.get("value") if isinstance(value, dict) else value


def _text(value):
    if value is None:
        return None
    if isinstance(value, bytes):
        return f"<{len(value):,} bytes>"
    if isinstance(value, dict):
        value = value.get("label", value.get("value"))
    text = str(value)
    return text if len(text) <= CELL_CHARS else text[:CELL_CHARS] + "…"


def _redirect(name: str, args: list, missing: str) -> HttpResponse:
    try:
        return redirect(store_reverse(name, args))
    except NoReverseMatch as exc:
        raise Http404(missing) from exc


@require_safe
def row(request: HttpRequest, table: str, pk: str, fmt: str | None = None) -> HttpResponse:
    """Datasette's row pages: ``/state/sessions/<id>`` and ``/state/messages/<id>``."""
    if fmt:
        return api_views.row(request, table, pk)
    pk = tilde_decode(pk)
    if table == "sessions":
        return _redirect("sessions:detail", [pk], gettext("No such session."))
    if table == "messages":
        try:
            message = Message.objects.only("id", "session").filter(pk=int(pk)).first()
        except ValueError as exc:
            raise Http404(gettext("No such message.")) from exc
        if message is None:
            raise Http404(gettext("No such message in this state.db."))
        missing = gettext("This message's session id cannot be linked.")
        return _redirect("sessions:message", [message.session_id, message.id], missing)
    raise Http404(
        gettext("The old address /state/%(table)s/… has no page in the explorer.")
        % {"table": table}
    )
