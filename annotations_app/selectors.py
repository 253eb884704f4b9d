"""Reading annotations: for one session, for a page of rows, and the tag facet."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import connections, router
from django.db.models import Exists, F, Q, Subquery, TextField
from django.db.models.functions import JSONObject

from . import page_read
from .models import AnnotatedSession, Note, SavedView, Tag
from .page_read import RowAnnotations, TagChip
from .targets import current_store

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

    One statement at most (none when the session read found no annotated session)."""
    store = current_store()
    found = for_keys([(store, sid) for sid in session_ids], user)
    return {sid: row for (_store, sid), row in found.items()}


def for_keys(keys: Iterable[tuple[str, str]], user) -> dict[tuple[str, str], RowAnnotations]:
    """``{(store key, session id): RowAnnotations}`` for the annotated ones among ``keys``:
    the rows of a page over several profiles in one statement, as one profile's
    (none when the session read found no annotated session at all)."""
    return page_annotations(keys, user, None)[0]


def page_annotations(
    keys: Iterable[tuple[str, str]], user, facet_stores: list[str] | None
) -> tuple[dict[tuple[str, str], RowAnnotations], list[tuple[Tag, int]] | None]:
    """The annotations of a page's rows (:func:`for_keys`) and, with ``facet_stores``, the tag
    facet of those stores (:func:`tag_facets`; else None), in one statement at most."""
    rows_wanted = not _known_none(user, ANNOTATED_READ_WITH_SESSION)
    facets_wanted = facet_stores is not None and not _known_none(user, TAGS_READ_WITH_SESSION)
    rows, facets = page_read.read(
        keys if rows_wanted else None, user, facet_stores if facets_wanted else None
    )
    return rows, (facets if facet_stores is not None else None)


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
    ``store_keys``: a list over several profiles) it is on, ordered by name; no query when the
    session of ``user`` was read with the news that there is no tag."""
    return page_annotations((), user, store_keys or [current_store()])[1]


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


def tags_by_session(session_ids: Iterable[str], user=None) -> dict[str, list[TagChip]]:
    """Tags only (search hits): one statement (:func:`page_read.hit_tags`); none when the
    session of ``user`` was read with the news that there is no tag or no annotated session."""
    ids = list(set(session_ids))
    if not ids or _known_none(user, TAGS_READ_WITH_SESSION, ANNOTATED_READ_WITH_SESSION):
        return defaultdict(list)
    return page_read.hit_tags(current_store(), ids)
