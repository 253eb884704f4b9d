"""One transcript as a download (``sessions_app.transcripts``; ``?chain=1``: its chain)."""

from __future__ import annotations

from django.http import Http404, StreamingHttpResponse
from django.utils.translation import gettext
from django.views.decorators.http import require_GET

from hermes_explorer import stores
from hermes_explorer.params import flag

from .. import extensions, transcripts
from ..exports import export_filename
from ..models import Session
from ..visibility import Visibility

CONTENT_TYPES = {"md": "text/markdown; charset=utf-8", "json": "application/json; charset=utf-8"}


@require_GET
def transcript_export(request, session_id: str, kind: str) -> StreamingHttpResponse:
    """``kind``: ``md`` or ``json`` (the URL's suffix)."""
    # Every column this file has: the JSON export says all it knows.
    session = Session.objects.filter(pk=session_id).first()
    if session is None:
        raise Http404(gettext("No session with this id in the state.db."))
    visibility = Visibility.from_params(request.GET.getlist("show"))
    chain = transcripts.compression_chain(session) if flag(request, "chain") else None
    current = stores.current() if stores.multi() else None
    profile = current.name if current is not None else None
    header = [provider(request, session.id) for provider in extensions.TRANSCRIPT_METADATA]
    extra = {k: v for fields in header for k, v in fields.items()} if header else None
    body = transcripts.transcript_stream(kind, session, chain, visibility, extra, profile)
    bits = [profile or "", session.id, "chain" if chain is not None else ""]
    response = StreamingHttpResponse(body, content_type=CONTENT_TYPES[kind])
    filename = export_filename("transcript", bits, kind)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = "private, no-store"
    return response
