"""``_search``, ``_search_<column>`` and ``_searchmode=raw`` with Datasette's semantics
(``docs/old-urls.md``).  No oracle: for roles that cannot reveal secrets the index finds candidates with the relaxed
query and a row matches only if the whole query matches its redacted text, re-checked in a
private in-memory index (:class:`Recheck`), as on the search page.
"""

from __future__ import annotations

import re
import sqlite3
import time
from dataclasses import dataclass

from hermes_explorer import dialect, store
from hermes_explorer.hermes_db.catalog import Catalog, TableInfo
from sessions_app.search import local_index, pg
from sessions_app.search.query import advanced_limit_error
from sessions_app.search.redacted import (
    candidates,
    clean,
    index_options,
    matching,
    query_error,
    searchable,
)

from .errors import ApiError
from .operators import Binder, column_sql, quote
from .params import TableRequest
from .query import Statement, run_store

# The index Datasette could not see, for the table whose rows it indexes.
KNOWN_INDEXES = {"messages": "messages_fts"}
_ESCAPE_SPLIT = re.compile(r'\s+|(".*?")')
# Ids of a schema's local word index bound into one statement at most (a commoner word scans).
LOCAL_IDS_CAP = 20_000
# Seconds to check that the local index was built for the schema's messages table.
LOCAL_INDEX_BUDGET = 1.0


def escape_fts(text: str) -> str:
    """Datasette's escaping: words become quoted tokens, quoted phrases stay phrases."""
    if text.count('"') % 2:
        text += '"'
    bits = [b for b in _ESCAPE_SPLIT.split(text) if b and b != '""']
    return " ".join(b if b.startswith('"') else f'"{b}"' for b in bits)


def index_for(catalog: Catalog, table: str) -> str | None:
    candidate = KNOWN_INDEXES.get(table)
    info = catalog.table(candidate) if candidate else None
    return catalog.fts_table(table) or (candidate if info is not None and info.virtual else None)


@dataclass
class Search:
    index: TableInfo
    clauses: list[str]
    descriptions: list[str]
    terms: list[tuple[str | None, str]]  # (column or None, the whole text of the search)
    # The SQL ran a relaxed query (no NOT operand, NEAR as AND): every candidate rechecked.
    relaxed: bool = False
    # Decided on the redacted text (the reader cannot read every secret).
    hidden: bool = True


def _vector_index(catalog: Catalog, table: str) -> TableInfo | None:
    """On a PostgreSQL schema, the columns Hermes's ``search_vector`` covers, searched as an
    index with these columns would be (:mod:`sessions_app.search.pg`); None elsewhere."""
    info = catalog.table(table)
    if table != "messages" or not dialect.postgres() or info is None:
        return None
    if not store.shape().has_column("messages", "search_vector"):
        return None  # (the catalog the API shows leaves the index column out)
    return TableInfo(name=table, columns=tuple(c for c in pg.COLUMNS if c in info.columns))


def _vector_clause(match: str, index: TableInfo, column: str | None, binder: Binder) -> str:
    """The rows that may match ``match`` (its words, in ``column`` when named: see
    :func:`sessions_app.search.pg.candidate_clause`), for the recheck to decide."""
    error = query_error(match, index.columns)
    relaxed = None if error else candidates(match)
    if relaxed is None:
        raise ApiError(f"Cannot read this search: {error or 'NOT needs a term on each side.'}")
    where, params = pg.candidate_clause(relaxed, [column] if column else index.columns)
    pieces = where.split("%s")
    bound = "".join(p + binder.bind(v) for p, v in zip(pieces, params, strict=False))
    scanned = f"select m.id from messages m where {bound}{pieces[-1]}"
    indexed = None if column else _locally_indexed(relaxed)
    if indexed is None:
        return f"id in ({scanned})"
    ids, high = indexed
    # The local word index's candidates, and the messages newer than it scanned.
    return (
        f"id in (select unnest(cast({binder.bind(ids)} as bigint[])) "
        f"union all {scanned} and m.id > {binder.bind(high)})"
    )


def _locally_indexed(relaxed: str) -> tuple[list[int], int] | None:
    """The ids the schema's local word index proposes for ``relaxed`` and the id it covers up
    to (:mod:`sessions_app.search.local_index`); None without one, or past
    :data:`LOCAL_IDS_CAP` candidates (the scan then reads them where they are)."""
    index = local_index.current(LOCAL_INDEX_BUDGET)
    if index is None:
        return None
    try:
        ids = index.ids(relaxed, below=index.high + 1, low=0, limit=LOCAL_IDS_CAP + 1)
    except sqlite3.Error:
        return None
    return None if len(ids) > LOCAL_IDS_CAP else (ids, index.high)


def _raw_match(text: str, hidden: bool) -> tuple[str, bool]:
    """What MATCH is given for a raw search, and whether it is relaxed from ``text``."""
    too_costly = advanced_limit_error(text)
    if too_costly:
        raise ApiError(too_costly)
    if not hidden:
        return text, False
    relaxed = candidates(text)
    if relaxed is None:
        raise ApiError("Cannot read this search: NOT needs a term on each side.")
    return relaxed, relaxed != text


def search_clauses(catalog: Catalog, req: TableRequest, binder: Binder, *, hidden: bool):
    """The WHERE clauses of the search arguments (a :class:`Search`); None when there is nothing
    to search or no index.  ``hidden``: the reader cannot read every secret."""
    table = req.table.name
    vector = _vector_index(catalog, table)
    name = index_for(catalog, table) if vector is None else table
    if not req.search or name is None:
        return None
    index = vector or catalog.table(name)
    fts = quote(name)
    search = Search(index=index, clauses=[], descriptions=[], terms=[], hidden=hidden)
    if "_search" in req.search:
        wanted = [(None, req.search["_search"])]
    else:  # the column of each "_search_<column>" ("" for another name: no such column)
        wanted = [(key.partition("_search_")[2], t) for key, t in req.search.items()]
    for column, text in wanted:
        if column is not None and column not in index.columns:
            raise ApiError("Cannot search by that column")
        text = clean(text) if hidden else text
        match, relaxed = _raw_match(text, hidden) if req.search_raw else (escape_fts(text), False)
        full = text if req.search_raw else match
        search.relaxed |= relaxed
        target = fts if column is None else quote(column)
        if vector is not None:
            search.clauses.append(_vector_clause(match, index, column, binder))
            search.relaxed = True  # the words of the query, not the query: rechecked
        else:
            search.clauses.append(
                f"rowid in (select rowid from {fts} where {target} match {binder.bind(match)})"
            )
        named = "" if column is None else f' column "{column}"'
        search.descriptions.append(f'search{named} matches "{text}"')
        search.terms.append((column, full))
    return search


class Recheck:
    """Keeps the candidates whose redacted text still matches the search."""

    def __init__(self, catalog: Catalog, search: Search):
        self.search = search
        options = index_options(search.index.sql)
        content = options.get("content", "")
        self.columns = list(search.index.columns)
        self.tokenize = options.get("tokenize")
        if content and catalog.table(content) is None and content not in catalog.views:
            content = ""  # the source is gone: read the index's own copy
        # A PostgreSQL schema's rows, read with their role (see _unproposed).
        self.schema = search.index.name == "messages"
        if self.schema:
            self.source, self.rowid = "messages", "id"
        elif content:
            self.source, self.rowid = content, options.get("content_rowid") or "rowid"
        else:
            self.source, self.rowid = search.index.name, "rowid"

    def _texts(self, ids: list, deadline: float) -> list[tuple]:
        binder = Binder()
        marks = ", ".join(binder.bind(i) for i in ids)
        rowid = column_sql(self.rowid)
        names = ", ".join(quote(c) for c in [*self.columns, *(["role"] if self.schema else [])])
        sql = f"select {rowid}, {names} from {quote(self.source)} where {rowid} in ({marks})"
        budget = max(0.05, deadline - time.monotonic())
        return run_store(Statement(sql, binder.params), budget=budget)[1]

    def keep(self, ids: list, deadline: float) -> set:
        """The ids among ``ids`` that still match once redacted (none past ``deadline``)."""
        if not ids:
            return set()
        rows = self._texts(ids, deadline)
        # Not in the source: nothing to redact (and nothing a NOT could have hidden).
        kept = set(ids) - {r[0] for r in rows}
        read = []
        for row in rows:
            role, row = (row[-1], row[:-1]) if self.schema else (None, row)
            values = [v if isinstance(v, str) else (v or "") for v in row[1:]]
            if self.search.hidden:
                values = [searchable(v) for v in values]
            read.append((row, role, values))
        unproposed = self._unproposed(read, deadline) if self.schema else set()
        dirty = []
        for row, _role, values in read:
            if row[0] in unproposed:
                continue
            if values == list(row[1:]) and not self.search.relaxed:
                kept.add(row[0])
            else:
                dirty.append((row[0], *values))
        if dirty:
            found: set | None = None
            for column, match in self.search.terms:
                ids_found = set(
                    matching(
                        match, dirty, self.columns, self.tokenize, column=column, deadline=deadline
                    )
                )
                found = ids_found if found is None else found & ids_found
            kept |= found or set()
        if time.monotonic() > deadline:
            raise ApiError("The search ran out of time while checking redacted text.")
        return kept

    def _unproposed(self, read: list, deadline: float) -> set:
        """The schema's tool rows Hermes's current word index would not propose for some term
        (:func:`sessions_app.search.pg.past_tool_prefix`, on the text read: redacted when the
        reader cannot reveal, as on the search page)."""
        docs = [(row[0], *values) for row, _role, values in read]
        roles = [role for _row, role, _values in read]
        found: set = set()
        for column, match in self.search.terms:
            relaxed = candidates(match)
            if relaxed is not None:
                found |= pg.past_tool_prefix(
                    relaxed,
                    docs,
                    roles,
                    self.columns,
                    self.tokenize,
                    column=column,
                    deadline=deadline,
                )
        return found
