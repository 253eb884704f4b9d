"""Where other apps add to the session pages without this app importing them: an app's
``ready()`` registers ``provider(request, session_id) -> dict`` for a transcript export's header.
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
