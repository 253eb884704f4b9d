"""Search over several profiles: each store searched with its own index, the hits merged.

Every store is searched as if alone (:func:`sessions_app.search.run_search`), then:

* **Newest first**: hits are merged by message time (ties: profile name); ``pos`` is one
  opaque cursor holding, per store, the id its next hits are below.
* **Best match**: scores of two FTS indexes cannot be compared, so page ``p`` takes each
  store's next ⌈20 / stores⌉ best matches and lists them round-robin, best rank first (same
  rank: newest first).  When one store cannot rank (a word too common there), no store is
  ranked; the largest store is asked first, as the likeliest to say so.

A store that fails is named in a note; the others are shown.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import math
import os
import sqlite3
from dataclasses import replace

from django.core import signing
from django.db import DatabaseError
from django.utils.translation import gettext

from hermes_explorer import stores as registry
from hermes_explorer.stores import Store
from sessions_app import search
from sessions_app.facets import distinct_values
from sessions_app.search import SearchRequest, SearchResult

DONE = 0
SALT = "sessions_app.search.merged"


def merged_choices(parts: list[Store]) -> list[tuple[str, str]]:
    """The sources of every store, for the search form's source filter."""
    found: set[str] = set()
    for store in parts:
        with contextlib.suppress(DatabaseError, sqlite3.Error), registry.using(store):
            found.update(distinct_values("source"))
    return [(s, s) for s in sorted(found)]


def decode_positions(token: str | None) -> dict[str, int] | None:
    if not token:
        return {}
    try:
        positions = signing.Signer(salt=SALT, sep=".").unsign_object(token)
    except signing.BadSignature:
        return None
    if not isinstance(positions, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**62
        for v in positions.values()
    ):
        return None
    return positions


def _search_one(store: Store, req: SearchRequest, result: SearchResult) -> SearchResult | None:
    try:
        with registry.using(store):
            found = search.run_search(req)
    except (DatabaseError, sqlite3.Error) as exc:
        reason = registry.REGISTRY.failed(store, exc).reason
        _note(result, registry.unavailable_note(store, reason))
        return None
    for hit in found.hits + found.unindexed_hits:
        hit.store = store
    return found


def _note(result: SearchResult, note: str) -> None:
    if note not in result.notes:
        result.notes.append(note)


def _store_notes(result: SearchResult, store: Store, found: SearchResult, many: bool) -> None:
    for note in found.notes:
        _note(result, f"{store.name}: {note}" if many else note)


def _gather(result: SearchResult, store: Store, found: SearchResult, many: bool) -> None:
    """Notes, errors and index hits of one store into the merged result."""
    if found.engine and not result.engine:
        result.engine = found.engine
    _store_notes(result, store, found, many)
    if found.error and not result.error:
        result.error = found.error
    result.timed_out = result.timed_out or found.timed_out
    result.unindexed_hits += found.unindexed_hits


def merged_search(req: SearchRequest, parts: list[Store], pos: str | None) -> SearchResult:
    result = SearchResult(request=req, sort=req.sort)
    many = len(parts) > 1
    if req.sort == "newest" or pos:
        return _newest(req, parts, pos, result, many)
    share = max(1, math.ceil(req.per_page / max(1, len(parts))))
    columns: list[list] = []
    more = False
    for store in sorted(parts, key=_size, reverse=True):
        found = _search_one(store, replace(req, per_page=share), result)
        if found is None:
            continue
        _gather(result, store, found, many)
        if found.sort != "rank":
            # A store could not rank in time, so no store is ranked: newest first for all (and
            # why this store could not is why none is).
            fell_back = SearchResult(request=req, sort="newest")
            _store_notes(fell_back, store, found, many)
            return _newest(replace(req, sort="newest", page=1), parts, None, fell_back, many)
        columns.append(found.hits)
        more = more or bool(found.next_page or found.next_before)
    result.sort = "rank"
    for tier in itertools.zip_longest(*columns):
        result.hits += sorted(filter(None, tier), key=lambda h: (-(h.timestamp or 0), h.store.name))
    if more and req.page * share < search.RANKED_CAP:
        result.next_page = req.page + 1
    return result


def _size(store: Store) -> int:
    try:
        return os.path.getsize(store.path)
    except OSError:
        return 0


def _newest(req, parts, pos, result: SearchResult, many: bool) -> SearchResult:
    """Newest first over every store, a position per store in ``pos``."""
    result.sort = "newest"
    positions = decode_positions(pos)
    if positions is None:
        result.notes.append(gettext("This page link is damaged; showing the newest hits."))
        positions = {}
    req = replace(req, sort="newest", page=1)
    lists = []
    further: dict[str, int | None] = {}
    for store in parts:
        below = positions.get(store.name)
        if below == DONE:
            continue
        found = _search_one(store, replace(req, before=below), result)
        if found is None:
            continue
        _gather(result, store, found, many)
        further[store.name] = found.next_before
        lists.append([(hit, store) for hit in found.hits])
    # A merge of the stores' heads: each store's own order (by id) is kept.
    candidates = list(heapq.merge(*lists, key=lambda c: (-(c[0].timestamp or 0), c[1].name)))
    taken = candidates[: req.per_page]
    result.hits = [hit for hit, _store in taken]
    following = dict(positions)
    last_taken = {store.name: hit.id for hit, store in taken}
    leftover = {store.name for _hit, store in candidates[len(taken) :]}
    for name, beyond in further.items():
        if name not in leftover:
            # Every hit of this store was shown: it goes on below its page, or is done.
            following[name] = beyond or DONE
        elif name in last_taken:
            following[name] = last_taken[name]
    more = bool(leftover) or any(further[n] for n in further if n not in leftover)
    result.next_pos = signing.Signer(salt=SALT, sep=".").sign_object(following) if more else None
    return result
