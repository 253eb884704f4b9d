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

from typing import Any

from ..localtime import OffsetSegments
from ..window import Scope
from . import activity, day_models, days, models, platforms, top_sessions
from .registry import Figure, compute

# The figures of the pass, in the order of its parts.
FIGURES: tuple[Figure, ...] = (
    platforms.FIGURE,
    days.FIGURE,
    activity.FIGURE,
    models.FIGURE,
    top_sessions.FIGURE,
    day_models.FIGURE,
)


def one_pass(scope: Scope, segments: OffsetSegments) -> dict[str, Any]:
    """Every figure of :data:`FIGURES`, by name, from one statement."""
    return compute(scope, segments, FIGURES)
