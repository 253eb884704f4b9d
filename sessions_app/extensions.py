"""Where other apps add to the session pages without this app importing them.

An app registers in its ``AppConfig.ready()``:

``LIST_VIEW_MIXINS``
    mixins of the session list view (filters, columns, exports), composed in front of
    :class:`sessions_app.views.sessions.SessionListView` at the first request;
``TRANSCRIPT_METADATA``
    ``provider(request, session_id) -> dict`` whose keys and values a transcript export adds
    to its header (JSON: the ``annotations`` object; Markdown: one line).
"""

from __future__ import annotations

from collections.abc import Callable

LIST_VIEW_MIXINS: list[type] = []
TRANSCRIPT_METADATA: list[Callable] = []


def compose_list_view(base: type) -> type:
    if not LIST_VIEW_MIXINS:
        return base
    return type(base.__name__, (*LIST_VIEW_MIXINS, base), {"__module__": base.__module__})


def transcript_metadata(request, session_id: str) -> dict | None:
    if not TRANSCRIPT_METADATA:
        return None
    out: dict = {}
    for provider in TRANSCRIPT_METADATA:
        out.update(provider(request, session_id))
    return out
