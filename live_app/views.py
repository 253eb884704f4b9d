"""``/live/``: the sessions active now (``?partial=1``: the table alone, which
``static/js/live.js`` swaps in), and the new messages of a followed session; no read
transaction is held between polls."""

from __future__ import annotations

import time

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext
from django.views.decorators.http import require_GET

from accounts_app.middleware import forbidden
from accounts_app.roles import CONTENT, can_reveal, can_see_content
from hermes_explorer import store
from sessions_app.following import entries_after
from sessions_app.models import Session
from sessions_app.transcript_html import entries_html
from sessions_app.visibility import Visibility

from .activity import MAX_MINUTES, clamp_minutes, live_sessions

# How often the page's script asks again (the no-JS page reloads itself less often).
POLL_SECONDS = 5
RELOAD_SECONDS = 30
SHARE_SECONDS = 2


def _table_context(request) -> dict:
    minutes = clamp_minutes(request.GET.get("minutes"))
    now = time.time()
    content = can_see_content(request.user)
    signature = store.file_signature()
    # One read serves every poll of the next couple of seconds while the file is unchanged.
    sessions = store.while_unchanged(
        "live",
        (minutes, content),
        lambda: live_sessions(minutes=minutes, with_content=content, now=now),
        SHARE_SECONDS,
    )
    return {
        "sessions": sessions,
        "minutes": minutes,
        "checked_at": now,
        "store_changed_at": _changed_at(signature),
        "show_previews": content,
    }


def _changed_at(signature) -> float | None:
    """When the file (or its WAL) last changed: the newest mtime in its signature (None for a
    PostgreSQL schema, whose signature is a change revision)."""
    if not signature:
        return None
    stamps = [part[3] for part in signature[1:] if isinstance(part, tuple)]
    return max(stamps) / 1e9 if stamps else None


@require_GET
def index(request):
    context = _table_context(request)
    if request.GET.get("partial"):
        return render(request, "live_app/_live_table.html", context)
    return render(
        request,
        "live_app/live_list.html",
        {
            **context,
            "max_minutes": MAX_MINUTES,
            "poll_seconds": POLL_SECONDS,
            "reload_seconds": RELOAD_SECONDS,
            "shape": store.shape(),
        },
    )


@require_GET
def messages_after(request, session_id: str, message_id: int):
    """The transcript entries after ``message_id``, as ``<li>`` fragments to append;
    ``X-Last-Message-Id`` says where the next poll continues."""
    if not can_see_content(request.user):
        return forbidden(request, CONTENT)
    if not Session.objects.filter(pk=session_id).exists():
        raise Http404(gettext("No session with this id in the state.db."))
    visibility = Visibility.from_params(request.GET.getlist("show"))
    entries, newest = entries_after(session_id, message_id, visibility)
    html = entries_html(entries, request, can_reveal=can_reveal(request.user))
    response = HttpResponse(html, content_type="text/html; charset=utf-8")
    response["X-Last-Message-Id"] = str(newest)
    response["Cache-Control"] = "no-store"
    return response
