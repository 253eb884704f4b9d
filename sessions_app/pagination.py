"""Keyset pagination: a page starts right after the last row seen, which an index answers
however deep it is (``OFFSET`` walks every row before); the cursor is a signed URL token.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core import signing
from django.db.models import Q
from django.utils.translation import gettext

from hermes_explorer.paging import BadCursor, KeysetPage

__all__ = ["BadCursor", "Keyset", "KeysetPage"]
SALT = "sessions_app.pagination"


@dataclass(frozen=True)
class Keyset:
    """An ordering over non-NULL keys, the last unique: ``(("started_at", True), ("id",
    True))`` is "newest first, ties by id"."""

    keys: tuple[tuple[str, bool], ...]
    name: str = ""

    def order_by(self, reverse: bool = False) -> list[str]:
        return [("-" if desc != reverse else "") + name for name, desc in self.keys]

    def after(self, values: list, reverse: bool = False) -> Q:
        """Rows strictly after ``values`` in this order (before it when ``reverse``), as
        ``k1 <= v1 AND (k1 < v1 OR …)`` so SQLite gets an index range on the leading key."""
        return self._after(list(self.keys), list(values), reverse)

    def _after(self, keys, values, reverse) -> Q:
        (name, desc), value = keys[0], values[0]
        going_down = desc != reverse
        strict = Q(**{f"{name}__{'lt' if going_down else 'gt'}": value})
        if len(keys) == 1:
            return strict
        loose = Q(**{f"{name}__{'lte' if going_down else 'gte'}": value})
        tie = Q(**{name: value}) & self._after(keys[1:], values[1:], reverse)
        return loose & (strict | tie)

    def values_of(self, row) -> list:
        return [
            getattr(row, name) if not isinstance(row, dict) else row[name] for name, _ in self.keys
        ]

    # Cursors -------------------------------------------------------------------------------
    def encode(self, row, direction: str) -> str:
        payload = {"k": self.name, "d": direction, "v": self.values_of(row)}
        # Signed, in URL-safe characters only: a cursor reads the same in any link.
        return signing.Signer(salt=SALT, sep=".").sign_object(payload)

    def decode(self, token: str) -> tuple[str, list]:
        damaged = BadCursor(gettext("This page link is damaged; showing the first page."))
        try:
            payload = signing.Signer(salt=SALT, sep=".").unsign_object(token)
            direction, values = payload["d"], payload["v"]
        except (signing.BadSignature, KeyError, TypeError) as exc:
            raise damaged from exc
        if payload.get("k") != self.name or direction not in ("n", "p"):
            raise BadCursor(
                gettext("This page link belongs to another sort; showing the first page.")
            )
        shaped = isinstance(values, list) and len(values) == len(self.keys)
        if not shaped or any(isinstance(v, (dict, list)) for v in values):
            raise damaged
        return direction, values

    def paginate(self, queryset, token: str | None, per_page: int) -> KeysetPage:
        notes = []
        direction, values = "n", None
        if token:
            try:
                direction, values = self.decode(token)
            except BadCursor as exc:
                notes.append(str(exc))
        reverse = direction == "p"
        if values is not None:
            queryset = queryset.filter(self.after(values, reverse=reverse))
        rows = list(queryset.order_by(*self.order_by(reverse=reverse))[: per_page + 1])
        more = len(rows) > per_page
        rows = rows[:per_page]
        if reverse:
            rows.reverse()
        page = KeysetPage(rows=rows, per_page=per_page, notes=notes)
        if rows:
            if more or reverse:
                page.next_cursor = self.encode(rows[-1], "n")
            if more if reverse else values is not None:
                page.prev_cursor = self.encode(rows[0], "p")
        elif values is not None:
            # Past the end (a stale link): offer the way back.
            page.prev_cursor = token if reverse else None
        return page
