"""Datasette's query-string vocabulary, read into a :class:`LegacyQuery`.

A Datasette table URL says what it wants with ``col=value`` (exact), ``col__op=value`` column
filters, ``_sort`` / ``_sort_desc``, ``_search`` / ``_searchmode``, ``_size`` and ``_next``.
:func:`parse` reads those against the columns the open file has; :func:`filter_q` gives each
column filter Datasette's meaning as a ``Q`` on the explorer's model.  Unknown parameters and
operators are kept as notes (said on the page), never errors.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from django.db.models import Q
from django.http import QueryDict
from django.utils.translation import gettext

from sessions_app.models import Message, Session

from .api.operators import column_and_op as api_column_and_op

DATASETTE_PAGE = 100  # Datasette's default _size
DATASETTE_MAX_PAGE = 1000  # and its max_returned_rows

MODELS = {"sessions": Session, "messages": Message}

# Operators that compare a column with the value in the URL.
COMPARING_OPS = frozenset(
    {
        "exact",
        "not",
        "contains",
        "notcontains",
        "startswith",
        "endswith",
        "gt",
        "gte",
        "lt",
        "lte",
        "in",
        "notin",
    }
)
# Operators that only ask whether a value is there.
PRESENCE_OPS = frozenset({"isnull", "notnull", "isblank", "notblank"})
OPS = COMPARING_OPS | PRESENCE_OPS
SORT_PARAMS = ("_sort", "_sort_desc")
# Datasette options that change presentation only, or that we do not offer.
IGNORED_OPTIONS = {
    "_facet",
    "_facet_array",
    "_facet_date",
    "_facet_size",
    "_col",
    "_nocol",
    "_labels",
    "_nolabels",
    "_shape",
    "_json",
    "_json_infinity",
    "_nl",
    "_stream",
    "_dl",
    "_where",
    "_through",
    "_nofacet",
    "_nocount",
    "_nosuggest",
    "_trace",
    "_timelimit",
    "_ttl",
    "_hash",
    "_extra",
}


@dataclass(frozen=True)
class ColumnFilter:
    column: str
    op: str
    value: str

    @property
    def shows_value(self) -> bool:
        return self.op not in PRESENCE_OPS


@dataclass
class LegacyQuery:
    table: str
    filters: list[ColumnFilter] = field(default_factory=list)
    sort: str | None = None
    sort_desc: bool = False
    search: str | None = None
    search_raw: bool = False
    size: int | None = None
    next: str | None = None
    notes: list[str] = field(default_factory=list)

    def filter_for(self, column: str) -> list[ColumnFilter]:
        return [f for f in self.filters if f.column == column]

    @property
    def only_id(self) -> str | None:
        """The id when the URL names exactly one row by ``id=`` and nothing else."""
        if len(self.filters) == 1 and self.filters[0].column == "id":
            if self.filters[0].op == "exact":
                return self.filters[0].value
        return None


def column_and_op(key: str) -> tuple[str, str]:
    """``message_count__gte`` → ``("message_count", "gte")``; a bare column is ``exact``
    (the operator follows the last ``__``, as in Datasette and the API)."""
    return api_column_and_op(key)


def sort_column(table: str, value: str) -> str:
    """The column a ``_sort`` value names (an INTEGER PRIMARY KEY is the rowid)."""
    if value == "rowid" and table == "messages":
        return "id"
    return value


def columns(table: str, shape) -> dict[str, object]:
    """Columns of ``table`` this file has and the explorer's model knows: column → field."""
    model = MODELS[table]
    return {
        f.column: f
        for f in model._meta.concrete_fields
        if shape.has_column(table, f.column) or f.primary_key
    }


def parse(table: str, params: QueryDict, shape) -> LegacyQuery:
    query = LegacyQuery(table=table)
    known = columns(table, shape)
    for key in params:
        values = params.getlist(key)
        value = values[-1]
        if key in SORT_PARAMS:
            value = sort_column(table, value)
            if value in known:
                query.sort, query.sort_desc = value, key == "_sort_desc"
            else:
                query.notes.append(
                    gettext("Sorting by “%(value)s” is not possible here: ignored.")
                    % {"value": value}
                )
        elif key == "_search":
            query.search = value
        elif key == "_searchmode":
            query.search_raw = value == "raw"
        elif key == "_size":
            if value == "max":
                query.size = DATASETTE_MAX_PAGE
            else:
                try:
                    query.size = min(max(int(value), 1), DATASETTE_MAX_PAGE)
                except ValueError:
                    query.notes.append(
                        gettext("Page size “%(value)s” is not a number: ignored.")
                        % {"value": value}
                    )
        elif key == "_next":
            query.next = value
        elif key in IGNORED_OPTIONS or key.startswith("_facet"):
            query.notes.append(
                gettext("Datasette option “%(key)s” has no equivalent here: ignored.")
                % {"key": key}
            )
        else:
            column, op = column_and_op(key)
            if column not in known:
                query.notes.append(gettext("Unknown parameter “%(key)s”: ignored.") % {"key": key})
            elif op not in OPS:
                query.notes.append(
                    gettext("Filter “__%(op)s” is not supported: “%(key)s” ignored.")
                    % {"op": op, "key": key}
                )
            else:
                query.filters += [ColumnFilter(column, op, v) for v in values]
    return query


# --- What one column filter means ----------------------------------------------------------


class BadValue(ValueError):
    pass


def _typed(model_field, value: str):
    internal = model_field.get_internal_type()
    try:
        if internal in ("IntegerField", "AutoField", "BigAutoField"):
            number = float(value)
            return int(number) if number == int(number) else number
        if internal == "FloatField":
            return float(value)
    except (ValueError, OverflowError) as exc:
        raise BadValue(value) from exc
    return value


def value_list(value: str) -> list[str]:
    """An ``__in`` value: a JSON list, or comma-separated."""
    if value.startswith("["):
        try:
            items = json.loads(value)
        except ValueError:
            items = None
        if isinstance(items, list):
            return [str(v) for v in items]
    return value.split(",")


def filter_q(model_field, f: ColumnFilter) -> Q:
    """Datasette's meaning of one column filter, as a Q on the explorer's model."""
    name = model_field.attname
    text = model_field.get_internal_type() == "TextField"
    present = Q(**{f"{name}__isnull": False})
    match f.op:
        case "exact":
            return Q(**{name: _typed(model_field, f.value)})
        case "not":
            # SQL "!=": NULLs are not "different", as in Datasette.
            return present & ~Q(**{name: _typed(model_field, f.value)})
        case "contains" | "startswith" | "endswith":
            return Q(**{f"{name}__{f.op}": f.value})
        case "notcontains":
            return present & ~Q(**{f"{name}__contains": f.value})
        case "gt" | "gte" | "lt" | "lte":
            return Q(**{f"{name}__{f.op}": _typed(model_field, f.value)})
        case "in":
            return Q(**{f"{name}__in": [_typed(model_field, v) for v in value_list(f.value)]})
        case "notin":
            values = [_typed(model_field, v) for v in value_list(f.value)]
            return present & ~Q(**{f"{name}__in": values})
        case "isnull":
            return Q(**{f"{name}__isnull": True})
        case "notnull":
            return present
        case "isblank":
            return Q(**{f"{name}__isnull": True}) | (Q(**{name: ""}) if text else Q())
        case "notblank":
            return present & (~Q(**{name: ""}) if text else Q())
    raise BadValue(f.op)


def filtered_queryset(query: LegacyQuery, shape):
    """The model's rows under every column filter (ANDed, as in Datasette); a value a column
    cannot hold matches nothing and says so in ``query.notes``."""
    known = columns(query.table, shape)
    qs = MODELS[query.table].objects.all()
    for f in query.filters:
        try:
            qs = qs.filter(filter_q(known[f.column], f))
        except BadValue:
            query.notes.append(
                gettext("“%(value)s” is not a valid value for %(column)s: no row can match it.")
                % {"value": f.value, "column": f.column}
            )
            qs = qs.none()
    return qs
