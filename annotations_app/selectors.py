"""Reading annotations: for one session, for a page of rows, and the tag facet."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db import connections, router
from django.db.models import Exists, F, Q, Subquery, TextField
from django.db.models.functions import JSONObject

from .models import AnnotatedSession, Note, SavedView, SessionTag, Star, Tag
from .targets import current_store


@dataclass
class RowAnnotations:
    """What the session table and the exports show of one session."""

    tags: list[Tag] = field(default_factory=list)
    starred: bool = False
    notes_count: int = 0

    @property
    def tag_names(self) -> str:
        return ", ".join(t.name for t in self.tags)


NONE = RowAnnotations()

# Whether the team has any tag, and any annotated session, read with the request's session in
# the same statement (settings.SESSION_USER_READS): the list and search pages of a team that
# annotates nothing skip the statements that could only find nothing.  Read afresh with every
# request, never cached, so a tag set through another instance shows on the very next page.
TAGS_READ_WITH_SESSION = "any_tag_defined"
ANNOTATED_READ_WITH_SESSION = "any_session_annotated"


def any_tag_defined(user_id) -> Exists:
    """Whether any tag exists, as a query expression read with the session."""
    return Exists(Tag.objects.order_by())


def any_session_annotated(user_id) -> Exists:
    """Whether any session of any store carries (or carried) an annotation, as a query
    expression read with the session."""
    return Exists(AnnotatedSession.objects.order_by())


def _known_none(user, *names: str) -> bool:
    """Whether the request's session read found no row of one of ``names``' kinds (never when
    the user was not read with a session, e.g. signed in with an API token)."""
    for name in names:
        value = getattr(user, name, None) if user is not None else None
        if value is not None and not value:
            return True
    return False


def for_sessions(session_ids: Iterable[str], user) -> dict[str, RowAnnotations]:
    """``{session id: RowAnnotations}`` for the annotated ones among ``session_ids``.

    One query when none is annotated (most pages), three otherwise."""
    store = current_store()
    found = for_keys([(store, sid) for sid in session_ids], user)
    return {sid: row for (_store, sid), row in found.items()}


def for_keys(keys: Iterable[tuple[str, str]], user) -> dict[tuple[str, str], RowAnnotations]:
    """``{(store key, session id): RowAnnotations}`` for the annotated ones among ``keys``:
    the rows of a page over several profiles in the same three queries as one profile's
    (none when the session read found no annotated session at all)."""
    if _known_none(user, ANNOTATED_READ_WITH_SESSION):
        return {}
    by_store: dict[str, list[str]] = {}
    for store, sid in keys:
        by_store.setdefault(store, []).append(sid)
    if not by_store:
        return {}
    where = Q()
    for store, ids in by_store.items():
        where |= Q(store=store, session_id__in=ids)
    rows = AnnotatedSession.objects.filter(where)
    targets: dict[int, tuple[str, str]] = {}
    out: dict[tuple[str, str], RowAnnotations] = {}
    for pk, store, session_id, notes in rows.values_list(
        "pk", "store", "session_id", "notes_count"
    ):
        targets[pk] = (store, session_id)
        out[(store, session_id)] = RowAnnotations(notes_count=notes)
    if not targets:
        return {}
    for row in (
        SessionTag.objects.filter(target_id__in=targets).select_related("tag").order_by("tag__name")
    ):
        out[targets[row.target_id]].tags.append(row.tag)
    if user is not None and user.is_authenticated:
        for pk in Star.objects.filter(target_id__in=targets, user=user).values_list(
            "target_id", flat=True
        ):
            out[targets[pk]].starred = True
    return out


def transcript_fields(request, session_id: str) -> dict:
    """``tags``, ``starred``, ``notes_count`` of one session, as the exports name them."""
    found = for_sessions([session_id], request.user).get(session_id, NONE)
    return {"tags": found.tag_names, "starred": found.starred, "notes_count": found.notes_count}


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


def all_tags() -> list[Tag]:
    return list(Tag.objects.all())


def tag_facets(store_keys: list[str] | None = None, user=None) -> list[tuple[Tag, int]]:
    """Every tag with the number of sessions of the current store (or of the stores of
    ``store_keys``: a list over several profiles) it is on; no query when the session of
    ``user`` was read with the news that there is no tag."""
    if _known_none(user, TAGS_READ_WITH_SESSION):
        return []
    # A correlated count per tag on the (tag, store, …) index: one query, no join, no sort;
    # written as SQL because the ORM's Subquery + Coalesce cost more to compile than to run.
    tag, tagged = Tag._meta.db_table, SessionTag._meta.db_table
    keys = store_keys if store_keys else [current_store()]
    marks = ", ".join(["%s"] * len(keys))
    tags = Tag.objects.raw(
        f"SELECT t.id, t.name, t.colour, t.description, t.created_at, "
        f"(SELECT COUNT(*) FROM {tagged} st WHERE st.tag_id = t.id AND st.store IN ({marks}))"
        f" AS uses FROM {tag} t ORDER BY t.name",
        keys,
    )
    return [(tag, tag.uses) for tag in tags]


def views_for(user) -> tuple[list[SavedView], list[SavedView]]:
    """(the user's own views, the views others share with the team)."""
    if user is None or not user.is_authenticated:
        return [], []
    if hasattr(user, VIEWS_READ_WITH_SESSION):
        rows = _links(getattr(user, VIEWS_READ_WITH_SESSION))
    else:
        rows = _view_links(user)
    own = [v for v in rows if v.owner_id == user.pk]
    shared = [v for v in rows if v.owner_id != user.pk]
    return own, shared


def _view_links(user) -> list[SavedViewLink]:
    # On every page (the navigation): plain SQL, the ORM's compiling cost more than the query.
    users = user._meta
    with connections[router.db_for_read(SavedView)].cursor() as cur:
        cur.execute(
            f"SELECT v.id, v.name, v.url, v.shared, v.owner_id, u.{users.get_field(user.USERNAME_FIELD).column} "
            f"FROM {SavedView._meta.db_table} v JOIN {users.db_table} u ON u.id = v.owner_id "
            "WHERE v.owner_id = %s OR v.shared ORDER BY v.name, v.id",
            [user.pk],
        )
        return [SavedViewLink(*row) for row in cur.fetchall()]


# The user's attribute that holds the views of the navigation when they were read with the
# session (settings.SESSION_USER_READS): a JSON array, or None for no view at all.
VIEWS_READ_WITH_SESSION = "saved_view_links"


class _JSONArray(Subquery):
    """The ``j`` column of a subquery's rows as one JSON array (text), ordered as its ``name``
    then ``id`` (SQLite before 3.44 cannot order inside an aggregate: :func:`_links` sorts)."""

    template = "(SELECT CAST(json_agg(r.j ORDER BY r.name, r.id) AS text) FROM (%(subquery)s) r)"

    def as_sqlite(self, compiler, connection, **extra):
        extra["template"] = "(SELECT json_group_array(json(r.j)) FROM (%(subquery)s) r)"
        return self.as_sql(compiler, connection, **extra)


def views_with_session(user_id) -> _JSONArray:
    """The views of the navigation of the user of ``user_id`` (an OuterRef), as a query
    expression read with the session: the same rows as :func:`_view_links`."""
    from django.contrib.auth import get_user_model

    username = get_user_model().USERNAME_FIELD
    rows = (
        SavedView.objects.filter(Q(owner_id=user_id) | Q(shared=True))
        .order_by()
        .values(
            "name",
            "id",
            j=JSONObject(
                id="id",
                name="name",
                url="url",
                shared="shared",
                owner_id="owner_id",
                owner_name=F(f"owner__{username}"),
            ),
        )
    )
    return _JSONArray(rows, output_field=TextField())


def _links(text: str | None) -> list[SavedViewLink]:
    rows = [
        SavedViewLink(
            r["id"], r["name"], r["url"], bool(r["shared"]), r["owner_id"], r["owner_name"]
        )
        for r in json.loads(text or "[]")
    ]
    if connections[router.db_for_read(SavedView)].vendor == "sqlite":
        rows.sort(key=lambda v: (v.name, v.pk))  # SQLite's order of text: by code point
    return rows


@dataclass(frozen=True)
class SavedViewLink:
    pk: int
    name: str
    url: str
    shared: bool
    owner_id: int
    owner_name: str


@dataclass(frozen=True)
class TagChip:
    """What a tag badge shows."""

    name: str
    colour: str
    description: str


def tags_by_session(session_ids: Iterable[str], user=None) -> dict[str, list[TagChip]]:
    """Tags only (search hits): one query, in plain SQL (on every results page, the ORM's
    compiling cost more than the query; measured); none when the session of ``user`` was read
    with the news that there is no tag or no annotated session."""
    out: dict[str, list[TagChip]] = defaultdict(list)
    ids = list(set(session_ids))
    if not ids or _known_none(user, TAGS_READ_WITH_SESSION, ANNOTATED_READ_WITH_SESSION):
        return out
    marks = ", ".join(["%s"] * len(ids))
    with connections[router.db_for_read(SessionTag)].cursor() as cur:
        cur.execute(
            f"SELECT st.session_id, t.name, t.colour, t.description "
            f"FROM {SessionTag._meta.db_table} st JOIN {Tag._meta.db_table} t ON t.id = st.tag_id "
            f"WHERE st.store = %s AND st.session_id IN ({marks}) ORDER BY t.name, t.id",
            [current_store(), *ids],
        )
        for session_id, name, colour, description in cur.fetchall():
            out[session_id].append(TagChip(name, colour, description or ""))
    return out
