"""Where other apps add to the session pages without this app importing them.

An app registers in its ``AppConfig.ready()`` (an app that extends the session list subclasses
:class:`sessions_app.views.sessions.SessionListView` instead):

``TRANSCRIPT_METADATA``
    ``provider(request, session_id) -> dict`` whose keys and values a transcript export adds
    to its header (JSON: the ``annotations`` object; Markdown: one line).
"""

from __future__ import annotations

from collections.abc import Callable

TRANSCRIPT_METADATA: list[Callable] = []


def transcript_metadata(request, session_id: str) -> dict | None:
    if not TRANSCRIPT_METADATA:
        return None
    out: dict = {}
    for provider in TRANSCRIPT_METADATA:
        out.update(provider(request, session_id))
    return out
