"""What a figure is, and the one statement that computes every figure of the pass.

A *figure* is one table of the report computed in SQL from the window's sessions (per source,
per local day, per weekday-hour, per model, the notable sessions).  It declares its *parts*,
``SELECT``\\ s over the per-session rows ``per`` (:mod:`.per_session`), each a row key and
named columns, and its *decoder* of the rows it got back.

All parts of all figures are one statement (``WITH per AS MATERIALIZED (…) SELECT … UNION ALL
…``), so the pass reads the window's sessions once however many figures there are.  Each row
carries its figure's name, padded with NULL to the widest part.  To add a figure, write a
module and list it in :data:`insights_app.figures.FIGURES`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_explorer import store

from ..localtime import OffsetSegments
from ..window import Scope
from . import staged
from .per_session import per_session_cte, usage_cte

TOKEN_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")

# A decoded row: the part's key and its columns by name.
Row = tuple[Any, dict[str, Any]]


@dataclass(frozen=True)
class Part:
    """One ``SELECT`` of the pass: ``SELECT <key>, <columns…> <source>``."""

    key: str
    columns: tuple[tuple[str, str], ...]  # (name, SQL expression), in order
    source: str  # FROM per … (WHERE, GROUP BY, ORDER BY, LIMIT)


@dataclass(frozen=True)
class Figure:
    """A named figure: the parts it adds to the pass and how its rows become its value."""

    name: str
    parts: Callable[[Scope], list[Part]]
    decode: Callable[[Scope, list[Row]], Any]
    # Its parts read ``uses``, the usage rows (:func:`.per_session.usage_cte`).
    usage_rows: bool = False


def statement(
    scope: Scope, segments: OffsetSegments, figures: Sequence[Figure], *, per_table: str = ""
) -> tuple[str, dict[str, list[str]]]:
    """The single statement of every part of ``figures``, and each figure's column names
    (``per_table``: ``per`` is that table's rows, without parameters)."""
    planned = [(figure, figure.parts(scope)) for figure in figures]
    width = max(len(part.columns) for _, parts in planned for part in parts)
    selects = []
    names: dict[str, list[str]] = {}
    for figure, parts in planned:
        names[figure.name] = [name for name, _ in parts[0].columns]
        for part in parts:
            if [name for name, _ in part.columns] != names[figure.name]:
                raise ValueError(f"the parts of figure {figure.name!r} name different columns")
            columns = [sql for _, sql in part.columns] + ["NULL"] * (width - len(part.columns))
            # A subquery, so that a part may have its own ORDER BY and LIMIT.
            selects.append(
                f"SELECT * FROM (SELECT '{figure.name}', {part.key}, {', '.join(columns)}"
                f" {part.source})"
            )
    per = (
        f"per AS MATERIALIZED (SELECT * FROM {per_table})"
        if per_table
        else per_session_cte(scope, segments)
    )
    if scope.has_usage and any(figure.usage_rows for figure in figures):
        per += ",\n" + usage_cte(scope)
    sql = f"WITH {per}\n" + "\nUNION ALL\n".join(selects)
    return sql, names


def compute(scope: Scope, segments: OffsetSegments, figures: Sequence[Figure]) -> dict[str, Any]:
    """Every figure's value, by name, from one run of :func:`statement` (over a copy read in
    short statements, :mod:`.staged`, when the window needs it)."""
    if scope.read_in_chunks:
        sql, names = statement(scope, segments, figures, per_table=staged.PER_TABLE)
        found = staged.staged_rows(scope, segments, sql)
    else:
        sql, names = statement(scope, segments, figures)
        found = store.rows(sql, scope.params)
    rows: dict[str, list[Row]] = {figure.name: [] for figure in figures}
    for name, key, *values in found:
        # zip() stops at the figure's own columns: the NULL padding is dropped.
        rows[name].append((key, dict(zip(names[name], values, strict=False))))
    return {figure.name: figure.decode(scope, rows[figure.name]) for figure in figures}


def as_int(value) -> int:
    return int(value) if value is not None else 0


def as_float(value) -> float:
    return float(value) if value is not None else 0.0
