"""A Datasette table URL read into a :class:`TableRequest`, with Datasette's checks (refused
with its words and a 400, never its 500).  As in Datasette, an option's *first* value counts
(``QueryDict.get`` would give the last), and every value of a filter.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from django.http import QueryDict

from hermes_explorer.hermes_db.catalog import TableInfo

from .errors import ApiError
from .operators import Selection, is_filter_key, is_search_key, selections

PAGE_SIZE = 100  # Datasette's default_page_size
MAX_ROWS = 1000  # and its max_returned_rows
FACET_SIZE = 30  # default_facet_size
FACET_TYPES = {"_facet": "column", "_facet_date": "date", "_facet_array": "array"}


def first(params: QueryDict, key: str, default: str | None = None) -> str | None:
    return next(iter(params.getlist(key)), default)


def as_boolean(value: str) -> bool:
    """``on``, ``true`` or ``1`` (any case), as Datasette read a boolean option."""
    return value.lower() in ("on", "true", "1")


@dataclass(frozen=True)
class Facet:
    kind: str  # column, date or array
    column: str


@dataclass
class TableRequest:
    table: TableInfo
    columns: list[str]  # selected, in order (the key first when _col is used)
    selections: list[Selection] = field(default_factory=list)
    sort: str | None = None
    sort_desc: bool = False
    size: int = PAGE_SIZE
    next: str | None = None
    search: dict[str, str] = field(default_factory=dict)  # "_search" or "_search_<col>"
    search_raw: bool = False
    facets: list[Facet] = field(default_factory=list)
    facet_size: int = FACET_SIZE
    wheres: list[str] = field(default_factory=list)
    labels: list[str] | None = None  # columns to expand; None: none asked
    nocount: bool = False
    nofacet: bool = False
    stream: bool = False
    download: bool = False
    header: bool = True

    @property
    def key(self) -> list[str]:
        return ["rowid"] if self.table.use_rowid else list(self.table.pks)


def _columns(table: TableInfo, params: QueryDict) -> list[str]:
    columns = list(table.columns)
    if "_col" in params:
        wanted = params.getlist("_col")
        bad = [c for c in wanted if c not in table.columns]
        if bad:
            raise ApiError("_col={} - invalid columns".format(", ".join(bad)))
        columns = list(table.pks) + [c for c in dict.fromkeys(wanted)]
    if "_nocol" in params:
        dropped = params.getlist("_nocol")
        bad = [c for c in dropped if c not in table.columns or c in table.pks]
        if bad:
            raise ApiError("_nocol={} - invalid columns".format(", ".join(bad)))
        columns = [c for c in columns if c not in dropped]
    return columns


def _size(value: str | None) -> int:
    if not value:
        return PAGE_SIZE
    if value == "max":
        return MAX_ROWS
    try:
        size = int(value)
    except ValueError:
        size = -1
    if size < 0:
        raise ApiError("_size must be a positive integer")
    if size > MAX_ROWS:
        raise ApiError(f"_size must be <= {MAX_ROWS}")
    return size


def _facets(params: QueryDict, table: TableInfo) -> list[Facet]:
    facets = []
    # Column facets first, then date, then array: Datasette's order of facet classes.
    for key, kind in FACET_TYPES.items():
        for value in params.getlist(key):
            column = value
            if value.startswith("{"):
                try:
                    config = json.loads(value)
                    column = config.get("column") or config["simple"]
                except (ValueError, KeyError, AttributeError, TypeError) as exc:
                    raise ApiError(f"Invalid facet configuration: {value}") from exc
            if column not in table.columns:
                raise ApiError(f"no such column: {column}", title="Invalid SQL")
            facets.append(Facet(kind, column))
    return facets


def _facet_size(value: str | None) -> int:
    if value == "max":
        return MAX_ROWS
    if value and value.isdigit():
        return min(int(value), MAX_ROWS)
    return FACET_SIZE


def parse(table: TableInfo, params: QueryDict) -> TableRequest:
    sort, sort_desc = first(params, "_sort"), first(params, "_sort_desc")
    if sort and sort_desc:
        raise ApiError("Cannot use _sort and _sort_desc at the same time")
    sortable = set(table.columns) | ({"rowid"} if table.use_rowid else set())
    for value in (sort, sort_desc):
        if value and value not in sortable:
            raise ApiError(f"Cannot sort table by {value}")
    pairs = [(key, value) for key in params if is_filter_key(key) for value in params.getlist(key)]
    labels = None
    if "_label" in params:
        labels = params.getlist("_label")
    elif as_boolean(first(params, "_labels", "")):
        labels = [fk.column for fk in table.foreign_keys]
    shape = first(params, "_shape", "arrays")
    return TableRequest(
        table=table,
        columns=_columns(table, params),
        selections=selections(pairs),
        sort=sort or sort_desc or None,
        sort_desc=bool(sort_desc),
        size=_size(first(params, "_size")),
        next=first(params, "_next") or None,
        search={key: first(params, key, "") for key in params if is_search_key(key)},
        search_raw=first(params, "_searchmode") == "raw",
        facets=_facets(params, table),
        facet_size=_facet_size(first(params, "_facet_size")),
        wheres=params.getlist("_where"),
        labels=labels,
        nocount=bool(first(params, "_nocount")) or shape in ("array", "object"),
        nofacet=bool(first(params, "_nofacet")) or shape in ("array", "object"),
        stream=bool(first(params, "_stream")),
        download=bool(first(params, "_dl")),
        header=first(params, "_header") != "off",
    )
