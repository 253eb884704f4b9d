"""The annotations of a page of sessions and the tag facet, read with the ORM.

For the page's rows: tags (one prefetch), the user's star (an ``Exists``) and note counts; and
every tag with how many sessions of the listed profiles carry it.  :func:`hit_tags`: the tags
of a search page's hits.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db.models import Count, Exists, OuterRef, Prefetch, Q

from .models import AnnotatedSession, Score, SessionScore, SessionTag, Star, Tag


@dataclass(frozen=True)
class TagChip:
    name: str
    colour: str
    description: str


@dataclass
class RowAnnotations:
    """What the session table and the exports show of one session."""

    tags: list[TagChip] = field(default_factory=list)
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


def tally(rows) -> dict[str, dict[str, int]]:
    """``{score name: {value: count}}`` of score rows (``score`` selected with them)."""
    out: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row in rows:
        out[row.score.name][row.value] += 1
    return {name: dict(values) for name, values in out.items()}


Key = tuple[str, str]


def _chip(tag: Tag) -> TagChip:
    return TagChip(tag.name, tag.colour, tag.description or "")


def read(
    keys: Iterable[Key] | None, user, facet_stores: list[str] | None
) -> tuple[dict[Key, RowAnnotations], list[tuple[Tag, int]]]:
    """``({(store key, session id): RowAnnotations}, [(tag, sessions of facet_stores)])``;
    None ``keys`` or ``facet_stores`` asks for no rows or no facet."""
    by_store: dict[str, list[str]] = defaultdict(list)
    for store, sid in keys or ():
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
            chips = [_chip(st.tag) for st in anchor.tags.all()]
            rows[(anchor.store, anchor.session_id)] = RowAnnotations(
                chips, anchor.starred, anchor.notes_count, tally(anchor.scores.all())
            )
    facets: list[tuple[Tag, int]] = []
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


def hit_tags(store: str, session_ids: list[str]) -> dict[str, list[TagChip]]:
    """``{session id: [TagChip, …]}`` of the tagged sessions of ``store`` in ``session_ids``."""
    out: dict[str, list[TagChip]] = defaultdict(list)
    tagged = (
        SessionTag.objects.filter(store=store, session_id__in=session_ids)
        .select_related("tag")
        .order_by("tag__name", "tag_id")
    )
    for st in tagged:
        out[st.session_id].append(_chip(st.tag))
    return out
