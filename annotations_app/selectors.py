"""Reading annotations: for one session, for a page of rows, and the tag facet."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Count, Q

from . import page_read
from .models import AnnotatedSession, Note, SavedView, Score, SessionScore, Tag
from .page_read import RowAnnotations, TagChip
from .targets import current_store

NONE = RowAnnotations()


def for_sessions(session_ids: Iterable[str], user) -> dict[str, RowAnnotations]:
    """``{session id: RowAnnotations}`` for the annotated ones among ``session_ids``."""
    store = current_store()
    found = page_read.read([(store, sid) for sid in session_ids], user, None)[0]
    return {sid: row for (_store, sid), row in found.items()}


def page_annotations(
    keys: Iterable[tuple[str, str]], user, facet_stores: list[str] | None
) -> tuple[dict[tuple[str, str], RowAnnotations], list[tuple[Tag, int]] | None]:
    """The annotations of a page's rows and, with ``facet_stores``, their tag facet, in one
    statement at most."""
    rows, facets = page_read.read(keys, user, facet_stores)
    return rows, (facets if facet_stores is not None else None)


def transcript_fields(request, session_id: str) -> dict:
    """``tags``, ``starred``, ``notes_count`` of one session, as the exports name them."""
    found = for_sessions([session_id], request.user).get(session_id, NONE)
    return {
        "tags": found.tag_names,
        "starred": found.starred,
        "notes_count": found.notes_count,
        "scores": found.score_summary,
    }


@dataclass
class ScoreGroup:
    """One score on a session page: each value with how many people gave it, and the
    user's own value (or None)."""

    score: Score
    values: list[tuple[str, int]]
    mine: str | None


def session_scores(session_id: str, user) -> list[ScoreGroup]:
    """Every score, with this session's tally and the user's value: two statements (none
    more when no score exists)."""
    scores = list(Score.objects.all())
    if not scores:
        return []
    counts: dict = defaultdict(lambda: defaultdict(int))
    mine: dict[int, str] = {}
    given = SessionScore.objects.filter(store=current_store(), session_id=session_id)
    for score_id, value, user_id in given.values_list("score_id", "value", "user_id"):
        counts[score_id][value] += 1
        if user_id == user.pk:
            mine[score_id] = value
    return [
        ScoreGroup(s, [(v, counts[s.pk].get(v, 0)) for v in s.values], mine.get(s.pk))
        for s in scores
    ]


def scored_by(user, session_ids: Iterable[str], scores=()) -> set[str]:
    """Those of ``session_ids`` (of the current store) that ``user`` gave each of ``scores``
    (none: any score)."""
    given = SessionScore.objects.filter(
        user=user, store=current_store(), session_id__in=list(session_ids)
    )
    if scores:
        given = (
            given.filter(score__in=scores)
            .values("session_id")
            .annotate(given=Count("score"))
            .filter(given=len(scores))
        )
    return set(given.values_list("session_id", flat=True))


@dataclass
class SessionAnnotations:
    target: AnnotatedSession | None
    tags: list[Tag]
    starred: bool
    notes: list[Note]


def for_session(session_id: str, user) -> SessionAnnotations:
    target = AnnotatedSession.objects.filter(store=current_store(), session_id=session_id).first()
    if target is None:
        return SessionAnnotations(None, [], False, [])
    tags = [row.tag for row in target.tags.select_related("tag").order_by("tag__name")]
    starred = user.is_authenticated and target.stars.filter(user=user).exists()
    notes = list(target.notes.all())
    return SessionAnnotations(target, tags, starred, notes)


def tag_facets(store_keys: list[str] | None = None) -> list[tuple[Tag, int]]:
    """Every tag by name, with how many sessions of the current store (or of ``store_keys``)
    it is on."""
    return page_read.read((), None, store_keys or [current_store()])[1]


def views_for(user) -> tuple[list[SavedView], list[SavedView]]:
    """(the user's own views, the views others share with the team)."""
    if user is None or not user.is_authenticated:
        return [], []
    username = f"owner__{user.USERNAME_FIELD}"
    rows = [
        SavedViewLink(*row)
        for row in SavedView.objects.filter(Q(owner=user) | Q(shared=True))
        .order_by("name", "id")
        .values_list("id", "name", "url", "shared", "owner_id", username)
    ]
    own = [v for v in rows if v.owner_id == user.pk]
    shared = [v for v in rows if v.owner_id != user.pk]
    return own, shared


@dataclass(frozen=True)
class SavedViewLink:
    pk: int
    name: str
    url: str
    shared: bool
    owner_id: int
    owner_name: str


def tags_by_session(session_ids: Iterable[str]) -> dict[str, list[TagChip]]:
    """Tags only (search hits), in one statement (:func:`page_read.hit_tags`)."""
    ids = list(set(session_ids))
    if not ids:
        return defaultdict(list)
    return page_read.hit_tags(current_store(), ids)
