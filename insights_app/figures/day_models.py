"""Figure ``day_models`` (the explorer's own): estimated cost per local start day and model.

Each session's usage rows go to their model and its residual (its own cost beyond its rows) to
the session's model, on the session's start day, as in the models table; so the models of a day
add up to that day's cost in the ``days`` figure (the larger of the session's own cost and its
rows' sum), and the days of a model to its cost in the models table.  Its rows are the models
figure's own (:mod:`.models` groups by day and full model name): this module only merges them
by short model name.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from .days import EPOCH_DAY0
from .registry import as_float


def costs(rows: Iterable[tuple[int | None, str, Any]]) -> list[dict[str, Any]]:
    """``{"day", "model", "cost"}`` per start day and short model name, non-zero costs only,
    from (local day number, short model name, cost) rows (a session without a start has no
    day and is left out)."""
    merged: dict[tuple, float] = {}
    for day_number, name, cost in rows:
        if day_number is None:
            continue
        day = EPOCH_DAY0 + dt.timedelta(days=int(day_number))
        merged[(day, name)] = merged.get((day, name), 0.0) + as_float(cost)
    return [
        {"day": day.isoformat(), "model": name, "cost": cost}
        for (day, name), cost in sorted(merged.items())
        if cost
    ]
