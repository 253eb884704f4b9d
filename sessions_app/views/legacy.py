"""The old Datasette URLs on the database ``state`` keep working.

The team's bookmarks and scripts point at the Datasette instance this explorer replaces
(``/state``, ``/state/sessions?source=telegram&_sort_desc=started_at``,
``/state/messages.csv?session_id=…``, ``/state/messages?_search=…``). Each URL is read the way
Datasette read it — ``col=value`` (exact), ``col__op=value`` column filters, ``_sort`` /
``_sort_desc``, ``_search``, ``_size``, ``_next`` — and answered:

* by a redirect to the explorer's own page (``/sessions/``, ``/messages/``, ``/search/``, a
  session or a message) when its parameters say exactly the same thing;
* otherwise directly, with a table of exactly those rows (filters and sorts the explorer's
  pages do not offer, Datasette's page size and ``_next`` tokens);
* ``.csv`` / ``.json``: the explorer's streamed export of the same rows (``_export=``).
  NOTE: the export gives every matching row, where Datasette gave one page (unless
  ``_stream=on``); and Datasette's default ``.json`` was an object
  ``{"columns": […], "rows": [[…], …], "next": …}``, where the explorer's JSON export is a
  list of row objects, i.e. Datasette's ``?_shape=array``.

Unknown parameters are ignored and said so (on the page, or as a message after a redirect).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from urllib.parse import unquote

from django.contrib import messages as flash
from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_GET

from hermes_explorer import store
from hermes_explorer.hermes_db.deadline import QueryTimeout, query_budget

from .. import selectors
from ..models import Message, Session
from ..pagination import Keyset
from ..tables import MessageTable, SessionTable

DATASETTE_PAGE = 100  # Datasette's default _size
DATASETTE_MAX_PAGE = 1000  # and its max_returned_rows
DIRECT_BUDGET = 2.0

MODELS = {"sessions": Session, "messages": Message}
OPS = {
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
    "isnull",
    "notnull",
    "isblank",
    "notblank",
}
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
# Sorts an index answers, per table (the rest would sort the whole table).
DIRECT_SORTS = {
    "sessions": {"id", "started_at", "source"},
    "messages": {"id", "timestamp"},
}


# --- Reading a Datasette query string ----------------------------------------------------


def tilde_decode(value: str) -> str:
    """Datasette's tilde encoding (``~2C`` for ``,``, ``+`` for a space) back to text."""
    if "~" not in value and "+" not in value:
        return value
    return unquote(value.replace("%", "%25").replace("+", " ").replace("~", "%"))


def tilde_encode(value: str) -> str:
    safe = re.compile(r"[A-Za-z0-9_\-]")
    out = []
    for ch in value:
        if safe.match(ch):
            out.append(ch)
        elif ch == " ":
            out.append("+")
        else:
            out.extend(f"~{b:02X}" for b in ch.encode())
    return "".join(out)


@dataclass(frozen=True)
class ColumnFilter:
    column: str
    op: str
    value: str


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


def _columns(table: str, shape) -> dict[str, object]:
    """Columns of ``table`` this file has and the explorer's model knows: column → field."""
    model = MODELS[table]
    return {
        f.column: f
        for f in model._meta.concrete_fields
        if shape.has_column(table, f.column) or f.primary_key
    }


def parse(table: str, params: QueryDict, shape) -> LegacyQuery:
    query = LegacyQuery(table=table)
    columns = _columns(table, shape)
    for key in params:
        values = params.getlist(key)
        value = values[-1]
        if key in ("_sort", "_sort_desc"):
            if value == "rowid" and table == "messages":
                value = "id"  # an INTEGER PRIMARY KEY is the rowid
            if value in columns:
                query.sort, query.sort_desc = value, key == "_sort_desc"
            else:
                query.notes.append(f"Sorting by “{value}” is not possible here: ignored.")
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
                    query.notes.append(f"Page size “{value}” is not a number: ignored.")
        elif key == "_next":
            query.next = value
        elif key in IGNORED_OPTIONS or key.startswith("_facet"):
            query.notes.append(f"Datasette option “{key}” has no equivalent here: ignored.")
        else:
            column, _, op = key.partition("__")
            op = op or "exact"
            if column not in columns:
                query.notes.append(f"Unknown parameter “{key}”: ignored.")
            elif op not in OPS:
                query.notes.append(f"Filter “__{op}” is not supported: “{key}” ignored.")
            else:
                query.filters += [ColumnFilter(column, op, v) for v in values]
    return query


# --- The rows a Datasette query meant ------------------------------------------------------


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


def _list(value: str) -> list[str]:
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
            return Q(**{f"{name}__in": [_typed(model_field, v) for v in _list(f.value)]})
        case "notin":
            values = [_typed(model_field, v) for v in _list(f.value)]
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
    model = MODELS[query.table]
    columns = _columns(query.table, shape)
    qs = model.objects.all()
    for f in query.filters:
        try:
            qs = qs.filter(filter_q(columns[f.column], f))
        except BadValue:
            query.notes.append(
                f"“{f.value}” is not a valid value for {f.column}: no row can match it."
            )
            qs = qs.none()
    return qs


# --- Translating to the explorer's own pages -----------------------------------------------


def _single(query: LegacyQuery, column: str, op: str) -> str | None:
    found = [f for f in query.filters if f.column == column]
    if len(found) == 1 and found[0].op == op:
        return found[0].value
    return None


def _plain_like(value: str) -> bool:
    # Datasette's LIKE patterns were not escaped; ours are: same rows only without wildcards.
    return "%" not in value and "_" not in value


SESSION_PARAMS = {
    ("source", "exact"): "source",
    ("user_id", "exact"): "user_id",
    ("end_reason", "exact"): "end_reason",
    ("title", "contains"): "title",
    ("estimated_cost_usd", "gte"): "min_cost",
    ("estimated_cost_usd", "lte"): "max_cost",
    ("message_count", "gte"): "min_messages",
}
SESSION_SORTS = {("started_at", False), ("started_at", True), ("source", False), ("source", True)}
MESSAGE_PARAMS = {
    ("session_id", "exact"): "session_id",
    ("role", "exact"): "role",
    ("tool_name", "exact"): "tool_name",
}
COST_STATUSES = {"estimated", "actual", "included", "unknown"}


@dataclass
class Translation:
    params: list[tuple[str, str]]
    exact: bool
    notes: list[str] = field(default_factory=list)


def translate_sessions(query: LegacyQuery) -> Translation:
    params: list[tuple[str, str]] = []
    exact = True
    notes: list[str] = []
    seen: set[str] = set()
    for f in query.filters:
        key = (f.column, f.op)
        if f.column in seen:
            exact = False  # Datasette ANDs repeated filters on one column
        seen.add(f.column)
        if key in SESSION_PARAMS and (f.op != "contains" or _plain_like(f.value)):
            params.append((SESSION_PARAMS[key], f.value))
        elif key == ("source", "in"):
            params += [("source", v) for v in _list(f.value)]
        elif key == ("cost_status", "exact") and f.value in COST_STATUSES:
            params.append(("cost_status", f.value))
        elif key == ("cost_status", "isnull"):
            params.append(("cost_status", "none"))
        elif key == ("parent_session_id", "isnull"):
            params.append(("has_parent", "false"))
        elif key == ("parent_session_id", "notnull"):
            params.append(("has_parent", "true"))
        else:
            exact = False
    if query.sort is None:
        notes.append(
            "Datasette listed sessions by id; the explorer lists them newest first "
            "(click a column header to change it)."
        )
        if query.next:
            exact = False
    elif (query.sort, query.sort_desc) in SESSION_SORTS:
        sort = ("-" if query.sort_desc else "") + query.sort
        params.append(("sort", sort))
        if query.next:
            cursor = _cursor("sessions", selectors.SESSION_SORTS[sort], query.next)
            if cursor is None:
                exact = False
            else:
                params.append(("cursor", cursor))
    else:
        exact = False
    if query.size is not None:
        notes.append(
            "The explorer's session pages hold 50 sessions; Datasette's _size was not kept."
        )
    return Translation(params=params, exact=exact, notes=notes)


def translate_messages(query: LegacyQuery, shape) -> Translation:
    params: list[tuple[str, str]] = []
    exact = True
    seen: set[str] = set()
    for f in query.filters:
        if f.column in seen:
            exact = False
        seen.add(f.column)
        key = (f.column, f.op)
        if key in MESSAGE_PARAMS:
            params.append((MESSAGE_PARAMS[key], f.value))
        else:
            exact = False
    # Datasette showed every row: compacted, rewound and hidden ones too.
    if shape.has_column("messages", "active") or shape.has_column("messages", "display_kind"):
        params += [("show", "compacted"), ("show", "rewound"), ("show", "hidden")]
    if query.sort in (None, "id"):
        # Datasette's default order is the primary key, ascending.
        sort = "-id" if query.sort_desc else "id"
        params.append(("sort", sort))
        if query.next:
            cursor = _cursor("messages", selectors.MESSAGE_SORTS[sort], query.next)
            if cursor is None:
                exact = False
            else:
                params.append(("cursor", cursor))
    else:
        exact = False
    # Datasette's pages held 100 rows unless _size said otherwise.
    params.append(("size", str(query.size or DATASETTE_PAGE)))
    return Translation(params=params, exact=exact)


KEY_TYPES = {
    "sessions": {"id": str, "started_at": float, "source": str},
    "messages": {"id": int, "timestamp": float},
}


def _cursor(table: str, keyset: Keyset, token: str) -> str | None:
    """Datasette's ``_next`` (``<pk>`` or ``<sort value>,<pk>``) as our keyset cursor."""
    values = next_values(table, keyset, token)
    if values is None:
        return None
    return keyset.encode(dict(zip([k for k, _ in keyset.keys], values, strict=True)), "n")


def next_values(table: str, keyset: Keyset, token: str) -> list | None:
    """The key values in a Datasette ``_next`` token, typed; None when it does not fit."""
    parts = [tilde_decode(p) for p in token.split(",")]
    if len(parts) != len(keyset.keys) or "$null" in parts:
        return None
    values: list = []
    for (name, _desc), part in zip(keyset.keys, parts, strict=True):
        kind = KEY_TYPES[table].get(name)
        if kind is None:
            return None
        try:
            values.append(kind(part))
        except ValueError:
            return None
    return values


def translate_search(query: LegacyQuery) -> Translation:
    params: list[tuple[str, str]] = [("q", query.search or "")]
    notes: list[str] = []
    if query.search_raw:
        params.append(("mode", "advanced"))
    if query.sort in ("id", "timestamp") and query.sort_desc:
        params.append(("sort", "newest"))
    for f in query.filters:
        key = (f.column, f.op)
        if key in MESSAGE_PARAMS and len(query.filter_for(f.column)) == 1:
            params.append((MESSAGE_PARAMS[key], f.value))
        else:
            notes.append(f"The filter {f.column}__{f.op} is not applied to search results.")
    return Translation(params=params, exact=not notes, notes=notes)


# --- Views ---------------------------------------------------------------------------------


def _with_params(url: str, params: list[tuple[str, str]]) -> str:
    query = QueryDict(mutable=True)
    for key, value in params:
        query.appendlist(key, value)
    encoded = query.urlencode()
    return f"{url}?{encoded}" if encoded else url


def _redirect(request: HttpRequest, url: str, notes: list[str]) -> HttpResponse:
    for note in notes:
        flash.info(request, note)
    return redirect(url)


@require_GET
def database(request: HttpRequest, fmt: str | None = None) -> HttpResponse:
    """``/state``: Datasette's page of the database; ``?sql=`` was its SQL editor."""
    if "sql" in request.GET:
        try:
            console = reverse("sql:console")
        except NoReverseMatch:
            return render(
                request,
                "legacy/sql_unavailable.html",
                {"sql": request.GET.get("sql", "")},
                status=200,
            )
        return redirect(console + "?" + request.GET.urlencode())
    shape = store.shape()
    return render(request, "legacy/database.html", {"shape": shape})


@require_GET
def table(request: HttpRequest, table: str, fmt: str | None = None) -> HttpResponse:
    if table not in MODELS:
        raise Http404(
            f"The old address /state/{table} has no page in the explorer "
            "(only sessions and messages were browsed there)."
        )
    shape = store.shape()
    query = parse(table, request.GET, shape)

    if query.search is not None:
        if table != "messages":
            query.notes.append("Datasette had no full-text search on sessions: _search ignored.")
        else:
            t = translate_search(query)
            notes = query.notes + t.notes
            if fmt:
                notes.append("Search results have no download: showing them as a page.")
            return _redirect(request, _with_params(reverse("search:results"), t.params), notes)

    if table == "sessions":
        if (
            len(query.filters) == 1
            and query.filters[0].column == "id"
            and query.filters[0].op == "exact"
            and not fmt
        ):
            return _to_session(request, query.filters[0].value, query.notes)
        t = translate_sessions(query)
        target = reverse("sessions:list")
    else:
        if (
            len(query.filters) == 1
            and query.filters[0].column == "id"
            and query.filters[0].op == "exact"
            and not fmt
        ):
            return _to_message(request, query.filters[0].value, query.notes)
        t = translate_messages(query, shape)
        target = reverse("messages:list")

    if t.exact:
        params = t.params + ([("_export", fmt)] if fmt else [])
        # A download has no page to show notes on.
        notes = [] if fmt else query.notes + t.notes
        return _redirect(request, _with_params(target, params), notes)
    return _direct(request, query, shape, fmt=fmt, closest=_with_params(target, t.params))


def _to_session(request: HttpRequest, session_id: str, notes: list[str]) -> HttpResponse:
    try:
        url = reverse("sessions:detail", args=[session_id])
    except NoReverseMatch as exc:
        raise Http404("No such session.") from exc
    return _redirect(request, url, notes)


def _to_message(request: HttpRequest, message_id: str, notes: list[str]) -> HttpResponse:
    try:
        pk = int(message_id)
    except ValueError as exc:
        raise Http404("No such message.") from exc
    message = Message.objects.only("id", "session").filter(pk=pk).first()
    if message is None:
        raise Http404("No such message in this state.db.")
    try:
        url = reverse("sessions:message", args=[message.session_id, message.id])
    except NoReverseMatch as exc:
        raise Http404("This message's session id cannot be linked.") from exc
    return _redirect(request, url, notes)


@require_GET
def row(request: HttpRequest, table: str, pk: str, fmt: str | None = None) -> HttpResponse:
    """Datasette's row pages: ``/state/sessions/<id>`` and ``/state/messages/<id>``."""
    pk = tilde_decode(pk)
    if table == "sessions":
        return _to_session(request, pk, [])
    if table == "messages":
        return _to_message(request, pk, [])
    raise Http404(f"The old address /state/{table}/… has no page in the explorer.")


def _direct_keyset(query: LegacyQuery) -> Keyset:
    desc = query.sort_desc
    if query.sort in (None, "id"):
        return Keyset((("id", desc),), name=("-" if desc else "") + "id")
    return Keyset(((query.sort, desc), ("id", desc)), name=("-" if desc else "") + query.sort)


def _direct(
    request: HttpRequest, query: LegacyQuery, shape, *, fmt: str | None, closest: str
) -> HttpResponse:
    """Answer an old URL whose filters the explorer's pages cannot say: the same rows, with
    Datasette's paging (``_size``, ``_next``)."""
    qs = filtered_queryset(query, shape)  # may add notes about values that cannot match
    notes = list(query.notes)
    if fmt:
        notes.append(
            f"This download ({fmt.upper()}) uses filters the explorer's export does not carry: "
            "the rows are shown as a page instead."
        )
    if query.sort is not None and query.sort not in DIRECT_SORTS[query.table]:
        notes.append(f"Sorting by {query.sort} would sort the whole table: sorted by id instead.")
        query.sort, query.sort_desc = None, False
    keyset = _direct_keyset(query)
    size = query.size or DATASETTE_PAGE
    if query.table == "sessions":
        qs = selectors.sessions_for_table(qs, sort="")
    else:
        qs = selectors.messages_for_table(qs)
    values = None
    if query.next:
        values = next_values(query.table, keyset, query.next)
        if values is None:
            notes.append("The _next marker could not be read: showing the first page.")
    rows, next_token, timed_out = [], None, False
    try:
        with query_budget(DIRECT_BUDGET):
            if values is not None:
                qs = qs.filter(keyset.after(values))
            rows = list(qs.order_by(*keyset.order_by())[: size + 1])
    except QueryTimeout:
        timed_out = True
    if len(rows) > size:
        rows = rows[:size]
        next_token = ",".join(tilde_encode(str(v)) for v in keyset.values_of(rows[-1]))
    if query.table == "sessions":
        table_obj = SessionTable(rows, order_by=None, shape=shape, orderable=False)
    else:
        table_obj = MessageTable(selectors.link_messages(rows), order_by=None, orderable=False)
    next_url = None
    if next_token:
        params = request.GET.copy()
        params["_next"] = next_token
        next_url = request.path + "?" + params.urlencode()
    return render(
        request,
        "legacy/table.html",
        {
            "legacy_table": query.table,
            "table": table_obj,
            "notes": notes,
            "filters": query.filters,
            "closest": closest,
            "next_url": next_url,
            "timed_out": timed_out,
            "budget": DIRECT_BUDGET,
            "shape": shape,
        },
    )
