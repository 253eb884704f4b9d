"""Writing the audit trail: one call per audited act, with who, what and from where."""

from __future__ import annotations

from hermes_explorer.security import client_ip

from .models import AuditEvent

DETAIL_CHARS = 10_000


def record(
    request, action: str, *, session_id: str = "", message_id: int | None = None, detail: str = ""
) -> AuditEvent:
    """Log ``action`` (``AuditEvent.REVEAL``, ``AuditEvent.SQL``) by the request's user."""
    store = getattr(request, "store", None)
    return AuditEvent.objects.create(
        user=request.user,
        username=request.user.get_username(),
        action=action,
        profile=store.name[:200] if store is not None else "",
        session_id=session_id[:200],
        message_id=message_id,
        detail=detail[:DETAIL_CHARS],
        ip=client_ip(request),
    )
