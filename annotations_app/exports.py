"""The annotation columns of session exports (``tags``, ``starred``, ``notes_count``,
``scores``: the team's tally, ``quality: bad 1, good 2``), and a session export filtered by
annotations.

The columns are added a chunk at a time (one app-database lookup per chunk, none without
annotations), after the export's own rows; ``starred`` is the downloading user's star.
"""

from __future__ import annotations

import dataclasses

from .crossdb import Selection, export_chunks
from .models import AnnotatedSession
from .selectors import NONE, for_sessions
from .targets import current_store

COLUMNS = ("tags", "starred", "notes_count", "scores")


def _annotator(user):
    if not AnnotatedSession.objects.filter(store=current_store()).exists():
        blank = ("", 0, 0, "")
        return lambda rows: [(*row, *blank) for row in rows]

    def annotate(rows):
        found = for_sessions([row[0] for row in rows], user)
        out = []
        for row in rows:
            a = found.get(row[0], NONE)
            out.append((*row, a.tag_names, int(a.starred), a.notes_count, a.score_summary))
        return out

    return annotate


def extend_plan(plan, user, selection: Selection):
    """``plan`` (a session export) with the annotation columns, and only the sessions carrying
    an active ``selection``."""
    annotate, inner = _annotator(user), plan.to_rows
    plan = dataclasses.replace(
        plan, columns=[*plan.columns, *COLUMNS], to_rows=lambda fetched: annotate(inner(fetched))
    )
    if selection.active:
        return SelectedPlan(plan, selection)
    return plan


class SelectedPlan:
    """A session export plan whose rows come a batch of annotated sessions at a time
    (:func:`annotations_app.crossdb.export_chunks`); the rest is the wrapped plan's."""

    def __init__(self, plan, selection: Selection) -> None:
        self.plan = plan
        self.selection = selection

    def __getattr__(self, name):
        return getattr(self.plan, name)

    def chunks(self, chunk_size: int | None = None):
        for fetched in export_chunks(self.selection, self.plan.queryset, self.plan.keyset):
            yield self.plan.to_rows(fetched)
