"""Figure ``day_models`` (the explorer's own): estimated cost per local start day and model.

Usage rows go to their model and the residual to the session's model, on its start day, as in
the models table, so a day's models add up to its cost in ``days`` and a model's days to its
cost in the models table.  The rows are the models figure's own (:mod:`.models`), merged here
by short model name.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from .days import EPOCH_DAY0
from .registry import as_float


def costs(rows: Iterable[tuple[int | None, str, Any]]) -> list[dict[str, Any]]:
    """``{"day", "model", "cost"}`` per start day and short model name, non-zero costs only
    (a session without a start has no day)."""
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
