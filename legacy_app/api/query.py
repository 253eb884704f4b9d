"""The statements behind a table URL (``:p0``-style parameters, as Datasette showed them),
and the store they run on (``_where``, staff's raw SQL, runs through the SQL console).

Order: the sort column, then the primary key (or rowid), as Datasette ordered every page after
a ``_next`` token; its sorted first page was ordered by the sort column alone (ties in SQLite's
order), and so is the explorer's (``Plan.sort_only``): a walk gives Datasette's rows, page by
page, token by token.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.db import DatabaseError

from hermes_explorer import dialect, store
from hermes_explorer.hermes_db.deadline import QueryTimeout
from hermes_explorer.middleware import describe_store_fault
from redaction import redact

from . import tokens
from .errors import ApiError
from .operators import Binder, column_sql, number_kind, quote
from .params import TableRequest

# Counts of a filtered table, per file version, in the shared cache: a next_url loop counts
# once, whichever worker answers each page.
COUNT_TTL = 300


@dataclass
class Statement:
    sql: str
    params: dict
    table: str = ""  # the table whose columns ``hermes_redact`` reads


@dataclass
class Plan:
    request: TableRequest
    binder: Binder
    filters: list[str] = field(default_factory=list)  # filters, search, _where
    after: list[str] = field(default_factory=list)  # the rows after _next
    order: list[str] = field(default_factory=list)

    def _statement(self, selected: str, clauses: list[str], tail: str = "") -> Statement:
        where = f" where {' and '.join(clauses)}" if clauses else ""
        table = self.request.table.name
        sql = f"select {selected} from {quote(table)}{where}{tail}"
        return Statement(sql, dict(self.binder.params), table)

    def select_list(self, columns: list[str]) -> str:
        names = [quote(c) for c in columns]
        if self.request.table.use_rowid:
            names.insert(0, "rowid")
        return ", ".join(names) or "rowid"

    def page(self, limit: int, *, order: list[str] | None = None) -> Statement:
        order = self.order if order is None else order
        tail = (f" order by {', '.join(order)}" if order else "") + f" limit {int(limit)}"
        columns = self.select_list(self.request.columns)
        return self._statement(columns, self.filters + self.after, tail)

    @property
    def sort_only(self) -> list[str]:
        """Datasette's order on a sorted first page: the sort column alone (ties as stored)."""
        return self.order[:1] + dialect.stored_order()

    def matching(self, selected: str) -> Statement:
        """``selected`` over every row the filters match, whatever ``_next`` (as counted)."""
        return self._statement(selected, self.filters)

    def base(self) -> Statement:
        """Every column of the matching rows after ``_next``, unordered (what facets count)."""
        columns = self.select_list(list(self.request.table.columns))
        return self._statement(columns, self.filters + self.after)


def plan(request: TableRequest, *, extra: list[str], binder: Binder, seen: frozenset[str]) -> Plan:
    """The clauses of ``request``: its filters, ``extra`` (search, ``_where``), ``_next``;
    ``seen`` columns are filtered and sorted on their redacted value."""
    p = Plan(request=request, binder=binder)
    p.filters = [
        s.operator.where(request.table, s.column, s.value, binder, s.column in seen)
        for s in request.selections
        if s.operator is not None
    ] + extra
    sort = column_sql(request.sort) if request.sort else None
    if request.sort in seen:
        sort = f"hermes_redact({sort})"
    if request.next:
        p.after = tokens.after(
            request.next, key=request.key, sort=sort, desc=request.sort_desc, binder=binder
        )
    if sort:
        text = not number_kind(request.table, request.sort)
        p.order.append(dialect.sqlite_order(sort, request.sort_desc, text))
    p.order += [column_sql(k) for k in request.key if k != request.sort]
    return p


_BOUND = re.compile(r"(?<![:\w]):(p\d+)\b")
# A bare ``rowid``: a PostgreSQL table has none, a row is keyed by its place (``ctid``) there.
_ROWID = re.compile(r'(?<![\w"])rowid\b(?!")')
_REDACTED = re.compile(r'hermes_redact\("((?:[^"]|"")+)"\)')


def _store_sql(statement: Statement) -> tuple[str, dict]:
    """The statement as the store's cursor takes it: a "%" (in a quoted name) doubled, since
    Django's cursor formats it; on PostgreSQL, ``%(p0)s`` parameters, and ``hermes_redact``
    (an SQLite function of the explorer's) as the redacted values of the column's texts."""
    sql, params = statement.sql.replace("%", "%%"), dict(statement.params)
    if not dialect.postgres():
        return sql, params
    sql = _ROWID.sub("ctid", _BOUND.sub(r"%(\1)s", sql))

    def shown(match: re.Match) -> str:
        column = match.group(1).replace('""', '"')
        pairs = redacted_values(statement.table, column)
        if not pairs:
            return quote(column)
        whens = []
        for stored, seen in pairs:
            n = len(params)
            params[f"r{n}"], params[f"r{n + 1}"] = stored, seen
            whens.append(f"when %(r{n})s then %(r{n + 1})s")
        return f"(case {quote(column)} {' '.join(whens)} else {quote(column)} end)"

    return _REDACTED.sub(shown, sql), params


def redacted_values(table: str, column: str) -> list[tuple[str, str]]:
    """``(stored, shown)`` for each text of ``table.column`` that redaction changes."""

    def compute() -> list[tuple[str, str]]:
        found = store.rows(f"select distinct {quote(column)} from {quote(table)}")
        return [(v, shown) for (v,) in found if v is not None and (shown := redact(v)) != v]

    return store.while_unchanged("legacy-redacted", (table, column), compute, COUNT_TTL)


def run_store(statement: Statement, *, budget: float) -> tuple[list[str], list[tuple]]:
    """Columns and rows of ``statement`` on the store, within ``budget`` seconds."""
    try:
        with store.cursor(budget=budget) as cur:
            cur.execute(*_store_sql(statement))
            columns = [d[0] for d in cur.description or ()]
            if dialect.postgres() and columns[:1] == ["ctid"]:
                columns[0] = "rowid"
            return columns, cur.fetchall()
    except QueryTimeout as exc:
        raise ApiError(
            f"SQL query took too long: it ran past its {exc.budget:g} s limit and was "
            "stopped. Filter on an indexed column (sessions.started_at, sessions.source, "
            "messages.session_id), sort by one, or use a smaller _size.",
            title="SQL Interrupted",
        ) from exc
    except DatabaseError as exc:
        fault = describe_store_fault(exc)
        if fault and not str(exc).startswith("no such"):
            raise ApiError(fault, status=503, title="State database unavailable") from exc
        raise ApiError(str(exc), title="Invalid SQL") from exc


def iter_store(statement: Statement, *, budget: float, batch: int = 500):
    """Rows of ``statement`` in batches, for a scan that may stop early (a re-check count)."""
    with store.cursor(budget=budget) as cur:
        cur.execute(*_store_sql(statement))
        while True:
            rows = cur.fetchmany(batch)
            if not rows:
                return
            yield rows


def cached_count(statement: Statement, run, *, budget: float) -> int | None:
    """``select count(*)`` within ``budget`` (None past it), remembered per file version."""

    def count() -> int | None:
        try:
            _columns, rows = run(statement, budget=budget)
        except ApiError as exc:
            if exc.title == "SQL Interrupted":
                return None
            raise
        return rows[0][0] if rows else None

    parts = (statement.sql, sorted(statement.params.items()))
    return store.while_unchanged("legacy-count", parts, count, COUNT_TTL)
