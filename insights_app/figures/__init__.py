"""The figures of the insights report, each a module that can be changed on its own.

Figures computed in one pass over the window's sessions (see :mod:`.registry` for how a figure
declares its SQL and its decoder, and :mod:`.per_session` for the rows they group):

``platforms``     sessions and counters per source (and the overview's totals);
``days``          sessions, tokens and cost per local start day;
``heatmap``       sessions per local weekday and hour (and Hermes's activity block);
``models``        Hermes's models table, usage rows plus residuals, per short model name, and
                  (the explorer's own, from the same rows, :mod:`.day_models`) the estimated
                  cost per start day and model;
``top_sessions``  the longest session and those with most messages, tokens and tool calls.

Computed apart: roles, tools and skills from the per-session summaries (:mod:`.messages`), the
usage per activity day (:func:`.days.days_by_activity`), and the overview (:mod:`.overview`).

On a big window chosen by start time alone, the pass adds up the rows of the window's whole
days kept in the app database, and reads only the rest (:mod:`.blocks`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from hermes_explorer import lanes

from .. import summaries
from ..localtime import OffsetSegments
from ..window import Scope
from . import activity, blocks, days, models, platforms, top_sessions
from .registry import Figure, combined, compute, decode, rows_by_figure

T = TypeVar("T")

# The figures of the pass, in the order of its parts.
FIGURES: tuple[Figure, ...] = (
    platforms.FIGURE,
    days.FIGURE,
    activity.FIGURE,
    models.FIGURE,
    top_sessions.FIGURE,
)


# Sessions in the window from which the pass is cut in two (below, one statement is quicker).
SPLIT_FROM = 2000


def one_pass(
    scope: Scope, segments: OffsetSegments, meanwhile: Callable[[], T] = lambda: None
) -> tuple[dict[str, Any], T]:
    """Every figure of :data:`FIGURES`, by name, and what ``meanwhile`` returns.

    On a big window the sessions are cut in two halves (by the parity of their rowid), each
    grouped by its own statement: one in a spare lane of the process when one is free
    (:mod:`hermes_explorer.lanes`), the other here; ``meanwhile`` (it reads the app
    database) goes beside too, or in line for the first lane to free up, or runs here once
    this thread's half is done if no lane has taken it by then; the halves' rows are then
    added up (:func:`.registry.combined`).  A window read in short statements
    (a rollback-journal file) stays one pass: its rows are read once.

    Where kept whole days can be added up (:func:`.blocks.usable`), that is done here while
    ``meanwhile`` runs beside (or, when they are not kept yet, the two halves)."""
    if blocks.usable(scope):
        started: list[Callable[[], T]] = []

        def beside() -> None:
            started.append(lanes.beside(meanwhile, reads_app_data=True))

        rows = blocks.try_pass_rows(scope, segments, FIGURES, summaries.file_key(), beside)
        if rows is not None or started:
            if rows is None:  # the days were checked: too many to compute here
                rows, _ = _by_halves(scope, segments)
            return decode(scope, FIGURES, rows), started[0]()
        # Nothing kept yet: the two halves, as below (the days are kept beside).
    if scope.read_in_chunks or (scope.sessions or 0) < SPLIT_FROM:
        figures = compute(scope, segments, FIGURES)
        return figures, meanwhile()
    rows, beside = _by_halves(scope, segments, meanwhile)
    return decode(scope, FIGURES, rows), beside


def _by_halves(
    scope: Scope, segments: OffsetSegments, meanwhile: Callable[[], T] | None = None
) -> tuple[dict, T | None]:
    """The pass's rows over the window's sessions cut in two halves by the parity of their
    rowid (one in a spare lane, the other here), added up; and what ``meanwhile`` returns,
    when one is given, run beside."""
    halves = [replace(scope, where=f"({scope.where}) AND s.rowid %% 2 = {i}") for i in (0, 1)]
    later = lanes.beside(lambda: rows_by_figure(halves[1], segments, FIGURES))
    other = lanes.beside(meanwhile, reads_app_data=True) if meanwhile is not None else None
    mine = rows_by_figure(halves[0], segments, FIGURES)
    # ``meanwhile`` first: still in line (the lanes busy with the other half and the previous
    # period), it runs here now rather than after the first lane frees up.
    beside = other() if other is not None else None
    return combined(scope, FIGURES, mine, later()), beside


def pass_figures(scope: Scope, segments: OffsetSegments, figures: tuple[Figure, ...]) -> dict:
    """Every figure of ``figures``, by name: from kept whole days and one statement over the
    rest of the window where that can be done (:mod:`.blocks`), else from one statement."""
    rows = blocks.try_pass_rows(scope, segments, figures, summaries.file_key())
    return decode(scope, figures, rows) if rows is not None else compute(scope, segments, figures)


def keep_days(figure_sets: Sequence[tuple[Figure, ...]], days: int = blocks.MAX_DAYS) -> int:
    """Compute and keep the whole days of the last ``days`` days for each set of figures
    (``manage.py insights_warm``: the first report after a start then reads them); the number
    of sets kept (none on a store too small for kept days to be used)."""
    from ..window import Window, scope_of, window_span

    scope, _first, _last = window_span(scope_of(Window(days=days), time.time()))
    if not blocks.usable(scope):
        return 0
    blocks.keep_all(scope, figure_sets, summaries.file_key())
    return len(figure_sets)
