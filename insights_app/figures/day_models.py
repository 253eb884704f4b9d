"""Figure ``day_models`` (the explorer's own): estimated cost per local start day and model.

Each session's usage rows go to their model and its residual (its own cost beyond its rows) to
the session's model, on the session's start day, as in the models table; so the models of a day
add up to that day's cost in the ``days`` figure (the larger of the session's own cost and its
rows' sum), and the days of a model to its cost in the models table.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from hermes_explorer.redaction import redact
from sessions_app.formatting import short_model

from ..window import Scope
from .days import EPOCH_DAY0
from .registry import Figure, Part, Row, as_float

COLUMNS = (("cost", "SUM(cost)"),)


def parts(scope: Scope) -> list[Part]:
    residual = "SELECT lt / 86400 AS d, model, MAX(0.0, s_cost - u_cost) AS cost FROM per"
    if scope.has_usage:
        rows = f"SELECT lt / 86400 AS d, model, cost FROM uses UNION ALL {residual}"
    else:
        rows = residual
    return [
        Part(
            "json_array(d, model)",
            COLUMNS,
            f"FROM ({rows}) WHERE d IS NOT NULL GROUP BY d, model",
        )
    ]


def decode(scope: Scope, rows: list[Row]) -> list[dict[str, Any]]:
    """``{"day", "model", "cost"}`` per start day and short model name, non-zero costs only."""
    merged: dict[tuple, float] = {}
    names: dict[str | None, str] = {}  # a few models over hundreds of rows: redacted once each
    for key, values in rows:
        day_number, full = json.loads(key)
        name = names.get(full)
        if name is None:
            name = names[full] = redact(short_model(full, missing="unknown"))
        day = EPOCH_DAY0 + dt.timedelta(days=int(day_number))
        merged[(day, name)] = merged.get((day, name), 0.0) + as_float(values["cost"])
    return [
        {"day": day.isoformat(), "model": name, "cost": cost}
        for (day, name), cost in sorted(merged.items())
        if cost
    ]


FIGURE = Figure("day_models", parts, decode, usage_rows=True)
