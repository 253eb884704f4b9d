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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..localtime import OffsetSegments
from ..window import Scope
from . import activity, days, models, platforms, top_sessions
from .registry import Figure, compute

T = TypeVar("T")

# The figures of the pass, in the order of its parts.
FIGURES: tuple[Figure, ...] = (
    platforms.FIGURE,
    days.FIGURE,
    activity.FIGURE,
    models.FIGURE,
    top_sessions.FIGURE,
)


def one_pass(
    scope: Scope, segments: OffsetSegments, meanwhile: Callable[[], T] = lambda: None
) -> tuple[dict[str, Any], T]:
    """Every figure of :data:`FIGURES`, by name (one statement), and what ``meanwhile``
    returns."""
    return compute(scope, segments, FIGURES), meanwhile()


def pass_figures(scope: Scope, segments: OffsetSegments, figures: tuple[Figure, ...]) -> dict:
    """Every figure of ``figures``, by name, from one statement."""
    return compute(scope, segments, figures)
