"""Keyset pages across several stores: one opaque cursor carrying a position per store.

Each store gives at most ``n + 1`` rows after its own position (never ``OFFSET``), the
candidates are merged in the list's order (ties broken by profile name) and the first ``n``
make the page, so a deep page costs what a first page costs.

A position is ``[values, inclusive]``, ``0`` when a store has nothing on that side, absent
when the store starts from its first row.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
from collections.abc import Callable, Sequence
from typing import Protocol

from django.db.models import Q
from django.utils.translation import gettext

from hermes_explorer import stores as registry
from hermes_explorer.paging import BadCursor, KeysetPage
from hermes_explorer.stores import Store

NOTHING = 0


class KeysetLike(Protocol):
    """What a list's ordering gives (:class:`sessions_app.pagination.Keyset` does)."""

    keys: tuple[tuple[str, bool], ...]
    name: str

    def after(self, values: list, reverse: bool = False) -> Q: ...

    def values_of(self, row) -> list: ...


def _bound(keyset: KeysetLike, position, forward: bool) -> Q:
    """Rows on the far side of ``position`` going ``forward``."""
    values, inclusive = position
    beyond = keyset.after(values, reverse=not forward)
    if inclusive:
        beyond |= Q(**dict(zip((k for k, _ in keyset.keys), values, strict=True)))
    return beyond


def _compare(keyset: KeysetLike) -> Callable:
    def compare(a, b) -> int:
        for (_name, desc), x, y in zip(keyset.keys, a[0], b[0], strict=True):
            if x == y:
                continue
            # NULL keys sort first, as SQLite sorts them ascending.
            less = x is None if x is None or y is None else x < y
            return (-1 if less else 1) * (-1 if desc else 1)
        return (a[1] > b[1]) - (a[1] < b[1])

    return compare


def encode(keyset: KeysetLike, direction: str, positions: dict[str, object]) -> str:
    payload = {"k": keyset.name, "d": direction, "s": positions}
    raw = json.dumps(payload, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(keyset: KeysetLike, token: str) -> tuple[str, dict]:
    damaged = gettext("This page link is damaged; showing the first page.")
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        payload = json.loads(raw)
        direction, positions = payload["d"], payload["s"]
    except (ValueError, KeyError, TypeError, binascii.Error) as exc:
        raise BadCursor(damaged) from exc
    if payload.get("k") != keyset.name or direction not in ("n", "p"):
        raise BadCursor(gettext("This page link belongs to another sort; showing the first page."))
    if not isinstance(positions, dict):
        raise BadCursor(damaged)
    for position in positions.values():
        if position == NOTHING:
            continue
        if (
            not isinstance(position, list)
            or len(position) != 2
            or not isinstance(position[0], list)
            or len(position[0]) != len(keyset.keys)
            or any(v is None or isinstance(v, (dict, list)) for v in position[0])
        ):
            raise BadCursor(damaged)
        position[1] = bool(position[1])
    return direction, positions


def paginate(
    keyset: KeysetLike,
    parts: Sequence[Store],
    fetch: Callable[[Store, Q | None, bool, int], list],
    token: str | None,
    per_page: int,
    load: Callable[[Store, list], list] | None = None,
) -> KeysetPage:
    """A page of ``per_page`` rows merged over ``parts``; rows get a ``store`` attribute.

    ``fetch(store, bound, forward, limit)``: at most ``limit`` rows of ``store`` past ``bound``
    (a Q, or None), in the list's order or its reverse.  ``load(store, rows)``: the page's rows
    as shown, in the same order (a row gone meanwhile is left out)."""
    notes: list[str] = []
    direction, positions = "n", {}
    if token:
        try:
            direction, positions = decode(keyset, token)
        except BadCursor as exc:
            notes.append(str(exc))
    forward = direction == "n"
    candidates = []
    for store in parts:
        position = positions.get(store.name)
        if position == NOTHING:
            continue
        bound = None if position is None else _bound(keyset, position, forward)
        with registry.using(store):
            rows = fetch(store, bound, forward, per_page + 1)
        for row in rows:
            row.store = store
            candidates.append((keyset.values_of(row), store.name, row))
    order = functools.cmp_to_key(_compare(keyset))
    candidates.sort(key=lambda c: order(c[:2]), reverse=not forward)
    taken = candidates[:per_page]
    more = len(candidates) > per_page
    if not forward:
        taken.reverse()
    rows = [row for _values, _name, row in taken]
    if load is not None:
        rows = _loaded(rows, load)
    page = KeysetPage(rows=rows, per_page=per_page, notes=notes)
    if not rows:
        # Past the end (a stale link): offer the way back.
        if token:
            other = _without_absent({s.name: _flip(positions.get(s.name)) for s in parts})
            if forward:
                page.prev_cursor = encode(keyset, "p", other)
            else:
                page.next_cursor = encode(keyset, "n", other)
        return page
    first: dict[str, list] = {}
    last: dict[str, list] = {}
    for values, name, _row in taken:
        first.setdefault(name, values)
        last[name] = values
    following: dict[str, object] = {}
    preceding: dict[str, object] = {}
    for store in parts:
        name = store.name
        if name in last:
            following[name] = [last[name], False]
            preceding[name] = [first[name], False]
            continue
        # No row of this store on the page: its cut is the same on both sides of the page.
        position = positions.get(name)
        if forward:
            following[name], preceding[name] = position, _flip(position)
        else:
            following[name], preceding[name] = _flip(position), position
    if more or not forward:
        page.next_cursor = encode(keyset, "n", _without_absent(following))
    if (token and positions) if forward else more:
        page.prev_cursor = encode(keyset, "p", _without_absent(preceding))
    return page


def _loaded(rows: list, load: Callable[[Store, list], list]) -> list:
    """``rows`` replaced by what ``load`` gives for them, one call per store, order kept."""

    def fill(store: Store, chunk: list) -> list:
        found = load(store, chunk)
        for row in found:
            if row is not None:
                row.store = store
        return found

    return [row for row in registry.per_store(rows, fill) if row is not None]


def _flip(position):
    """The same cut seen from the other direction."""
    if position is None:
        return NOTHING
    if position == NOTHING:
        return None
    values, inclusive = position
    return [values, not inclusive]


def _without_absent(positions: dict) -> dict:
    return {name: p for name, p in positions.items() if p is not None}
