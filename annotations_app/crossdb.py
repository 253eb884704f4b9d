"""The session list filtered by annotations: a join across two databases, a page at a time.

The sessions live in the state.db, their annotations in the app's database.  Rather than put
every matching id into the state.db's query, the list walks the annotation rows **in its own
keyset order** (each tag, star and score copies its session's ``started_at`` and ``source``)
a batch at a time, and asks the state.db only for that batch's sessions; a page stops after
``MAX_WALK`` rows and says so.  "Last active" changes while a session runs, so it cannot be
copied: that sort shows newest first.  Session exports get their annotation columns here too.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field

from django.db.models import Exists, OuterRef, QuerySet
from django.utils.translation import gettext

from sessions_app.formatting import number
from sessions_app.pagination import BadCursor, KeysetPage

from .models import AnnotatedSession, Score, SessionScore, SessionTag, Star, Tag
from .selectors import NONE, for_sessions
from .targets import current_store

# Sessions of a store scored for a score that a ``noscore`` filter leaves out of the list by id.
MAX_EXCLUDED = 10_000
# The session list's keyset fields → the copies on the annotation rows.
FIELDS = {"started_at": "started_at", "source": "source", "id": "session_id"}
FIRST_BATCH_PAGES = 2
MAX_BATCH = 1_000
MAX_WALK = 5_000


def _scored(score: Score, value: str | None, **where) -> QuerySet:
    """Score rows of ``score`` (of ``value``; None: any value)."""
    qs = SessionScore.objects.filter(score=score, **where)
    return qs if value is None else qs.filter(value=value)


@dataclass
class Selection:
    """Which annotations a session must carry: every tag of ``tags``, the user's star,
    a note, every ``(score, value)`` of ``scores`` (by anyone; value None: any value).

    ``noscores`` (sessions nobody scored yet) is not an annotation a session carries: the
    list leaves the scored ones out by id (:meth:`excluded_ids`)."""

    tags: list[Tag] = field(default_factory=list)
    starred_by: object | None = None
    has_note: bool = False
    unknown_tags: list[str] = field(default_factory=list)
    scores: list[tuple[Score, str | None]] = field(default_factory=list)
    noscores: list[Score] = field(default_factory=list)
    unknown_scores: list[str] = field(default_factory=list)

    @property
    def active(self) -> bool:
        return bool(
            self.tags
            or self.unknown_tags
            or self.starred_by is not None
            or self.has_note
            or self.scores
            or self.unknown_scores
        )

    def rows(self) -> QuerySet:
        """Annotation rows, one per matching session, with ``session_id`` and the sort keys.

        Driven by the first tag's index, else the user's stars, else the first score's (one
        row per session: several people may have scored it), else the anchors with notes;
        every other condition is an EXISTS on the same target."""
        store = current_store()
        if self.unknown_tags or self.unknown_scores:
            return AnnotatedSession.objects.none()
        tags, scores = list(self.tags), list(self.scores)
        ref = "target_id"
        if tags:
            qs = SessionTag.objects.filter(tag=tags.pop(0), store=store)
        elif self.starred_by is not None:
            qs = Star.objects.filter(user=self.starred_by, store=store)
        elif scores:
            score, value = scores.pop(0)
            qs = _scored(score, value, store=store)
        else:
            qs = AnnotatedSession.objects.filter(store=store, notes_count__gt=0)
            ref = "pk"
        for tag in tags:
            qs = qs.filter(Exists(SessionTag.objects.filter(target_id=OuterRef(ref), tag=tag)))
        if self.starred_by is not None and self.tags:
            qs = qs.filter(
                Exists(Star.objects.filter(target_id=OuterRef(ref), user=self.starred_by))
            )
        for score, value in scores:
            qs = qs.filter(Exists(_scored(score, value, target_id=OuterRef(ref))))
        if self.has_note and ref == "target_id":
            qs = qs.filter(target__notes_count__gt=0)
        if qs.model is SessionScore:
            qs = qs.values("target_id", "store", "session_id", "started_at", "source").distinct()
        return qs

    def excluded_ids(self) -> tuple[list[str], bool] | None:
        """``(ids, capped)``: the sessions of the current store scored for a ``noscore``
        score, at most ``MAX_EXCLUDED`` of them; None without such a filter."""
        if not self.noscores:
            return None
        ids = list(
            SessionScore.objects.filter(store=current_store(), score__in=self.noscores)
            .order_by()
            .values_list("session_id", flat=True)
            .distinct()[: MAX_EXCLUDED + 1]
        )
        return ids[:MAX_EXCLUDED], len(ids) > MAX_EXCLUDED

    def count(self, cap: int) -> int:
        return self.rows().order_by()[: cap + 1].count()

    def before(self, keyset, values: list) -> int:
        """How many sessions carrying the selection come before ``values`` in ``keyset``'s
        order (like :meth:`count`, before the list's other filters)."""
        return self.rows().filter(_mapped(keyset).after(values, reverse=True)).order_by().count()

    def session_ids(self, limit: int) -> list[str]:
        """The ids of at most ``limit`` sessions of the current store carrying the selection."""
        return list(self.rows().order_by().values_list("session_id", flat=True)[:limit])


def supports(keyset) -> bool:
    return all(name in FIELDS for name, _ in keyset.keys)


def _mapped(keyset):
    """The keyset over the annotation rows' copies of the keys."""
    return type(keyset)(tuple((FIELDS[name], desc) for name, desc in keyset.keys), name=keyset.name)


def _batches(selection: Selection, sessions: QuerySet, keyset, values, *, reverse, sizes):
    """``(annotation rows, their sessions, last batch?)`` a batch at a time of ``sizes``, in
    ``keyset`` order (or reversed) after ``values``: one query in each database per batch."""
    mapped = _mapped(keyset)
    key_fields = [f for f, _ in mapped.keys]
    at = key_fields.index("session_id")
    order = mapped.order_by(reverse=reverse)
    base = selection.rows()
    for size in sizes:
        qs = base if values is None else base.filter(mapped.after(values, reverse=reverse))
        chunk = list(qs.order_by(*order).values_list(*key_fields)[:size])
        rows = []
        if chunk:
            ids = [row[at] for row in chunk]
            rows = list(sessions.filter(id__in=ids).order_by(*keyset.order_by(reverse=reverse)))
        last = len(chunk) < size
        yield chunk, rows, last
        if last:
            return
        values = list(chunk[-1])


def _growing(first: int):
    while True:
        yield first
        first = min(MAX_BATCH, first * 4)


def paginate(selection: Selection, sessions: QuerySet, keyset, token: str | None, per_page: int):
    """A :class:`~sessions_app.pagination.KeysetPage` of ``sessions`` carrying the selection's
    annotations, with the same cursors as the unfiltered list: the annotation rows are walked
    after the cursor until a page and one more are found, they run out, or ``MAX_WALK`` of
    them were walked (the page then stops there: ``stopped_at``, the list's keys)."""
    notes: list[str] = []
    direction, values = "n", None
    if token:
        try:
            direction, values = keyset.decode(token)
        except BadCursor as exc:
            notes.append(str(exc))
    reverse = direction == "p"
    found: list = []
    walked, stopped_at = 0, None
    sizes = _growing(max(1, (per_page + 1) * FIRST_BATCH_PAGES))
    for chunk, rows, exhausted in _batches(
        selection, sessions, keyset, values, reverse=reverse, sizes=sizes
    ):
        walked += len(chunk)
        found.extend(rows)
        if exhausted or len(found) > per_page:
            break
        if walked >= MAX_WALK:
            stopped_at = {name: chunk[-1][i] for i, (name, _) in enumerate(keyset.keys)}
            break
    rows = found[:per_page]
    more = len(found) > per_page or not exhausted
    if reverse:
        rows.reverse()
    page = KeysetPage(rows=rows, per_page=per_page, notes=notes)
    if stopped_at is not None:  # the walk stops only short of a page
        notes.append(
            gettext(
                "Looked through %(count)s annotated sessions for this page; "
                "the next page goes on from there."
            )
            % {"count": number(walked)}
        )
        stop = keyset.encode(stopped_at, "p" if reverse else "n")
        if reverse:
            page.prev_cursor = stop
        else:
            page.next_cursor = stop
    if rows:
        if (more or reverse) and page.next_cursor is None:
            page.next_cursor = keyset.encode(rows[-1], "n")
        if (more if reverse else values is not None) and page.prev_cursor is None:
            page.prev_cursor = keyset.encode(rows[0], "p")
    elif values is not None and reverse:
        page.prev_cursor = token
    return page


# The annotation columns of session exports, added a chunk at a time (one app-database lookup
# per chunk, none without annotations); ``starred`` is the downloading user's star.
EXPORT_COLUMNS = ("tags", "starred", "notes_count", "scores")


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


def extend_plan(plan, user):
    """``plan`` (a session export) with the annotation columns."""
    annotate, inner = _annotator(user), plan.to_rows
    return dataclasses.replace(
        plan,
        columns=[*plan.columns, *EXPORT_COLUMNS],
        to_rows=lambda fetched: annotate(inner(fetched)),
    )


@dataclass
class SelectedPlan:
    """A session export plan whose rows come a batch of annotated sessions at a time, in the
    plan's order, one query in each database per batch; the rest is the wrapped plan's."""

    plan: object
    selection: Selection

    def __getattr__(self, name):
        return getattr(self.plan, name)

    def chunks(self, chunk_size: int | None = None):
        batches = itertools.repeat(MAX_BATCH)
        plan = self.plan
        for _chunk, fetched, _last in _batches(
            self.selection, plan.queryset, plan.keyset, None, reverse=False, sizes=batches
        ):
            if fetched:
                yield plan.to_rows(fetched)
