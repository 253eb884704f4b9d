"""One page of a table URL, as Datasette 0.65 put it together: the rows and every JSON key,
in Datasette's order, with the role's policy applied.
"""

from __future__ import annotations

import time
from dataclasses import asdict, replace
from urllib.parse import parse_qsl, urlencode

from django.conf import settings

from hermes_explorer import store
from hermes_explorer.hermes_db.catalog import Catalog, TableInfo
from redaction import redact

from . import policy, query, tokens
from .errors import ApiError
from .facets import facet_results
from .operators import Binder, column_sql, human_description, key_equals, quote
from .params import TableRequest, parse
from .search import Recheck, search_clauses
from .sql import run_console

COUNT_BUDGET = 1.0  # seconds: past it, filtered_table_rows_count is null
RECHECK_BUDGET = 1.0  # seconds of re-checked counting before the count gives up (null)


def page_budget() -> float:
    return float(settings.HERMES_QUERY_TIMEOUT)


class Builder:
    """The statements of one table URL: its plan, its runner and its re-check."""

    def __init__(self, req: TableRequest, catalog: Catalog, pol: policy.Policy):
        self.req, self.catalog, self.policy = req, catalog, pol
        self.search = search_clauses(catalog, req, Binder(), hidden=not pol.staff)
        self.extra = list(self.search.clauses) if self.search else []
        if req.wheres:
            if not pol.may_use_sql:
                raise ApiError("_where= is not allowed", status=403)
            self.extra += [f"({w})" for w in req.wheres]
        self.run = run_console if req.wheres else query.run_store
        # Free-text metadata is filtered and sorted as shown (redacted) on the store; the
        # console's SQL (staff) compares the stored text.
        self.seen = frozenset() if req.wheres else policy.metadata_columns(req.table.name)
        self.recheck = None
        if self.search and (not pol.staff or self.search.relaxed):
            if len(req.key) != 1 or not (req.table.use_rowid or _is_rowid(req.table)):
                raise ApiError("Search on this table is for staff only.", status=403)
            self.recheck = Recheck(catalog, self.search)
        self.plan = self.plan_for(req.next)

    def plan_for(self, token: str | None) -> query.Plan:
        """The statement resuming after ``token`` (search values bound first, so every plan
        has the same parameter names)."""
        binder = Binder()
        if self.search:
            search_clauses(self.catalog, self.req, binder, hidden=not self.policy.staff)
        return query.plan(
            replace(self.req, next=token),
            extra=self.extra,
            binder=binder,
            seen=self.seen,
        )

    def rows(self, limit: int) -> tuple[list[str], list[tuple]]:
        """Up to ``limit`` rows of the page (re-checked ones only, for roles that need it)."""
        req = self.req
        if req.sort and not req.next and self.recheck is None:
            return self.run(self.plan.page(limit, order=self.plan.sort_only), budget=page_budget())
        columns, rows = self.run(self.plan.page(limit), budget=page_budget())
        if self.recheck is None:
            return columns, rows
        key_at = columns.index(self.req.key[0])
        kept_rows: list[tuple] = []
        deadline = time.monotonic() + page_budget()
        while True:
            keep = self.recheck.keep([r[key_at] for r in rows], deadline)
            kept_rows += [r for r in rows if r[key_at] in keep]
            if len(kept_rows) >= limit or len(rows) < limit:
                return columns, kept_rows[:limit]
            if time.monotonic() > deadline:
                raise ApiError("The search ran out of time while checking redacted text.")
            token = self.token_after(columns, rows[-1])
            columns, rows = self.run(self.plan_for(token).page(limit), budget=page_budget())

    def token_after(self, columns: list[str], row: tuple) -> str:
        """The ``_next`` token resuming after ``row``: its sort value looked up when ``_col``
        left the sort column out, a free-text metadata one redacted as shown."""
        last, sort = dict(zip(columns, row, strict=True)), self.req.sort
        if sort and sort not in last:
            last[sort] = _sort_value(self, self.req, last)
        if sort in self.seen:
            last[sort] = redact(last[sort])
        return row_token(self.req, last)

    def count(self) -> int | None:
        if self.recheck is None:
            return query.cached_count(self.plan.matching("count(*)"), self.run, budget=COUNT_BUDGET)
        statement = self.plan.matching(column_sql(self.req.key[0]))
        deadline, total = time.monotonic() + RECHECK_BUDGET, 0
        try:
            for batch in query.iter_store(statement, budget=COUNT_BUDGET):
                total += len(self.recheck.keep([r[0] for r in batch], deadline))
                if time.monotonic() > deadline:
                    return None
        except Exception:  # noqa: BLE001 - a count that cannot finish is null, never an error
            return None
        return total


def _is_rowid(table: TableInfo) -> bool:
    """A single INTEGER PRIMARY KEY is the rowid itself (messages.id)."""
    return table.types[table.columns.index(table.pks[0])].upper() in ("INTEGER", "BIGINT")


def row_token(req: TableRequest, row: dict) -> str:
    return tokens.next_token([row[k] for k in req.key], row.get(req.sort), sorted_=bool(req.sort))


def _label_column(info: TableInfo | None) -> str | None:
    if info is None:
        return None
    named = [c for c in info.columns if c.lower() in ("name", "title")]
    if named:
        return named[0]
    if len(info.columns) == 2 and ("id" in info.columns or "pk" in info.columns):
        return [c for c in info.columns if c not in ("id", "pk")][0]
    return None


def labels_for(catalog: Catalog, table: TableInfo, user):
    """A function giving ``{value: label}`` for one foreign-key column's values."""

    def lookup(column: str, values: list) -> dict:
        fk = next((f for f in table.foreign_keys if f.column == column), None)
        if fk is None or not values:
            return {}
        other = catalog.table(fk.other_table)
        label = _label_column(other)
        if label is None:
            return {v: str(v) for v in values}
        other_column = fk.other_column or (other.pks[0] if other.pks else "rowid")
        binder = Binder()
        marks = ", ".join(binder.bind(v) for v in dict.fromkeys(values))
        statement = query.Statement(
            f"select {quote(other_column)}, {quote(label)} from {quote(fk.other_table)} "
            f"where {quote(other_column)} in ({marks})",
            binder.params,
        )
        try:
            _c, rows = query.run_store(statement, budget=COUNT_BUDGET)
        except ApiError:
            return {}
        shown = policy.for_table(user, fk.other_table)
        return {v: shown.value(label, lab) for v, lab in rows}

    return lookup


def expand_labels(columns: list[str], values: list[list], wanted: list[str], lookup) -> list[str]:
    """The ``wanted`` columns that got labels: in ``values`` (a list per column), each of their
    values with a label becomes ``{"value": …, "label": …}``."""
    expanded = []
    for name in wanted:
        if name not in columns or not values:
            continue
        i = columns.index(name)
        found = lookup(name, [v for v in values[i] if v is not None])
        if found:
            expanded.append(name)
            values[i] = [{"value": v, "label": found[v]} if v in found else v for v in values[i]]
    return expanded


def next_url(request, req: TableRequest, token: str) -> str:
    """Datasette's next_url: the query string without blank values, with ``_next`` appended."""
    added = {"_next": token}
    if req.sort:
        added["_sort_desc" if req.sort_desc else "_sort"] = req.sort
    pairs = [(k, v) for k, v in parse_qsl(request.META.get("QUERY_STRING", "")) if k not in added]
    pairs += list(added.items())
    return request.build_absolute_uri(request.path + "?" + urlencode(pairs))


def fetch(b: Builder) -> tuple[list[str], list[tuple], str | None]:
    """The page's column names, its rows (as stored) and the next token (None: last page)."""
    req = b.req
    columns, rows = b.rows(req.size + 1)
    if not (0 < req.size < len(rows)):
        return columns, list(rows[: req.size]), None
    return columns, list(rows[: req.size]), b.token_after(columns, rows[req.size - 1])


def table_page(request, info: TableInfo, *, user) -> tuple[dict, list[str], list[list]]:
    """One page of ``info`` for the URL's parameters: its JSON data, and its columns (rowid
    first for rowid tables) and rows with the policy applied."""
    catalog = store.shape().catalog
    req = parse(info, request.GET)
    pol = policy.for_table(user, info.name)
    b = Builder(req, catalog, pol)
    columns, rows, next_value = fetch(b)
    count = None if req.nocount else b.count()
    facets: dict = {}
    lookup = labels_for(catalog, info, user)
    if not req.nofacet and req.facets:
        facets = facet_results(
            request, req, b.plan.base(), b.run, policy=pol, labels=lookup, seen=b.seen
        )
    rows = pol.rows(columns, rows)
    expanded = []
    if req.labels and rows:
        values = [list(c) for c in zip(*rows, strict=True)]
        expanded = expand_labels(columns, values, req.labels, lookup)
        rows = [list(r) for r in zip(*values, strict=True)]
    descriptions = list(b.search.descriptions) if b.search else []
    descriptions += [
        s.operator.describe(s.column, s.value) for s in req.selections if s.operator is not None
    ]
    human = human_description(descriptions)
    if req.sort:
        sorted_by = f"sorted by {req.sort}{' descending' if req.sort_desc else ''}"
        human = " ".join(b for b in (human, sorted_by) if b)
    shown = b.plan.page(req.size + 1)
    # Datasette turned every row into an object once a label was expanded.
    listed = [dict(zip(columns, r, strict=True)) for r in rows] if expanded else rows
    data = {
        "database": "state",
        "table": info.name,
        "is_view": False,
        "human_description_en": human,
        "rows": listed,
        "truncated": False,
        "filtered_table_rows_count": count,
        "expanded_columns": expanded,
        "expandable_columns": [
            [asdict(fk), _label_column(catalog.table(fk.other_table))] for fk in info.foreign_keys
        ],
        "columns": columns,
        "primary_keys": list(info.pks),
        "units": {},
        "query": {"sql": shown.sql, "params": shown.params},
        "facet_results": facets,
        "suggested_facets": [],
        "next": next_value,
        "next_url": next_url(request, req, next_value) if next_value else None,
        "private": False,
        "allow_execute_sql": pol.may_use_sql,
    }
    return data, columns, rows


def _sort_value(b: Builder, req: TableRequest, row: dict):
    """The sort value of a row whose sort column was left out with ``_col``/``_nocol``."""
    binder = Binder()
    where = key_equals(req.key, [row[k] for k in req.key], binder)
    statement = query.Statement(
        f"select {quote(req.sort)} from {quote(req.table.name)} where {where}", binder.params
    )  # the stored value: the caller redacts a metadata one
    _c, rows = b.run(statement, budget=COUNT_BUDGET)
    return rows[0][0] if rows else None


def stream(request, info: TableInfo, *, user, chunk_size: int = 1000):
    """Every row of the URL's table and filters, ``chunk_size`` rows a statement, as
    ``(columns, values)`` (a list per column) with the role's policy applied."""
    catalog = store.shape().catalog
    req = parse(info, request.GET)
    req.size = chunk_size
    pol = policy.for_table(user, info.name)
    b = Builder(req, catalog, pol)
    while True:
        columns, rows, token = fetch(b)
        values = [list(c) for c in zip(*rows, strict=True)] if rows else []
        del rows
        yield columns, pol.columns(columns, values)
        if token is None:
            return
        b = Builder(replace(req, next=token), catalog, pol)
