"""Links to sessions and messages for pages that show many: ``reverse()`` costs about 0.1 ms
(measured), so :class:`TranscriptLinks` reverses each route once with a placeholder and fills
in ids of ``[A-Za-z0-9_-]``; other ids go through ``reverse()`` (None when it cannot route).
"""

from __future__ import annotations

import re

from django.urls import NoReverseMatch, reverse

from profiles_app.links import in_store, store_reverse

_PLAIN = re.compile(r"[A-Za-z0-9_-]+\Z")
_SESSION = "hx-session-placeholder"
_MESSAGE = 987654321


def store_link(name: str, args: list, store=None) -> str | None:
    """``store_reverse()``, or None for an id no route takes."""
    try:
        return store_reverse(name, args, store)
    except NoReverseMatch:
        return None


class TranscriptLinks:
    """Reversed once (under the current script prefix); cheap for every row after that."""

    def __init__(self) -> None:
        self._detail_url = reverse("sessions:detail", args=[_SESSION])
        self._message_url = reverse("sessions:message", args=[_SESSION, _MESSAGE])
        # Per store name (None: current): the split links, or None (every link reversed).
        self._parts: dict[str | None, tuple | None] = {}

    def _split(self, store) -> tuple | None:
        key = store.name if store is not None else None
        if key in self._parts:
            return self._parts[key]
        detail = in_store(self._detail_url, store).split(_SESSION)
        message = [
            part.split(str(_MESSAGE)) for part in in_store(self._message_url, store).split(_SESSION)
        ]
        # The fast path needs each placeholder exactly once in its route.
        fast = (
            len(detail) == 2 and len(message) == 2 and len(message[0]) == 1 and len(message[1]) == 2
        )
        parts = self._parts[key] = (detail, message) if fast else None
        return parts

    def session(self, session_id, store=None) -> str | None:
        """The session's page; ``store``: the store the session is in (default: the current)."""
        if isinstance(session_id, str) and _PLAIN.match(session_id):
            parts = self._split(store)
            if parts is not None:
                head, tail = parts[0]
                return f"{head}{session_id}{tail}"
        return store_link("sessions:detail", [session_id], store)

    def message(self, session_id, message_id, store=None) -> str | None:
        if (
            isinstance(session_id, str)
            and type(message_id) is int
            and message_id >= 0
            and _PLAIN.match(session_id)
        ):
            parts = self._split(store)
            if parts is not None:
                (head,), (middle, tail) = parts[1]
                return f"{head}{session_id}{middle}{message_id}{tail}"
        return store_link("sessions:message", [session_id, message_id], store)


def link_message_rows(rows) -> list:
    """Give each row its transcript links (None when an odd id cannot be routed)."""
    links = TranscriptLinks()
    for row in rows:
        # A row of a merged list names its store: its links go to that profile.
        store = getattr(row, "store", None)
        row.message_url = links.message(row.session_id, row.id, store)
        row.session_url = links.session(row.session_id, store) if row.message_url else None
        if row.session_url is None:
            row.message_url = None
    return rows
