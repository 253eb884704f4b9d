"""Where other apps add to the session pages without this app importing them: an app's
``ready()`` registers ``provider(request, session_id) -> dict`` for a transcript export's header.
"""

from __future__ import annotations

from collections.abc import Callable

TRANSCRIPT_METADATA: list[Callable] = []
