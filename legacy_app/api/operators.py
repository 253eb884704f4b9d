"""Datasette's column filters: ``col=value``, ``col__op=value``, their SQL and their words.
Values are bound, never pasted; an operator Datasette did not know is ignored, as it was.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from hermes_explorer import dialect
from hermes_explorer.hermes_db.catalog import TableInfo, quote

from .errors import ApiError


def column_sql(name: str) -> str:
    """A column as SQL: ``rowid`` bare, any other name quoted."""
    return name if name == "rowid" else quote(name)


# A text SQLite turns into a number when it meets a numeric column (its type affinity).
_NUMBER = re.compile(r"\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*")
_NUMBER_TYPES = {"int": "integer", "double": "real", "real": "real", "float": "real"}


def number_kind(table: TableInfo, column: str) -> str:
    """``integer`` or ``real`` when ``column`` holds numbers (by its declared type), else ""."""
    if column not in table.columns:
        return "integer" if column == "rowid" else ""
    declared = table.types[table.columns.index(column)].lower()
    return next((kind for word, kind in _NUMBER_TYPES.items() if word in declared), "")


def affinity(value, number: str):
    """``value`` as SQLite compares it with a column: a number for a numeric column when it
    reads as one, else text (a typed PostgreSQL column needs the value SQLite would use)."""
    if value is None or isinstance(value, int | float) and number:
        return value
    text = str(value)
    if not number or not _NUMBER.fullmatch(text):
        return text
    try:
        return int(text)
    except ValueError:
        return float(text)


def glob_regex(pattern: str) -> str:
    """SQLite's GLOB pattern as an anchored POSIX regular expression."""
    out, i = ["^"], 0
    while i < len(pattern):
        ch = pattern[i]
        end = pattern.find("]", i + 2) if ch == "[" else -1
        if ch == "*":
            out.append(".*")
        elif ch == "?":
            out.append(".")
        elif end > 0:
            body = pattern[i + 1 : end]
            negate = body.startswith("^")
            body = body[1:] if negate else body
            out.append("[" + ("^" if negate else "") + body.replace("\\", "\\\\") + "]")
            i = end
        else:
            out.append(re.escape(ch) if ch.isascii() and not ch.isalnum() else ch)
        i += 1
    return "".join(out) + "$"


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
    # "{c} op {v}" ({c} column, {v} bound value, {t} table), or a function of c, v and t for
    # what a dialect fragment writes.
    template: str | Callable[[str, str, str], str]
    human: str | Callable[[str, str], str]
    format: str = "{}"
    numeric: bool = False
    no_argument: bool = False
    # Compares text (LIKE, GLOB, JSON items): a number column is read as its text.
    textual: bool = False
    # Reads the table's row (JSON items): a column must be the table's, as stored.
    uses_table: bool = False

    def where(self, table: TableInfo, column: str, value: str, binder: Binder, seen: bool) -> str:
        """The clause; a name the table lacks is bound as a string value (so ``nosuch=1``
        matches nothing, as in Datasette); ``seen``: the column compared as readers see it,
        redacted (``hermes_redact``)."""
        known = column in table.columns or column == "rowid"
        if not known and self.uses_table:
            raise ApiError(f"no such column: {table.name}.{column}", title="Invalid SQL")
        if seen and known and not self.no_argument and not self.uses_table:
            # Only the shown value: a match says nothing about text behind a marker.
            return self._clause(f"hermes_redact({quote(column)})", table.name, value, binder, "")
        if not known:
            return self._clause(binder.bind(column), table.name, value, binder, "")
        return self._clause(quote(column), table.name, value, binder, number_kind(table, column))

    def _clause(self, target: str, table: str, value: str, binder: Binder, number: str) -> str:
        typed = dialect.postgres()
        if typed and number and (self.textual or self.no_argument):
            target = dialect.as_text(target, number)
        if self.no_argument:
            return self.template.format(c=target)
        converted: object = self.format.format(value)
        if self.numeric and isinstance(converted, str) and converted.isdigit():
            converted = int(converted)
        if typed and not self.textual:
            converted = affinity(converted, number)
            if number and isinstance(converted, str):
                # A text never equals a number, and sorts after every one (as SQLite decides).
                return f"{target} is not null" if self.key in ("not", "lt", "lte") else "1 = 0"
        elif typed and self.key == "glob":
            converted = glob_regex(str(converted))
        elif typed:
            converted = str(converted)
        if callable(self.template):
            return self.template(target, binder.bind(converted), quote(table))
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

    def _clause(self, target: str, table: str, value: str, binder: Binder, number: str) -> str:
        values = self.values(value)
        if dialect.postgres():
            # A text never equals a number: such items cannot match a number column.
            values = [affinity(v, number) for v in values]
            values = [v for v in values if not (number and isinstance(v, str))]
            if not values:
                return "1 = 0" if self.key == "in" else f"{target} is not null"
        marks = ", ".join(binder.bind(v) for v in values)
        return self.template.format(c=target, v=marks)

    def describe(self, column: str, value: str) -> str:
        # Described after its clause was written: ``value`` is a valid list.
        return self.human.format(c=column, v=json.dumps(self.values(value)))


def _equals(symbol: str) -> Callable[[str, str], str]:
    bare, quoted = "{c} " + symbol + " {v}", "{c} " + symbol + ' "{v}"'
    return lambda c, v: bare if v.isdigit() else quoted


class DateOperator(Operator):
    """``__date``: SQLite's ``date()`` of the column (ISO text, or a Julian day number)."""

    def _clause(self, target: str, table: str, value: str, binder: Binder, number: str) -> str:
        return f"{dialect.sqlite_date(target, number)} = {binder.bind(value)}"


def _like(negate: bool = False) -> Callable[[str, str, str], str]:
    return lambda c, v, t: dialect.like(c, v, negate)


OPERATORS: dict[str, Operator] = {
    op.key: op
    for op in (
        Operator("exact", "{c} = {v}", _equals("=")),
        Operator("not", "{c} != {v}", _equals("!=")),
        Operator("contains", _like(), '{c} contains "{v}"', format="%{}%", textual=True),
        Operator("endswith", _like(), '{c} ends with "{v}"', format="%{}", textual=True),
        Operator("startswith", _like(), '{c} starts with "{v}"', format="{}%", textual=True),
        Operator("gt", "{c} > {v}", "{c} > {v}", numeric=True),
        Operator("gte", "{c} >= {v}", "{c} \u2265 {v}", numeric=True),
        Operator("lt", "{c} < {v}", "{c} < {v}", numeric=True),
        Operator("lte", "{c} <= {v}", "{c} \u2264 {v}", numeric=True),
        Operator("like", _like(), '{c} like "{v}"', textual=True),
        Operator("notlike", _like(negate=True), '{c} not like "{v}"', textual=True),
        Operator("glob", lambda c, v, t: dialect.glob(c, v), '{c} glob "{v}"', textual=True),
        ListOperator("in", "{c} in ({v})", "{c} in {v}"),
        ListOperator("notin", "{c} not in ({v})", "{c} not in {v}"),
        Operator(
            "arraycontains",
            lambda c, v, t: f"{v} in ({dialect.json_strings(t, c)})",
            '{c} contains "{v}"',
            textual=True,
            uses_table=True,
        ),
        Operator(
            "arraynotcontains",
            lambda c, v, t: f"{v} not in ({dialect.json_strings(t, c)})",
            '{c} does not contain "{v}"',
            textual=True,
            uses_table=True,
        ),
        DateOperator("date", "date({c}) = {v}", '"{c}" is on date {v}'),
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
