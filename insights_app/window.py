"""Which sessions an insights report covers, and that choice as SQL over ``sessions s``.

Sessions with ``started_at >= now - days * 86400`` (no upper bound, as in Hermes), or all
sessions, or a custom range of local days in ``TIME_ZONE``; optionally one ``source`` and,
beyond Hermes, one ``model`` (the session's recorded model, short or full name, with the same
rule as the session list).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from hermes_explorer import store
from sessions_app.timefmt import day_end_epoch, day_start_epoch

DAY_SECONDS = 86_400
PRESET_DAYS = (7, 30, 90, 365)
DEFAULT_DAYS = 30


@dataclass(frozen=True)
class Window:
    """Which sessions a report covers.

    ``days`` (Hermes's ``--days``) unless a custom range is given; ``days=None`` without a
    range is all time.  Custom ranges are inclusive local days in ``TIME_ZONE``.
    """

    days: int | None = DEFAULT_DAYS
    start_day: dt.date | None = None
    end_day: dt.date | None = None
    source: str | None = None
    model: str | None = None
    # Exact epoch bounds ``[from_epoch, to_epoch)``, for the explorer's own comparisons (the
    # period before a "last N days" window); they take precedence over days and dates.
    from_epoch: float | None = None
    to_epoch: float | None = None

    @property
    def is_epoch(self) -> bool:
        return self.from_epoch is not None or self.to_epoch is not None

    @property
    def is_custom(self) -> bool:
        return not self.is_epoch and (self.start_day is not None or self.end_day is not None)

    @property
    def is_all_time(self) -> bool:
        return not self.is_epoch and not self.is_custom and self.days is None

    def bounds(self, now: float) -> tuple[float | None, float | None]:
        """Epoch bounds ``[lo, hi)`` of ``started_at``; None is unbounded."""
        if self.is_epoch:
            return self.from_epoch, self.to_epoch
        if self.is_custom:
            lo = day_start_epoch(self.start_day) if self.start_day else None
            hi = day_end_epoch(self.end_day) if self.end_day else None
            return lo, hi
        if self.days is None:
            return None, None
        return now - self.days * DAY_SECONDS, None

    @property
    def label(self) -> str:
        if self.is_epoch:
            return "Started in [{}, {})".format(
                "-inf" if self.from_epoch is None else self.from_epoch,
                "now" if self.to_epoch is None else self.to_epoch,
            )
        if self.is_custom:
            start = self.start_day.isoformat() if self.start_day else "the beginning"
            end = self.end_day.isoformat() if self.end_day else "today"
            return f"{start} to {end}"
        if self.days is None:
            return "All time"
        return f"Last {self.days} days"


@dataclass(frozen=True)
class Scope:
    """The window as SQL over ``sessions s``, plus what this file's shape offers."""

    shape: Any
    where: str
    params: tuple

    def scol(self, name: str, default: str = "0") -> str:
        """``s.<name>`` when the file has the column, else a neutral literal."""
        return f"s.{name}" if self.shape.has_column("sessions", name) else default

    def ucol(self, name: str, default: str = "0") -> str:
        return f"u.{name}" if self.shape.has_column("session_model_usage", name) else default

    def dcol(self, name: str, default: str = "0") -> str:
        return f"d.{name}" if self.shape.has_column("session_daily_usage", name) else default

    @property
    def has_usage(self) -> bool:
        return self.shape.has_model_usage

    @property
    def session_ids(self) -> str:
        return f"SELECT s.id FROM sessions s WHERE {self.where}"


def scope_of(window: Window, now: float) -> Scope:
    """The window as SQL, for the file open now."""
    shape = store.shape()
    clauses, params = [], []
    lo, hi = window.bounds(now)
    if lo is not None:
        clauses.append("s.started_at >= %s")
        params.append(lo)
    if hi is not None:
        clauses.append("s.started_at < %s")
        params.append(hi)
    if window.source:
        clauses.append("s.source = %s")
        params.append(window.source)
    if window.model:
        # Same rule as the session list: the full route, or anything ending in /<name>.
        escaped = window.model.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        clauses.append("(s.model = %s OR s.model LIKE %s ESCAPE '\\')")
        params += [window.model, "%/" + escaped]
    return Scope(shape=shape, where=" AND ".join(clauses) or "1", params=tuple(params))


def window_span(scope: Scope) -> tuple[int, float | None, float | None]:
    """Sessions in the window and their first/last start (for the zone's offsets)."""
    sql = (
        "SELECT COUNT(*), MIN(CASE WHEN s.started_at <> 0 THEN s.started_at END),"
        f" MAX(CASE WHEN s.started_at <> 0 THEN s.started_at END) FROM sessions s"
        f" WHERE {scope.where}"
    )
    n, lo, hi = store.rows(sql, scope.params)[0]
    return int(n or 0), lo, hi
