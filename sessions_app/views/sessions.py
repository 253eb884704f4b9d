"""Overview, session table, session page (metadata, usage, lineage, transcript)."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from accounts_app.roles import can_see_content
from hermes_explorer import store

from .. import exports, selectors
from ..filters import SessionFilter
from ..models import Message, Session
from ..redaction import redact
from ..tables import SessionTable

SESSIONS_PER_PAGE = 50


@require_GET
def overview(request):
    shape = store.shape()
    latest = SessionTable(
        selectors.latest_sessions(12),
        order_by=None,
        shape=shape,
        orderable=False,
        show_previews=can_see_content(request.user),
        exclude=("tokens", "cost", "duration"),
    )
    return render(
        request,
        "sessions_app/overview.html",
        {"sources": selectors.source_overview(), "latest": latest, "shape": shape},
    )


@require_GET
def session_list(request):
    shape = store.shape()
    sorts = selectors.session_sort_options(shape)
    sort = request.GET.get("sort", selectors.DEFAULT_SESSION_SORT)
    notes = []
    if sort not in sorts:
        notes.append(f"Unknown sort “{sort}”: showing newest first.")
        sort = selectors.DEFAULT_SESSION_SORT
    filterset = SessionFilter(request.GET or None, queryset=Session.objects.all())
    filterset.time_ordered = "started_at" in sort or "last_active" in sort
    if exports.requested_format(request):
        return exports.export_session_list(request, filterset, sorts[sort])
    rows, page, count = [], None, None
    if filterset.is_bound and not filterset.is_valid():
        notes.append("Some filters are not valid; fix them to see sessions.")
    else:
        filtered = filterset.qs
        count = selectors.capped_count(filtered)
        page = sorts[sort].paginate(
            selectors.sessions_for_table(filtered, sort=sort),
            request.GET.get("cursor"),
            SESSIONS_PER_PAGE,
        )
        rows = page.rows
        notes.extend(page.notes)
    table = SessionTable(
        rows,
        order_by=sort,
        shape=shape,
        # NOTE: no request=: django-tables2 would then paginate the rows again (25 a page)
        # and hide the rest of this keyset page. Header links read the request from context.
        # Titles are metadata; the first user message of an untitled session is content.
        show_previews=can_see_content(request.user),
    )
    return render(
        request,
        "sessions_app/session_list.html",
        {
            "filter": filterset,
            "table": table,
            "page": page,
            "count": count,
            "notes": notes,
            "sort": sort,
            "shape": shape,
        },
    )


def _int_param(request, name: str, default: int = 1) -> int:
    try:
        return max(1, min(int(request.GET.get(name, default)), 10**9))
    except (TypeError, ValueError):
        return default


@require_GET
def session_detail(request, session_id: str):
    session = selectors.session_detail(session_id)
    if session is None:
        raise Http404("No session with this id in the state.db.")
    visibility = selectors.Visibility.from_params(request.GET.getlist("show"))
    # Viewers see metadata, usage and lineage; the transcript is not even queried for them.
    transcript = None
    if can_see_content(request.user):
        transcript = selectors.transcript_page(session.id, visibility, _int_param(request, "page"))
    return render(
        request,
        "sessions_app/session_detail.html",
        {
            "session": session,
            "usage": selectors.session_usage(session),
            "lineage": selectors.session_lineage(session),
            "transcript": transcript,
            "visibility": visibility,
            "shape": store.shape(),
        },
    )


@require_GET
def message_in_transcript(request, session_id: str, message_id: int):
    """Land on one message inside its transcript: the right page, scrolled to it."""
    message = (
        Message.objects.only_readable("id", "session", "active", "compacted", "display_kind")
        .filter(pk=message_id, session_id=session_id)
        .first()
    )
    if message is None:
        raise Http404("No such message in this session.")
    visibility = selectors.Visibility.from_params(request.GET.getlist("show"))
    if message.visibility != "live":
        visibility = visibility.with_kind(message.visibility)
    page = selectors.message_position(session_id, message.id, visibility)
    url = reverse("sessions:detail", args=[session_id])
    return redirect(f"{url}?page={page}&show={visibility.as_param()}#m{message.id}")


@require_GET
def message_text(request, session_id: str, message_id: int):
    """The whole content of one message as plain text (for megabyte tool outputs)."""
    message = (
        Message.objects.only_readable("id", "session", "content")
        .filter(pk=message_id, session_id=session_id)
        .first()
    )
    if message is None:
        raise Http404("No such message in this session.")
    response = HttpResponse(redact(message.text), content_type="text/plain; charset=utf-8")
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    return response
