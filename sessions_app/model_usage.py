"""Which sessions *used* a model, by the insights models table's rule (so its links agree): a
``session_model_usage`` row for it, or it is their own model and their counters exceed the
sum of their usage rows (without that table, any counter above zero)."""

from __future__ import annotations

from typing import Any

# (column of sessions and of session_model_usage, neutral value when absent)
_COUNTERS = (
    ("input_tokens", "0"),
    ("output_tokens", "0"),
    ("cache_read_tokens", "0"),
    ("cache_write_tokens", "0"),
    ("api_call_count", "0"),
    ("estimated_cost_usd", "0.0"),
    ("actual_cost_usd", "0.0"),
)


def model_match(column: str, name: str) -> tuple[str, list[str]]:
    """``column`` names the model ``name`` (the route, or ``…/name``; ``unknown``: none)."""
    escaped = name.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    sql = f"({column} = %s OR {column} LIKE %s ESCAPE '\\'"
    if name == "unknown":
        sql += f" OR {column} IS NULL OR {column} = ''"
    return sql + ")", [name, "%/" + escaped]


def used_model_sql(shape: Any, name: str) -> tuple[str, list[Any]]:
    """``SELECT`` of the ids of the sessions that count for model ``name``, with parameters."""

    def own(col: str, neutral: str) -> str:
        return f"COALESCE(s.{col}, {neutral})" if shape.has_column("sessions", col) else neutral

    own_model, own_params = model_match("s.model", name)
    if not shape.has_table("session_model_usage"):
        positive = " OR ".join(f"{own(col, n)} > 0" for col, n in _COUNTERS)
        return f"SELECT s.id FROM sessions s WHERE {own_model} AND ({positive})", own_params

    def rows(col: str, neutral: str) -> str:
        summed = (
            f"COALESCE(SUM(u.{col}), {neutral})"
            if shape.has_column("session_model_usage", col)
            else neutral
        )
        return f"(SELECT {summed} FROM session_model_usage u WHERE u.session_id = s.id)"

    residual = " OR ".join(f"{own(c, n)} > {rows(c, n)}" for c, n in _COUNTERS)
    row_model, row_params = model_match("u.model", name)
    sql = (
        f"SELECT u.session_id FROM session_model_usage u WHERE {row_model}"
        f" UNION SELECT s.id FROM sessions s WHERE {own_model} AND ({residual})"
    )
    return sql, [*row_params, *own_params]
