"""Datasette's column filters: ``col=value``, ``col__op=value``, their SQL and their words.

A query-string key that does not start with ``_``, or that contains ``__``, is a filter; the
operator follows the *last* ``__`` (``exact`` when there is none).  :data:`OPERATORS` holds
every operator of Datasette 0.65 with its SQL and its description.  Values are bound, never
pasted; an operator Datasette did not know is ignored, as it was.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from hermes_explorer.hermes_db.catalog import quote

from .errors import ApiError


def column_sql(name: str) -> str:
    """A column as SQL: ``rowid`` bare, any other name quoted."""
    return name if name == "rowid" else quote(name)


def key_equals(names: list[str], values, binder: Binder) -> str:
    """``k1 = :p0 and k2 = :p1``: the row with this key."""
    return " and ".join(
        f"{column_sql(n)} = {binder.bind(v)}" for n, v in zip(names, values, strict=True)
    )


def is_filter_key(key: str) -> bool:
    """Keys starting with ``_`` are options (``_sort``, ``_search``…) unless they hold ``__``."""
    return not (key.startswith("_") and "__" not in key)


def is_search_key(key: str) -> bool:
    """``_search`` and ``_search_<column>`` (``_searchmode`` is an option)."""
    return key.startswith("_search") and key != "_searchmode"


def column_and_op(key: str) -> tuple[str, str]:
    """``message_count__gte`` → ``("message_count", "gte")``; a bare name is ``exact``."""
    column, sep, op = key.rpartition("__")
    return (column, op) if sep else (key, "exact")


class Binder:
    """Collects bound values as ``:p0``, ``:p1``… in the order clauses ask for them."""

    def __init__(self) -> None:
        self.params: dict[str, object] = {}

    def bind(self, value) -> str:
        if isinstance(value, int) and not -(2**63) <= value < 2**63:
            raise ApiError(f"{value} is out of range: SQLite integers are 64-bit.")
        name = f"p{len(self.params)}"
        self.params[name] = value
        return ":" + name


@dataclass(frozen=True)
class Operator:
    key: str
    template: str  # {c} column, {v} bound value, {t} table
    human: str | Callable[[str, str], str]
    format: str = "{}"
    numeric: bool = False
    no_argument: bool = False

    def where(
        self,
        table: str,
        column: str,
        value: str,
        binder: Binder,
        *,
        known: bool = True,
        seen: bool = False,
    ) -> str:
        """The clause; ``known=False``: a name the table lacks, bound as a string value (so
        ``nosuch=1`` matches nothing, as in Datasette); ``seen=True``: the column compared as
        readers see it, redacted (``hermes_redact``)."""
        if not known and "{t}" in self.template:
            raise ApiError(f"no such column: {table}.{column}", title="Invalid SQL")
        if seen and known and not self.no_argument and "{t}" not in self.template:
            # Only the shown value: a match says nothing about text behind a marker.
            return self._clause(f"hermes_redact({quote(column)})", table, value, binder)
        target = quote(column) if known else binder.bind(column)
        return self._clause(target, table, value, binder)

    def _clause(self, target: str, table: str, value: str, binder: Binder) -> str:
        if self.no_argument:
            return self.template.format(c=target)
        converted: object = self.format.format(value)
        if self.numeric and isinstance(converted, str) and converted.isdigit():
            converted = int(converted)
        return self.template.format(c=target, t=quote(table), v=binder.bind(converted))

    def describe(self, column: str, value: str) -> str:
        template = self.human(column, value) if callable(self.human) else self.human
        return template.format(c=column, v=value)


class ListOperator(Operator):
    """``in`` / ``notin``: a JSON list (``["a","b"]``) or comma-separated values."""

    def values(self, value: str) -> list:
        if value.startswith("["):
            try:
                items = json.loads(value)
            except ValueError as exc:
                raise ApiError(f"Invalid JSON list for __{self.key}: {exc}") from exc
            if not isinstance(items, list):
                raise ApiError(f"__{self.key} needs a JSON list")
            # Only values SQLite can bind; anything nested is compared as its JSON text.
            return [
                v if v is None or isinstance(v, str | int | float) else json.dumps(v) for v in items
            ]
        return [v.strip() for v in value.split(",")]

    def _clause(self, target: str, table: str, value: str, binder: Binder) -> str:
        marks = ", ".join(binder.bind(v) for v in self.values(value))
        return self.template.format(c=target, v=marks)

    def describe(self, column: str, value: str) -> str:
        try:
            items = self.values(value)
        except ApiError:
            items = [value]
        return self.human.format(c=column, v=json.dumps(items))


def _equals(symbol: str) -> Callable[[str, str], str]:
    bare, quoted = "{c} " + symbol + " {v}", "{c} " + symbol + ' "{v}"'
    return lambda c, v: bare if v.isdigit() else quoted


OPERATORS: dict[str, Operator] = {
    op.key: op
    for op in (
        Operator("exact", "{c} = {v}", _equals("=")),
        Operator("not", "{c} != {v}", _equals("!=")),
        Operator("contains", "{c} like {v}", '{c} contains "{v}"', format="%{}%"),
        Operator("endswith", "{c} like {v}", '{c} ends with "{v}"', format="%{}"),
        Operator("startswith", "{c} like {v}", '{c} starts with "{v}"', format="{}%"),
        Operator("gt", "{c} > {v}", "{c} > {v}", numeric=True),
        Operator("gte", "{c} >= {v}", "{c} \u2265 {v}", numeric=True),
        Operator("lt", "{c} < {v}", "{c} < {v}", numeric=True),
        Operator("lte", "{c} <= {v}", "{c} \u2264 {v}", numeric=True),
        Operator("like", "{c} like {v}", '{c} like "{v}"'),
        Operator("notlike", "{c} not like {v}", '{c} not like "{v}"'),
        Operator("glob", "{c} glob {v}", '{c} glob "{v}"'),
        ListOperator("in", "{c} in ({v})", "{c} in {v}"),
        ListOperator("notin", "{c} not in ({v})", "{c} not in {v}"),
        Operator(
            "arraycontains", "{v} in (select value from json_each({t}.{c}))", '{c} contains "{v}"'
        ),
        Operator(
            "arraynotcontains",
            "{v} not in (select value from json_each({t}.{c}))",
            '{c} does not contain "{v}"',
        ),
        Operator("date", "date({c}) = {v}", '"{c}" is on date {v}'),
        Operator("isnull", "{c} is null", "{c} is null", no_argument=True),
        Operator("notnull", "{c} is not null", "{c} is not null", no_argument=True),
        Operator("isblank", "({c} is null or {c} = '')", "{c} is blank", no_argument=True),
        Operator(
            "notblank", "({c} is not null and {c} != '')", "{c} is not blank", no_argument=True
        ),
    )
}
# Operators that only ask whether a value is there (no value compared).
PRESENCE_OPS = frozenset(k for k, op in OPERATORS.items() if op.no_argument)


@dataclass(frozen=True)
class Selection:
    column: str
    op: str
    value: str

    @property
    def operator(self) -> Operator | None:
        return OPERATORS.get(self.op)


def selections(pairs: list[tuple[str, str]]) -> list[Selection]:
    """The filters of a query string, sorted by key then value as Datasette sorted them."""
    return [Selection(*column_and_op(key), value) for key, value in sorted(pairs)]


def human_description(bits: list[str]) -> str:
    """``where a = 1, b > 2 and c is null`` (Datasette's ``human_description_en``)."""
    if not bits:
        return ""
    head = ", ".join(bits[:-1])
    return "where " + (f"{head} and {bits[-1]}" if head else bits[-1])
