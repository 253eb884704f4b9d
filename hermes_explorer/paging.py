"""What a page of a keyset-paged list is, whichever list makes it: one store's
(:mod:`sessions_app.pagination`) or several stores' merged (:mod:`profiles_app.merge`)."""

from __future__ import annotations

from dataclasses import dataclass, field


class BadCursor(ValueError):
    """A ``?cursor=`` this app did not make, or made for another sort."""


@dataclass
class KeysetPage:
    rows: list
    next_cursor: str | None = None
    prev_cursor: str | None = None
    per_page: int = 50
    notes: list[str] = field(default_factory=list)

    @property
    def is_first(self) -> bool:
        return self.prev_cursor is None
