"""Reveal one message without redaction (staff; the role middleware enforces it).

A POST, so that it takes a deliberate click (and a CSRF token), never a link preview or a
crawler; every reveal is written to the audit log before anything is shown.
"""

from __future__ import annotations

from django.db.models import Value
from django.http import Http404
from django.shortcuts import render
from django.utils.translation import gettext
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from accounts_app import audit
from accounts_app.models import AuditEvent

from ..content import as_text, parse_tool_calls
from ..models import Message
from ..sqlfunctions import ContentHead, ContentLength

# Characters of content loaded (cut in SQL): enough for any real secret, bounded for the page.
REVEAL_CUT = 1_000_000


@never_cache
@require_POST
def reveal_message(request, session_id: str, message_id: int):
    base = Message.objects.only_readable(
        "id", "session", "role", "tool_name", "timestamp", "tool_calls"
    )
    # NUL-safe cuts: multimodal content starts with a NUL, where substr() would give ''.
    reasoning = (
        ContentHead("reasoning", REVEAL_CUT) if base.has_column("reasoning") else Value(None)
    )
    message = (
        base.filter(pk=message_id, session_id=session_id)
        .annotate(
            body=ContentHead("content", REVEAL_CUT),
            body_length=ContentLength("content"),
            reasoning_text=reasoning,
        )
        .first()
    )
    if message is None:
        raise Http404(gettext("No such message in this session."))
    audit.record(request, AuditEvent.REVEAL, session_id=session_id, message_id=message.id)
    calls, malformed = parse_tool_calls(message.tool_calls)
    return render(
        request,
        "sessions_app/revealed_message_detail.html",
        {
            "message": message,
            "text": as_text(message.body),
            "truncated": (message.body_length or 0) > REVEAL_CUT,
            "calls": calls,
            "malformed_calls": malformed,
        },
    )
