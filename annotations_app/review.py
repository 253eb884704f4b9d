"""Review queues: any session list (its query string), walked in its own order, skipping what
the reviewer scored.  The walk is the list's own keyset paging, a batch of keys at a time, each
batch checked against the user's scores in one query: a click costs the run of sessions
already scored, never the whole list, and gives up after ``MAX_BATCHES`` batches.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from django.http import QueryDict

from .forms import ReviewForm
from .listing import AnnotatedSessionListView
from .selectors import scored_by

BATCH = 100
MAX_BATCHES = 20


def list_params(request) -> QueryDict:
    """The list's query string: the request's, without the review's own ``from`` and without
    what only a page or a download of the list means."""
    params = request.GET.copy()
    for key in ("from", "cursor", "_export", "page", "show"):
        params.pop(key, None)
    return params


@dataclass
class Next:
    session_id: str | None
    looked: int  # sessions looked through
    gave_up: bool  # the walk stopped at its bound before the end of the list


class Queue:
    """The session list of ``params``, prepared as its page would be (no query run yet)."""

    def __init__(self, request, params: QueryDict) -> None:
        self.user = request.user
        # The list reads its filters from its request: a copy carrying the list's own.
        listing = copy.copy(request)
        listing.GET = params
        self.view = AnnotatedSessionListView()
        self.view.setup(listing)
        self.view.prepare(listing)
        form = self.view.filterset
        # The scores collected: the queue's own field, which the list ignores.
        self.review = ReviewForm(params)
        self.valid = self.review.is_valid() and (not form.is_bound or form.is_valid())
        self.scores = list(self.review.cleaned_data["review"]) if self.valid else []

    def _keys(self):
        """The list's sessions, reading only the keys of its order."""
        fields = [name for name, _ in self.view.keyset.keys if name != "last_active"]
        return self.view.key_queryset(self.view.filterset.qs).only(*fields)

    def _row(self, session_id: str):
        return self._keys().filter(id=session_id).first()

    def next_after(self, session_id: str | None) -> Next:
        """The first session after ``session_id`` (None: from the start) the user has not
        scored (with the queue's scores), in the list's order."""
        if not self.valid:
            return Next(None, 0, False)
        view, token = self.view, None
        if session_id:
            row = self._row(session_id)
            if row is not None:
                token = view.keyset.encode(row, "n")
        looked = 0
        for _ in range(MAX_BATCHES):
            page = view.paginate(self._keys(), token, BATCH)
            ids = [row.id for row in page.rows]
            looked += len(ids)
            done = scored_by(self.user, ids, self.scores)
            found = next((sid for sid in ids if sid not in done and sid != session_id), None)
            if found is not None:
                return Next(found, looked, False)
            if not page.next_cursor:
                return Next(None, looked, False)
            token = page.next_cursor
        return Next(None, looked, True)

    def position(self, session_id: str) -> tuple[int, object] | None:
        """``(the session's place in the list, from 1; the list's count)``, or None when the
        list does not hold it."""
        if not self.valid:
            return None
        view = self.view
        row = self._row(session_id)
        if row is None:
            return None
        values = view.keyset.values_of(row)
        selection = view.selection
        if selection.active:
            before = selection.before(view.keyset, values)
        else:
            before = self._keys().filter(view.keyset.after(values, reverse=True)).count()
        return before + 1, view.get_count(view.filterset.qs)
