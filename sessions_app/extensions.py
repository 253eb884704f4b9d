"""Where other apps add to the session pages without this app importing them.

``TRANSCRIPT_METADATA``: an app's ``AppConfig.ready()`` registers ``provider(request,
session_id) -> dict``, added to a transcript export's header (JSON: ``annotations``).
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
