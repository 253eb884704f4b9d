"""Which sessions an insights report covers, as SQL over ``sessions s``: ``started_at >= now -
days * 86400`` (no upper bound, as in Hermes), all sessions, or a custom range of local days;
one ``source`` and, beyond Hermes, one ``model`` (by the session list's rule)."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from django.utils.translation import gettext, ngettext

from hermes_explorer import dialect, store
from sessions_app.formatting import date_text
from sessions_app.timefmt import day_end_epoch, day_start_epoch

DAY_SECONDS = 86_400
# A window of at most this many sessions is read in one statement even on a rollback-journal
# file: the pass over the window costs some 50 microseconds a session.
SHORT_WINDOW_SESSIONS = 500
PRESET_DAYS = (7, 30, 90, 365)
DEFAULT_DAYS = 30


@dataclass(frozen=True)
class Window:
    """Which sessions a report covers: ``days`` (Hermes's ``--days``; None is all time), or a
    custom range of inclusive local days."""

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

    @property
    def display_label(self) -> str:
        """:attr:`label` in the page's language (the report's JSON keeps ``label``)."""
        if self.is_epoch:
            return self.label
        if self.is_custom:
            start = date_text(self.start_day) if self.start_day else gettext("the beginning")
            end = date_text(self.end_day) if self.end_day else gettext("today")
            return gettext("%(start)s to %(end)s") % {"start": start, "end": end}
        if self.days is None:
            return gettext("All time")
        return last_days(self.days)


def last_days(days: int) -> str:
    return ngettext("Last %(n)s day", "Last %(n)s days", days) % {"n": days}


@dataclass(frozen=True)
class Scope:
    """The window as SQL over ``sessions s``, plus what this file's shape offers."""

    shape: Any
    where: str
    params: tuple
    by_start: bool = False  # the window bounds ``started_at`` (its index finds the sessions)
    sessions: int | None = None  # how many sessions the window holds, once counted
    # A small share of the file's sessions (:func:`window_span`): found by an index.
    narrow: bool = False

    @property
    def read_in_chunks(self) -> bool:
        """Whether reads over the window are cut into short statements (a big window of a
        rollback-journal file)."""
        return (
            self.sessions is None or self.sessions > SHORT_WINDOW_SESSIONS
        ) and store.readers_block_writer()

    def scol(self, name: str, default: str = "0") -> str:
        return f"s.{name}" if self.shape.has_column("sessions", name) else default

    def ucol(self, name: str, default: str = "0") -> str:
        return f"u.{name}" if self.shape.has_column("session_model_usage", name) else default

    def dcol(self, name: str, default: str = "0") -> str:
        return f"d.{name}" if self.shape.has_column("session_daily_usage", name) else default

    @property
    def has_usage(self) -> bool:
        return self.shape.has_table("session_model_usage")

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
    return Scope(
        shape=shape,
        where=" AND ".join(clauses) or "1 = 1",
        params=tuple(params),
        by_start=lo is not None or hi is not None,
    )


def instant(column: str) -> str:
    """SQL for ``column`` (a start time) when it is an instant, else NULL: a start of 0, or
    stored as text, is no date (nor comparable to one)."""
    return f"CASE WHEN {dialect.stored_number(column)} AND {column} <> 0 THEN {column} END"


# A window holding less than this share of the file's sessions is narrow: read by the index
# rather than the whole table (measured on 40,000 sessions: 4.5% took 61 ms by the index
# against 76 ms by the table, 23% took 229 against 202 ms).
NARROW_SHARE = 1 / 8


def window_span(scope: Scope) -> tuple[Scope, float | None, float | None]:
    """``scope`` with its sessions counted (and whether a narrow share), and their first and
    last start that is an instant (for the zone's offsets)."""
    start = instant("s.started_at")
    sql = (
        f"SELECT COUNT(*), MIN({start}), MAX({start}),"
        f" {dialect.highest_rowid('sessions')}"
        f" FROM sessions s WHERE {scope.where}"
    )
    n, lo, hi, top = store.rows(sql, scope.params)[0]
    n = int(n or 0)
    narrow = scope.by_start and bool(n) and bool(top) and n < top * NARROW_SHARE
    return replace(scope, sessions=n, narrow=narrow), lo, hi


# Sessions in the first chunk on a rollback-journal file, and at most in any (the clock sizes
# the chunks between).
WINDOW_FIRST_CHUNK = 500
WINDOW_MAX_CHUNK = 5_000


def window_chunks(scope: Scope, columns: str, *, join: str = "") -> Iterator[list[tuple]]:
    """``SELECT <columns> FROM sessions s <join> WHERE <window>`` in lists of rows (one per
    session with a ``join``); unless :attr:`Scope.read_in_chunks`, one statement; else short
    keyset chunks, a grouped one in two statements (grouping on the keyset would sort the
    whole window)."""
    grouped = bool(join)
    if not scope.read_in_chunks:
        group = " GROUP BY s.id" if grouped else ""
        yield store.rows(
            f"SELECT {columns} FROM sessions s {join} WHERE {scope.where}{group}", scope.params
        )
        return
    keys = ("s.started_at", "s.rowid") if scope.by_start else ("s.rowid",)
    order = ", ".join(keys)
    width = len(keys)
    after = " AND (s.started_at, s.rowid) > (%s, %s)" if scope.by_start else " AND s.rowid > %s"
    picked = "s.rowid" if grouped else columns
    by_rowid = (
        f"SELECT {columns} FROM sessions s {join}"
        " WHERE s.rowid IN (SELECT value FROM json_each(%s)) GROUP BY s.rowid"
    )

    def chunk(n: int, last: list | None) -> tuple[list, int, list[tuple]] | None:
        """(keys of the chunk's last session, sessions in it, its rows), or None at the end."""
        sql = f"SELECT {order}, {picked} FROM sessions s WHERE ({scope.where})"
        params = list(scope.params)
        if last is not None:
            sql += after
            params += last
        found = store.rows(sql + f" ORDER BY {order} LIMIT %s", [*params, n])
        if not found:
            return None
        if grouped:
            rows = store.rows(by_rowid, [json.dumps([row[width] for row in found])])
        else:
            rows = [row[width:] for row in found]
        return list(found[-1][:width]), len(found), rows

    clock = store.ChunkClock(WINDOW_FIRST_CHUNK, maximum=WINDOW_MAX_CHUNK)
    last: list | None = None
    while True:
        n, got = clock.run(lambda n, last=last: chunk(n, last))
        if got is None:
            return
        last, count, rows = got
        yield rows
        if count < n:
            return
