"""The figures of the insights report, each a module that can be changed on its own.

Figures computed in one pass over the window's sessions (see :mod:`.registry` for how a figure
declares its SQL and its decoder, and :mod:`.per_session` for the rows they group):

``platforms``     sessions and counters per source (and the overview's totals);
``days``          sessions, tokens and cost per local start day;
``heatmap``       sessions per local weekday and hour (and Hermes's activity block);
``models``        Hermes's models table, usage rows plus residuals, per short model name;
``top_sessions``  the longest session and those with most messages, tokens and tool calls;
``day_models``    (the explorer's own) estimated cost per start day and model.

Computed apart: roles, tools and skills from the per-session summaries (:mod:`.messages`), the
usage per activity day (:func:`.days.days_by_activity`), and the overview (:mod:`.overview`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from hermes_explorer import lanes

from ..localtime import OffsetSegments
from ..window import Scope
from . import activity, day_models, days, models, platforms, top_sessions
from .registry import Figure, compute

T = TypeVar("T")

# The figures of the pass, in the order of its parts.
FIGURES: tuple[Figure, ...] = (
    platforms.FIGURE,
    days.FIGURE,
    activity.FIGURE,
    models.FIGURE,
    top_sessions.FIGURE,
    day_models.FIGURE,
)


# On a big window the pass is two statements that can run side by side: the figures that
# group every usage row by model take about as long as all the others together.
BY_MODEL = frozenset({models.FIGURE.name, day_models.FIGURE.name})
# Sessions in the window from which the pass is split (below, one statement is quicker).
SPLIT_FROM = 2000


def one_pass(
    scope: Scope, segments: OffsetSegments, meanwhile: Callable[[], T] = lambda: None
) -> tuple[dict[str, Any], T]:
    """Every figure of :data:`FIGURES`, by name, and what ``meanwhile`` returns.

    On a big window the figures by model go to a spare lane of the process, when one is free
    (:mod:`hermes_explorer.lanes`), while this thread computes the others, then calls
    ``meanwhile``.  A window read in short statements (a rollback-journal file) stays one
    statement: its rows are read once."""
    if scope.read_in_chunks or (scope.sessions or 0) < SPLIT_FROM:
        figures = compute(scope, segments, FIGURES)
        return figures, meanwhile()
    by_model = [f for f in FIGURES if f.name in BY_MODEL]
    later = lanes.beside(lambda: compute(scope, segments, by_model))
    figures = compute(scope, segments, [f for f in FIGURES if f.name not in BY_MODEL])
    other = meanwhile()
    figures.update(later())
    return figures, other
