"""Reveal one message without redaction (staff, enforced by the role middleware): a POST, so
it takes a deliberate click, and written to the audit log before anything is shown.
"""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import render
from django.utils.translation import gettext
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from accounts_app import audit
from accounts_app.models import AuditEvent

from ..selectors import message_for_reveal


@never_cache
@require_POST
def reveal_message(request, session_id: str, message_id: int):
    message = message_for_reveal(session_id=session_id, message_id=message_id)
    if message is None:
        raise Http404(gettext("No such message in this session."))
    audit.record(request, AuditEvent.REVEAL, session_id=session_id, message_id=message.id)
    return render(request, "sessions_app/revealed_message_detail.html", {"message": message})
