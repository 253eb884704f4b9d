"""Links to a session and to a message in its transcript, for pages that show many of them.

``reverse()`` costs about a tenth of a millisecond (measured), which a 50-row table pays once
or twice per row.  :class:`TranscriptLinks` reverses each route once per page with a
placeholder and fills in the ids.  Only ids made of letters, digits, ``_`` and ``-`` take that
path: ``reverse()`` leaves those characters as they are and the ``str`` converter accepts
them, so the link is the one ``reverse()`` gives.  Any other id goes through ``reverse()``,
and an id it cannot route gives ``None`` (a row without a link, never an error).
"""

from __future__ import annotations

import re

from django.urls import NoReverseMatch, reverse

_PLAIN = re.compile(r"[A-Za-z0-9_-]+\Z")
_SESSION = "hx-session-placeholder"
_MESSAGE = 987654321


class TranscriptLinks:
    """Reversed once (under the current script prefix); cheap for every row after that."""

    def __init__(self) -> None:
        detail = reverse("sessions:detail", args=[_SESSION])
        message = reverse("sessions:message", args=[_SESSION, _MESSAGE])
        self._detail = detail.split(_SESSION)
        self._message = [part.split(str(_MESSAGE)) for part in message.split(_SESSION)]
        # The fast path needs each placeholder exactly once in its route.
        self._fast = (
            len(self._detail) == 2
            and len(self._message) == 2
            and len(self._message[0]) == 1
            and len(self._message[1]) == 2
        )

    def session(self, session_id) -> str | None:
        if self._fast and isinstance(session_id, str) and _PLAIN.match(session_id):
            return f"{self._detail[0]}{session_id}{self._detail[1]}"
        try:
            return reverse("sessions:detail", args=[session_id])
        except NoReverseMatch:
            return None

    def message(self, session_id, message_id) -> str | None:
        if (
            self._fast
            and isinstance(session_id, str)
            and type(message_id) is int
            and message_id >= 0
            and _PLAIN.match(session_id)
        ):
            (head,), (middle, tail) = self._message
            return f"{head}{session_id}{middle}{message_id}{tail}"
        try:
            return reverse("sessions:message", args=[session_id, message_id])
        except NoReverseMatch:
            return None
