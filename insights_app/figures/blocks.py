"""The pass over whole days kept in the app database: a report adds up what did not change.

The pass (:mod:`.registry`) reads every session of the window and its usage rows, and groups
them several ways; on a big window that is most of a first view's time, and it is the same
work at every restart for days whose sessions have not changed since.  Every figure of the pass
adds up over disjoint sets of sessions (:func:`.registry.combined`, as for the two halves of
:func:`insights_app.figures.one_pass`), so here the window's sessions are cut by the day their
start falls in (``started_at // 86400``, UTC days: any partition adds up):

* each whole day inside the window is a *block*: the pass's rows over the sessions started in
  it, kept in the app database (:class:`insights_app.models.PassBlock`, never the state.db) with
  a *digest* of what they were computed from;
* what is left of the window (its first and last, partial days, and any session whose start is
  not a number) is read by the pass itself, in one statement;
* a block is reused while its digest matches: the same statement (its text, the zone's offsets
  over the day) over the same sessions and usage rows.  The sessions and usage rows of every
  block are read at each report, in two short statements grouped by day, as sums of every
  column the pass reads and the text of its text columns, hashed (a changed counter, model,
  source or cost status, a new, deleted or moved session or usage row changes its day's
  digest); a block whose digest differs, or that is missing, is computed again and kept.

Those two statements read the same rows as the pass but group nothing else; on the benchmark's
store (20,000 sessions, 1M messages) they cost about 40% of the pass for 365 days and 30% for
30 days.  Used only where it pays: a window chosen by start time alone (no source or model
filter: those would multiply the kept days), of :data:`BLOCKS_FROM` sessions or more, with at
least two and at most :data:`MAX_DAYS` whole days, on a WAL file (a rollback-journal file is
read in short statements, :mod:`.staged`).

NOTE: the rows are added up in another order than in the single statement, so a sum of costs
may differ in its last binary digits (as between the two halves).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from django.db import DatabaseError
from django.utils import timezone

from hermes_explorer import lanes, store
from hermes_explorer.hermes_db.deadline import QueryTimeout

from ..localtime import OffsetSegments, offset_segments
from ..window import Scope
from .per_session import USAGE
from .registry import Figure, Row, combined, rows_by_figure, statement

log = logging.getLogger(__name__)

DAY = 86_400
# Sessions in the window from which kept days are used (below, one statement is as quick).
BLOCKS_FROM = 2000
# Whole days in the window beyond which the plain pass is used: adding up the kept rows of
# every day (some 50 a day) would cost more than grouping the sessions again.
MAX_DAYS = 800
# Blocks stored per statement.
SAVE_BATCH = 200
# Days to compute beyond which a report runs the plain pass and the days are kept beside.
MAX_DIRTY_DAYS = 16

# Numeric columns of ``sessions`` the pass reads (absent ones read as 0).
_SESSION_NUMBERS = (
    "message_count",
    "tool_call_count",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "api_call_count",
    "estimated_cost_usd",
    "actual_cost_usd",
    "ended_at",
    "started_at",
)
# Text columns of ``sessions`` the pass reads (an absent one reads as NULL).
_SESSION_TEXTS = ("id", "source", "model", "cost_status")


def usable(scope: Scope) -> bool:
    """Whether a pass over ``scope`` may add up kept days."""
    return (
        scope.time_bounds is not None
        and (scope.sessions or 0) >= BLOCKS_FROM
        and not scope.read_in_chunks
        and whole_days(scope) is not None
    )


def whole_days(scope: Scope) -> tuple[int, int] | None:
    """``[first, end)`` day numbers of the whole days inside the window: every day between its
    lower bound (or first start) and the earlier of its upper bound and its last start."""
    if scope.time_bounds is None or scope.started_span is None:
        return None
    lo, hi = scope.time_bounds
    first, last = scope.started_span
    if not all(isinstance(v, int | float) for v in (first, last)):
        return None
    start = first if lo is None else lo
    end = last if hi is None else min(hi, last)
    k0, k1 = max(1, math.ceil(start / DAY)), math.floor(end / DAY)
    if not 2 <= k1 - k0 <= MAX_DAYS:
        return None
    return k0, k1


def pass_rows(
    scope: Scope,
    segments: OffsetSegments,
    figures: Sequence[Figure],
    key: int,
    *,
    checking: Callable[[], object] = lambda: None,
) -> dict[str, list[Row]] | None:
    """The rows of the pass over ``scope`` (as :func:`.registry.rows_by_figure` gives them),
    from the kept whole days of the file ``key`` and one statement over the rest.

    More than :data:`MAX_DIRTY_DAYS` days to compute (a first report, a rewritten file): None,
    the caller runs the plain pass (quicker than a statement per day), and the days are
    computed and kept in a spare lane for the next report.  ``checking`` is
    called once the days are to be checked (not when nothing is kept yet): the caller's own
    work beside them starts then."""
    k0, k1 = whole_days(scope)
    plan = _Plan.of(scope, figures)
    kept = _kept(key, plan.name, k0, k1)
    if not kept and k1 - k0 > MAX_DIRTY_DAYS:
        # Nothing kept yet, more days than a report computes itself: not worth checking them.
        _keep_beside(scope, plan, key, None)
        return None
    checking()
    # The sessions of the window outside its whole days (``IS NOT 1``: NULL and text starts).
    rest = replace(scope, where=f"({scope.where}) AND ({_within(k0, k1)}) IS NOT 1", narrow=True)
    # The rest of the window, in line for the first lane that frees up while the days are
    # checked (its rows are not used when the plain pass runs instead: a few days' worth).
    later = lanes.beside(lambda: rows_by_figure(rest, segments, figures), in_line=True)
    found: list[dict[str, list[Row]]] = []
    dirty = plan.dirty_days(fingerprints(scope, k0, k1), kept, found.append)
    if len(dirty) > MAX_DIRTY_DAYS:
        _keep_beside(scope, plan, key, dirty)
        return None
    fresh = _computed(scope, figures, dirty)
    found += [rows for _digest, rows in fresh.values()]
    found.append(later())
    if fresh:
        _keep(key, plan, fresh)
    return combined(scope, figures, *found)


def keep_all(scope: Scope, figure_sets: Sequence[Sequence[Figure]], key: int) -> None:
    """Compute and keep every whole day of ``scope`` whose kept rows are missing or stale, for
    each set of figures (``manage.py insights_warm``); the days are checked once for all."""
    k0, k1 = whole_days(scope)
    prints = fingerprints(scope, k0, k1)
    for figures in figure_sets:
        plan = _Plan.of(scope, figures)
        dirty = plan.dirty_days(prints, _kept(key, plan.name, k0, k1))
        _keep_in_batches(scope, plan, key, dirty)


@dataclass(frozen=True)
class _Plan:
    """What the kept days of a set of figures are named and checked by: the figures' names,
    the hash of their statement for a day but for its bounds and the zone's offsets (both in
    each day's digest), and each figure's column names (the kept rows hold the values only)."""

    figures: Sequence[Figure]
    name: str
    code: str
    names: dict[str, list[str]]

    @classmethod
    def of(cls, scope: Scope, figures: Sequence[Figure]) -> _Plan:
        template, names = statement(_day_scope(scope, 0), OffsetSegments(first=0), figures)
        code = hashlib.sha256(template.encode()).hexdigest()
        return cls(figures, ",".join(figure.name for figure in figures), code, names)

    def dirty_days(
        self,
        prints: dict[int, tuple],
        kept: dict[int, tuple[str, str]],
        reuse: Callable[[dict[str, list[Row]]], object] | None = None,
    ) -> dict[int, tuple[str, OffsetSegments]]:
        """The days of ``prints`` (:func:`fingerprints`) whose kept rows are missing or stale,
        with their digest and offsets; ``reuse(rows)``, if given, gets the kept rows of every
        other day."""
        tz = timezone.get_current_timezone()
        dirty: dict[int, tuple[str, OffsetSegments]] = {}
        for day, fingerprint in prints.items():
            day_segments = offset_segments(tz, day * DAY, (day + 1) * DAY)
            digest = hashlib.sha256(
                repr((self.code, day_segments, fingerprint)).encode()
            ).hexdigest()
            stored = kept.get(day)
            if stored is not None and stored[0] == digest:
                if reuse is not None:
                    reuse(_rows(stored[1], self.names))
            else:
                dirty[day] = (digest, day_segments)
        return dirty


def fingerprints(scope: Scope, k0: int, k1: int) -> dict[int, tuple]:
    """Per day of ``[k0, k1)`` that has sessions: its sessions' and usage rows' hashed sums
    and text (the usage rows read in a spare lane, when one is free, while the sessions are
    read here)."""
    usage = lanes.beside(lambda: usage_fingerprints(scope, k0, k1))
    prints = session_fingerprints(scope, k0, k1)
    for day, fingerprint in usage().items():
        # (A day with usage rows but no session: one started between the two statements.)
        prints[day] = prints.get(day, (None,)) + (fingerprint,)
    return prints


def _computed(
    scope: Scope, figures: Sequence[Figure], days: dict[int, tuple[str, OffsetSegments]]
) -> dict[int, tuple[str, dict[str, list[Row]]]]:
    """Each day's digest and the pass's rows over its sessions, one statement a day."""
    return {
        day: (digest, rows_by_figure(_day_scope(scope, day), day_segments, figures))
        for day, (digest, day_segments) in days.items()
    }


# The days of a file and set of figures being kept in a lane of this process.
_keeping: set[tuple[int, str]] = set()
_keeping_lock = threading.Lock()


def _keep_beside(scope: Scope, plan: _Plan, key: int, dirty) -> None:
    """Compute and keep the ``dirty`` days (None: every day to check first) when a spare lane
    is free after the request's own parts, a batch at a time; once per file and set of
    figures at a time in this process, and not while the file's summaries are being built
    (that build has the spare time first)."""
    from .. import summary_store

    job = (key, plan.name)
    try:
        if summary_store.build_progress(key) is not None:
            return
    except DatabaseError:
        return
    with _keeping_lock:
        if job in _keeping:
            return
        _keeping.add(job)

    def keep() -> None:
        try:
            days = dirty
            if days is None:
                k0, k1 = whole_days(scope)
                kept = _kept(key, plan.name, k0, k1)
                days = plan.dirty_days(fingerprints(scope, k0, k1), kept)
            _keep_in_batches(scope, plan, key, days)
        except DatabaseError as exc:  # a deadline too: the next report carries on
            log.warning("insights: days not kept: %s", exc)
        finally:
            with _keeping_lock:
                _keeping.discard(job)

    if lanes.beside(keep, reads_app_data=True, in_line=True) is keep:
        # No lane will take it (none here, or this request's transaction holds the app
        # database): the next report asks again.
        with _keeping_lock:
            _keeping.discard(job)


def _keep_in_batches(scope: Scope, plan: _Plan, key: int, days) -> None:
    """Compute and keep ``days`` (:meth:`_Plan.dirty_days`), a batch at a time."""
    ordered = sorted(days)
    for i in range(0, len(ordered), SAVE_BATCH):
        batch = {day: days[day] for day in ordered[i : i + SAVE_BATCH]}
        _keep(key, plan, _computed(scope, plan.figures, batch))


def session_fingerprints(scope: Scope, k0: int, k1: int) -> dict[int, tuple]:
    """Per day in ``[k0, k1)`` that has sessions: their columns' sums and text, hashed."""
    c = scope.scol
    numbers = [
        f"s.{n}" if n in ("ended_at", "started_at") else c(n, "NULL") for n in _SESSION_NUMBERS
    ]
    texts = " || char(31) || ".join(f"ifnull({c(col, 'NULL')}, '')" for col in _SESSION_TEXTS)
    rows = store.rows(
        f"SELECT {_DAY}, COUNT(*), SUM(s.rowid), {_sums(numbers, 's.rowid')},"
        f" group_concat({texts}, char(30)) FROM sessions s WHERE {_within(k0, k1)} GROUP BY 1",
        [],
    )
    return {row[0]: (_hashed(row[1:]),) for row in rows}


def usage_fingerprints(scope: Scope, k0: int, k1: int) -> dict[int, str]:
    """Per day in ``[k0, k1)``: its sessions' usage rows' sums and text, hashed (none on a
    file without them)."""
    if not scope.has_usage:
        return {}
    u = scope.ucol
    counters = [u(column, "NULL") for column, _short, _key, _zero in USAGE]
    rows = store.rows(
        f"SELECT {_DAY}, COUNT(*), SUM(u.rowid), {_sums(counters, 'u.rowid')},"
        " group_concat(u.session_id || char(31) || ifnull(u.model, ''), char(30))"
        " FROM sessions s JOIN session_model_usage u ON u.session_id = s.id"
        f" WHERE {_within(k0, k1)} GROUP BY 1",
        [],
    )
    return {row[0]: _hashed(row[1:]) for row in rows}


_DAY = f"CAST(s.started_at AS INTEGER) / {DAY}"


def _within(k0: int, k1: int) -> str:
    return f"s.started_at >= {k0 * DAY} AND s.started_at < {k1 * DAY}"


def _sums(columns: list[str], rowid: str) -> str:
    """Each column's sum, and its sum weighted by the row (a value moved to another row)."""
    return ", ".join(f"SUM({col}), TOTAL({col} * ({rowid} % 7919))" for col in columns)


def _hashed(values: Sequence) -> str:
    return hashlib.sha256(repr(tuple(values)).encode()).hexdigest()


def _day_scope(scope: Scope, day: int) -> Scope:
    """The sessions started in ``day`` (found by the start-time index)."""
    return replace(scope, where=_within(day, day + 1), params=(), narrow=True, sessions=None)


def _kept(key: int, name: str, k0: int, k1: int) -> dict[int, tuple[str, str]]:
    from ..models import PassBlock

    rows = PassBlock.objects.filter(store_key=key, figures=name, day__gte=k0, day__lt=k1)
    return {day: (digest, text) for day, digest, text in rows.values_list("day", "digest", "rows")}


def _rows(text: str, names: dict[str, list[str]]) -> dict[str, list[Row]]:
    return {
        figure: [
            (row_key, dict(zip(names[figure], values, strict=True))) for row_key, values in rows
        ]
        for figure, rows in json.loads(text).items()
    }


def _keep(key: int, plan: _Plan, fresh: dict[int, tuple[str, dict]]) -> None:
    """Store the blocks just computed (a failure only costs the next report the same work)."""
    from ..models import PassBlock

    def text(by_figure: dict[str, list[Row]]) -> str:
        return json.dumps(
            {
                figure: [
                    [row_key, [values[n] for n in plan.names[figure]]] for row_key, values in rows
                ]
                for figure, rows in by_figure.items()
            }
        )

    try:
        blocks = [
            PassBlock(
                store_key=key, figures=plan.name, day=day, digest=digest, rows=text(by_figure)
            )
            for day, (digest, by_figure) in fresh.items()
        ]
        PassBlock.objects.bulk_create(
            blocks,
            batch_size=SAVE_BATCH,
            update_conflicts=True,
            unique_fields=["store_key", "figures", "day"],
            update_fields=["digest", "rows"],
        )
    except (DatabaseError, TypeError, ValueError) as exc:
        # TypeError, ValueError: a value JSON cannot hold (a blob in a text column).
        log.warning("insights: kept days not stored: %s", exc)


def try_pass_rows(
    scope: Scope,
    segments: OffsetSegments,
    figures: Sequence[Figure],
    key: int | None,
    checking: Callable[[], object] = lambda: None,
) -> dict[str, list[Row]] | None:
    """:func:`pass_rows`, or None when kept days cannot be used (then the caller runs the plain
    pass): not :func:`usable`, no file key, or the app database or a fingerprint failing.  A
    statement past its deadline still ends the report."""
    if key is None or not usable(scope):
        return None
    try:
        return pass_rows(scope, segments, figures, key, checking=checking)
    except QueryTimeout:
        raise
    except DatabaseError as exc:
        log.warning("insights: kept days not used: %s", exc)
        return None
