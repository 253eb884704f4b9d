"""The annotations of a page of sessions and the tag facet, read in one statement.

A list page shows, for its rows, the tags, the user's star and the note count, and beside them
every tag with the number of sessions it is on.  Asked separately, that is up to four round
trips to the app database per page (the annotated rows, their tags, the user's stars, the
facet); on PostgreSQL each is a trip over the network.  Here both are one statement of two
scalar subqueries, each giving its rows as one JSON array:

    SELECT (every tag with its count, as JSON), (the page's annotated rows, as JSON)

Each annotated row carries its tags (ordered by name) and whether the user starred it.  Either
part is left out when it is not wanted; neither wanted, no statement.  On PostgreSQL the
statement's text depends only on the number of profiles (the ids go in as one array), so it is
prepared once per connection (``prepared_cursor``, as the signed-in session's read is).  The
database orders the tags on PostgreSQL (its collation, as ``ORDER BY name`` does); SQLite
before 3.44 cannot order inside an aggregate, so they are sorted here by code point, which is
SQLite's own order of text.

:func:`hit_tags`: the tags of a search page's hits, one statement, prepared the same way.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db import connections, router

from hermes_explorer.app_pg import cursor_for

from .models import AnnotatedSession, SessionTag, Star, Tag


@dataclass(frozen=True)
class TagChip:
    """What a tag badge shows."""

    name: str
    colour: str
    description: str


@dataclass
class RowAnnotations:
    """What the session table and the exports show of one session."""

    tags: list[TagChip] = field(default_factory=list)
    starred: bool = False
    notes_count: int = 0

    @property
    def tag_names(self) -> str:
        return ", ".join(t.name for t in self.tags)


Key = tuple[str, str]


@dataclass(frozen=True)
class _Dialect:
    """How one database writes the JSON aggregates and a list parameter."""

    array: str  # a JSON array of the arguments
    agg: str  # the rows' JSON arrays as one array (text), ordered by {order} where it can
    inner_agg: str  # the same, as JSON kept inside another array
    nested: str  # a subquery's JSON array, as an element of another
    orders: bool  # whether the aggregates order
    arrays: bool  # whether a list goes in as one array parameter (the text stays the same)

    def many(self, values) -> tuple[str, list]:
        """The condition "is one of ``values``" (after the column) and its parameters."""
        if self.arrays:
            return "= ANY(%s)", [list(values)]
        return f"IN ({', '.join(['%s'] * len(values))})", list(values)


POSTGRES = _Dialect(
    array="json_build_array({})",
    agg="CAST(json_agg({value} ORDER BY {order}) AS text)",
    inner_agg="json_agg({value} ORDER BY {order})",
    nested="({})",
    orders=True,
    arrays=True,
)
SQLITE = _Dialect(
    array="json_array({})",
    agg="json_group_array({value})",
    inner_agg="json_group_array({value})",
    nested="json({})",
    orders=False,
    arrays=False,
)


def _dialect(connection) -> _Dialect:
    return POSTGRES if connection.vendor == "postgresql" else SQLITE


def _facets_sql(d: _Dialect, stores: list[str]) -> tuple[str, list]:
    tag, tagged = Tag._meta.db_table, SessionTag._meta.db_table
    among, params = d.many(stores)
    # A correlated count per tag on the (tag, store, …) index: no join, no sort.
    uses = f"(SELECT COUNT(*) FROM {tagged} st WHERE st.tag_id = t.id AND st.store {among})"
    value = d.array.format(f"t.id, t.name, t.colour, t.description, {uses}")
    return f"(SELECT {d.agg.format(value=value, order='t.name')} FROM {tag} t)", params


def _rows_sql(d: _Dialect, by_store: dict[str, list[str]], user_id) -> tuple[str, list]:
    tag, tagged = Tag._meta.db_table, SessionTag._meta.db_table
    anchors, stars = AnnotatedSession._meta.db_table, Star._meta.db_table
    chip = d.array.format("t.name, t.colour, t.description")
    tags = d.nested.format(
        f"(SELECT {d.inner_agg.format(value=chip, order='t.name')} FROM {tagged} st "
        f"JOIN {tag} t ON t.id = st.tag_id WHERE st.target_id = a.id)"
    )
    starred = f"EXISTS(SELECT 1 FROM {stars} s WHERE s.target_id = a.id AND s.user_id = %s)"
    value = d.array.format(f"a.store, a.session_id, a.notes_count, {tags}, {starred}")
    params: list = [user_id]
    where = []
    for store, ids in by_store.items():
        among, more = d.many(ids)
        where.append(f"(a.store = %s AND a.session_id {among})")
        params += [store, *more]
    sql = (
        f"(SELECT {d.agg.format(value=value, order='a.id')} FROM {anchors} a "
        f"WHERE {' OR '.join(where)})"
    )
    return sql, params


def read(
    keys: Iterable[Key] | None, user, facet_stores: list[str] | None
) -> tuple[dict[Key, RowAnnotations], list[tuple[Tag, int]]]:
    """``({(store key, session id): RowAnnotations} of the annotated ones among keys,
    [(tag, sessions of facet_stores it is on)] ordered by name)``; ``keys`` None: no rows
    asked, ``facet_stores`` None: no facet asked."""
    by_store: dict[str, list[str]] = {}
    for store, sid in keys or ():
        by_store.setdefault(store, []).append(sid)
    if not by_store and facet_stores is None:
        return {}, []
    connection = connections[router.db_for_read(AnnotatedSession)]
    d = _dialect(connection)
    parts, params = [], []
    if facet_stores is not None:
        sql, more = _facets_sql(d, facet_stores)
        parts.append(sql)
        params += more
    if by_store:
        user_id = user.pk if user is not None and user.is_authenticated else None
        sql, more = _rows_sql(d, by_store, user_id)
        parts.append(sql)
        params += more
    with cursor_for(connection) as cursor:
        cursor.execute(f"SELECT {', '.join(parts)}", params)
        found = list(cursor.fetchone())
    facets = _facets(found.pop(0), d.orders) if facet_stores is not None else []
    rows = _rows(found.pop(0), d.orders) if by_store else {}
    return rows, facets


def hit_tags(store: str, session_ids: list[str]) -> dict[str, list[TagChip]]:
    """``{session id: [TagChip, …] ordered by name}`` of the sessions of ``store`` among
    ``session_ids`` (the hits of a search page) that carry tags, in one statement (on every
    results page: plain SQL, the ORM's compiling cost more than the query)."""
    connection = connections[router.db_for_read(SessionTag)]
    among, params = _dialect(connection).many(session_ids)
    out: dict[str, list[TagChip]] = defaultdict(list)
    with cursor_for(connection) as cursor:
        cursor.execute(
            f"SELECT st.session_id, t.name, t.colour, t.description "
            f"FROM {SessionTag._meta.db_table} st JOIN {Tag._meta.db_table} t ON t.id = st.tag_id "
            f"WHERE st.store = %s AND st.session_id {among} ORDER BY t.name, t.id",
            [store, *params],
        )
        for session_id, name, colour, description in cursor.fetchall():
            out[session_id].append(TagChip(name, colour, description or ""))
    return out


def _facets(text: str | None, ordered: bool) -> list[tuple[Tag, int]]:
    out = [
        (Tag(id=pk, name=name, colour=colour, description=description), uses)
        for pk, name, colour, description, uses in json.loads(text or "[]")
    ]
    if not ordered:
        out.sort(key=lambda found: found[0].name)
    return out


def _rows(text: str | None, ordered: bool) -> dict[Key, RowAnnotations]:
    out: dict[Key, RowAnnotations] = {}
    for store, session_id, notes, tags, starred in json.loads(text or "[]"):
        chips = [
            TagChip(name, colour, description or "") for name, colour, description in tags or ()
        ]
        if not ordered:
            chips.sort(key=lambda chip: chip.name)
        out[(store, session_id)] = RowAnnotations(chips, bool(starred), notes)
    return out
