"""Reading annotations: for one session, for a page of rows (tags, the user's star, note
counts and score tallies, with the ORM), the tag and score facets, and search hits' tags."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db.models import Count, Exists, F, OuterRef, Prefetch, Q

from profiles_app.middleware import PREFIX

from .models import AnnotatedSession, SavedView, Score, SessionScore, SessionTag, Star, Tag
from .targets import current_store


@dataclass
class RowAnnotations:
    """What the session table and the exports show of one session."""

    tags: list[Tag] = field(default_factory=list)
    starred: bool = False
    notes_count: int = 0
    # The team's tally: {score name: {value: people who gave it}}.
    scores: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def tag_names(self) -> str:
        return ", ".join(t.name for t in self.tags)

    @property
    def score_summary(self) -> str:
        """``quality: bad 1, good 2; speed: fast 1`` (names and values in order)."""
        return "; ".join(
            f"{name}: " + ", ".join(f"{value} {n}" for value, n in sorted(tally.items()))
            for name, tally in sorted(self.scores.items())
        )


NONE = RowAnnotations()


def tally(rows) -> dict[str, dict[str, int]]:
    """``{score name: {value: count}}`` of score rows (``score`` selected with them)."""
    out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row in rows:
        out[row.score.name][row.value] += 1
    return {name: dict(values) for name, values in out.items()}


Key = tuple[str, str]


def read(
    keys: Iterable[Key], user, facet_stores: list[str] | None
) -> tuple[dict[Key, RowAnnotations], list[tuple[Tag, int]] | None]:
    """``({(store key, session id): RowAnnotations}, [(tag, sessions of facet_stores)])``, in
    one statement at most; None ``facet_stores`` asks for no facet."""
    by_store: dict[str, list[str]] = defaultdict(list)
    for store, sid in keys:
        by_store[store].append(sid)
    rows: dict[Key, RowAnnotations] = {}
    if by_store:
        wanted = Q()
        for store, ids in by_store.items():
            wanted |= Q(store=store, session_id__in=ids)
        user_id = user.pk if user is not None and user.is_authenticated else None
        anchors = (
            AnnotatedSession.objects.filter(wanted)
            .annotate(starred=Exists(Star.objects.filter(target=OuterRef("pk"), user_id=user_id)))
            .prefetch_related(
                Prefetch(
                    "tags",
                    queryset=SessionTag.objects.select_related("tag").order_by("tag__name"),
                ),
                Prefetch("scores", queryset=SessionScore.objects.select_related("score")),
            )
        )
        for anchor in anchors:
            tags = [st.tag for st in anchor.tags.all()]
            rows[(anchor.store, anchor.session_id)] = RowAnnotations(
                tags, anchor.starred, anchor.notes_count, tally(anchor.scores.all())
            )
    facets = None
    if facet_stores is not None:
        counted = Tag.objects.annotate(
            uses=Count("session_tags", filter=Q(session_tags__store__in=facet_stores))
        ).order_by("name")
        facets = [(tag, tag.uses) for tag in counted]
    return rows, facets


def score_facets(stores: list[str]) -> list[tuple[Score, list[tuple[str, int]]]]:
    """Every score with, for each of its values, the number of sessions of ``stores`` someone
    gave it; no second query when no score exists."""
    scores = list(Score.objects.all())
    if not scores:
        return []
    counted = (
        SessionScore.objects.filter(store__in=stores)
        .order_by()
        .values_list("score_id", "value")
        .annotate(n=Count("target_id", distinct=True))
    )
    found = {(score_id, value): n for score_id, value, n in counted}
    return [(s, [(v, found.get((s.pk, v), 0)) for v in s.values]) for s in scores]


def tags_by_session(session_ids: Iterable[str]) -> dict[str, list[Tag]]:
    """``{session id: [Tag, …]}`` of the tagged ones among ``session_ids`` (search hits)."""
    out: dict[str, list[Tag]] = defaultdict(list)
    tagged = (
        SessionTag.objects.filter(store=current_store(), session_id__in=list(session_ids))
        .select_related("tag")
        .order_by("tag__name", "tag_id")
    )
    for st in tagged:
        out[st.session_id].append(st.tag)
    return out


def for_sessions(session_ids: Iterable[str], user) -> dict[str, RowAnnotations]:
    """``{session id: RowAnnotations}`` for the annotated ones among ``session_ids``."""
    store = current_store()
    found = read([(store, sid) for sid in session_ids], user, None)[0]
    return {sid: row for (_store, sid), row in found.items()}


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


def tag_facets(store_keys: list[str] | None = None) -> list[tuple[Tag, int]]:
    """Every tag by name, with how many sessions of the current store (or of ``store_keys``)
    it is on."""
    return read((), None, store_keys or [current_store()])[1]


def views_for(user, visible) -> tuple[list[SavedView], list[SavedView]]:
    """(the user's own views, the views others share with the team), with ``owner_name``: a
    view of one profile (``/p/<profile>/…``) only for a user who may see that profile."""
    if user is None or not user.is_authenticated:
        return [], []
    names = {store.name for store in visible}
    rows = [
        view
        for view in SavedView.objects.filter(Q(owner=user) | Q(shared=True))
        .annotate(owner_name=F(f"owner__{user.USERNAME_FIELD}"))
        .order_by("name", "id")
        if not (scoped := PREFIX.match(view.url)) or scoped[1] in names
    ]
    own = [v for v in rows if v.owner_id == user.pk]
    shared = [v for v in rows if v.owner_id != user.pk]
    return own, shared
