"""The message table: every message of the state.db, filtered, a keyset page at a time.

Only the primary key orders the whole table, so pages walk ids (newest first by default) and
filters without an index of their own (role, tool, source, dates) are checked row by row
until a page is full. That is quick for common values and can be long for rare ones: the
page query runs under a short deadline and a scan that runs out of time says so on the same
page, with the filters kept, instead of holding a worker.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from hermes_explorer import store
from hermes_explorer.hermes_db.deadline import QueryTimeout, query_budget

from .. import exports, selectors
from ..filters import MessageFilter
from ..models import Message, Session
from ..tables import MessageTable

MESSAGES_PER_PAGE = 50
MAX_PER_PAGE = 1000
# Seconds the page query may scan before we give up and ask for a narrower filter.
FILTER_BUDGET = 2.0
# Parameters of this page that mean nothing to the search page.
LIST_ONLY_PARAMS = ("sort", "cursor", "size", "q", "_export")


def page_size(request: HttpRequest, notes: list[str]) -> int:
    raw = request.GET.get("size")
    if not raw:
        return MESSAGES_PER_PAGE
    try:
        size = int(raw)
    except ValueError:
        notes.append(f"Page size “{raw}” is not a number: showing {MESSAGES_PER_PAGE}.")
        return MESSAGES_PER_PAGE
    if not 1 <= size <= MAX_PER_PAGE:
        size = min(max(size, 1), MAX_PER_PAGE)
        notes.append(f"Page size kept between 1 and {MAX_PER_PAGE}: showing {size}.")
    return size


def search_redirect(request: HttpRequest) -> HttpResponse:
    """``/messages/?q=…`` is a search: the same filters, shown as hits with snippets."""
    params = request.GET.copy()
    for name in LIST_ONLY_PARAMS:
        if name != "q":
            params.pop(name, None)
    return redirect(reverse("search:results") + "?" + params.urlencode())


def export_filename_bits(filterset) -> list[str]:
    data = filterset.form.cleaned_data
    bits = [str(data[key]) for key in ("session_id", "role", "tool_name") if data.get(key)]
    bits += list(data.get("source") or [])
    for key, label in (("date_from", "from"), ("date_to", "to")):
        if data.get(key):
            bits.append(f"{label}-{data[key].isoformat()}")
    return bits


@require_GET
def message_list(request: HttpRequest) -> HttpResponse:
    if request.GET.get("q", "").strip():
        return search_redirect(request)
    shape = store.shape()
    notes: list[str] = []
    sort = request.GET.get("sort", selectors.DEFAULT_MESSAGE_SORT)
    if sort not in selectors.MESSAGE_SORTS:
        notes.append(f"Unknown sort “{sort}”: showing newest first.")
        sort = selectors.DEFAULT_MESSAGE_SORT
    per_page = page_size(request, notes)

    # Always bound: visibility applies even when no filter is given.
    filterset = MessageFilter(request.GET, queryset=Message.objects.all())
    if exports.requested_format(request):
        if not filterset.is_valid():
            return exports.invalid_filters_response(filterset.form)
        return exports.export_messages(
            request,
            filterset.qs,
            selectors.MESSAGE_SORTS[sort],
            filename_bits=export_filename_bits(filterset),
        )
    rows, page, count, timed_out, session = [], None, None, False, None
    if not filterset.is_valid():
        notes.append("Some filters are not valid; fix them to see messages.")
    else:
        session_id = filterset.form.cleaned_data.get("session_id")
        if session_id:
            session = Session.objects.only("id", "title", "source").filter(pk=session_id).first()
        try:
            with query_budget(FILTER_BUDGET):
                filtered = filterset.qs
                if session_id:
                    # One session: its index bounds the count.
                    count = selectors.capped_count(filtered)
                page = selectors.MESSAGE_SORTS[sort].paginate(
                    selectors.messages_for_table(filtered), request.GET.get("cursor"), per_page
                )
        except QueryTimeout:
            timed_out = True
            page = None
        else:
            rows = selectors.link_messages(page.rows)
            notes.extend(page.notes)
    table = MessageTable(rows, order_by=sort)
    return render(
        request,
        "sessions_app/message_list.html",
        {
            "filter": filterset,
            "table": table,
            "page": page,
            "count": count,
            "notes": notes,
            "sort": sort,
            "timed_out": timed_out,
            "budget": FILTER_BUDGET,
            "filtered_session": session,
            "shape": shape,
        },
    )
