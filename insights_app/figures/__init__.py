"""The figures of the insights report, each a module that can be changed on its own.

Roles, tools and skills (:mod:`.messages`) are computed apart from the pass over the sessions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..localtime import OffsetSegments
from ..window import Scope
from . import activity, days, models, platforms, top_sessions
from .registry import Figure, compute

# The figures of the pass, in the order of its parts.
FIGURES: tuple[Figure, ...] = (
    platforms.FIGURE,
    days.FIGURE,
    activity.FIGURE,
    models.FIGURE,
    top_sessions.FIGURE,
)


def one_pass(
    scope: Scope, segments: OffsetSegments, meanwhile: Callable[[], Any]
) -> tuple[dict[str, Any], Any]:
    """Every figure of :data:`FIGURES`, by name (one statement), and what ``meanwhile`` returns."""
    return compute(scope, segments, FIGURES), meanwhile()
