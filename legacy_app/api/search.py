"""``_search``, ``_search_<column>`` and ``_searchmode=raw`` with Datasette's semantics.

Datasette matched the full-text table of a table with ``rowid in (select rowid from <fts>
where <fts> match :search)``: the rows stay in the table's order (or ``_sort``), paged with
``_next`` like any other filter.  The text was escaped unless ``_searchmode=raw``: each word
became a quoted token, a ``"quoted phrase"`` stayed one phrase, an unbalanced quote was
closed.  ``_search_<column>`` matched one column of the index.

Which index: the one Datasette recognised (declared ``content="<table>"``), else — for
``messages`` — ``messages_fts``, whose rowid is the message id in both of Hermes's layouts.
(Datasette did not recognise it, because Hermes declares ``content='messages_fts_src'`` or
``content=messages`` without the quotes it looked for, and so ignored ``_search`` on
``/state/messages``; the explorer searches, which is what the old URLs meant.)

No oracle: for roles that cannot reveal secrets, a row matches only if the query also matches
its *redacted* text — the candidate's indexed columns are redacted and matched again in a
private in-memory index with the same columns and tokenizer (:class:`Recheck`), so a search
for a key's prefix finds nothing when the key is only in redacted text.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass

from hermes_explorer.hermes_db.catalog import Catalog, TableInfo
from hermes_explorer.redaction import redact_many

from .errors import ApiError
from .operators import Binder, quote
from .query import Statement, run_store

# The index Datasette could not see, for the table whose rows it indexes.
KNOWN_INDEXES = {"messages": "messages_fts"}
_ESCAPE_SPLIT = re.compile(r'\s+|(".*?")')
_OPTION = re.compile(
    r"\b(content|content_rowid|tokenize)\s*=\s*(['\"]?)(.*?)\2\s*(?:,|\)\s*$)", re.I
)


def escape_fts(text: str) -> str:
    """Datasette's escaping: words become quoted tokens, quoted phrases stay phrases."""
    if text.count('"') % 2:
        text += '"'
    bits = [b for b in _ESCAPE_SPLIT.split(text) if b and b != '""']
    return " ".join(b if b.startswith('"') else f'"{b}"' for b in bits)


def index_for(catalog: Catalog, table: str) -> str | None:
    name = catalog.fts_table(table)
    if name is None:
        candidate = KNOWN_INDEXES.get(table)
        info = catalog.table(candidate) if candidate else None
        if info is not None and info.virtual:
            name = candidate
    return name


@dataclass
class Search:
    index: TableInfo
    clauses: list[str]
    descriptions: list[str]
    terms: list[tuple[str | None, str]]  # (column or None, the text given to MATCH)


def search_clauses(
    catalog: Catalog, table: str, args: dict[str, str], raw: bool, binder: Binder
) -> Search | None:
    """The WHERE clauses of the search arguments; None when there is nothing to search (or
    no index: Datasette then ignored the arguments)."""
    name = index_for(catalog, table)
    if not args or name is None:
        return None
    index = catalog.table(name)
    fts = quote(name)
    search = Search(index=index, clauses=[], descriptions=[], terms=[])
    if "_search" in args:
        text = args["_search"]
        match = text if raw else escape_fts(text)
        search.clauses.append(
            f"rowid in (select rowid from {fts} where {fts} match {binder.bind(match)})"
        )
        search.descriptions.append(f'search matches "{text}"')
        search.terms.append((None, match))
        return search
    for key, text in args.items():
        column = key.split("_search_", 1)[1] if "_search_" in key else ""
        if column not in index.columns:
            raise ApiError("Cannot search by that column")
        match = text if raw else escape_fts(text)
        search.clauses.append(
            f"rowid in (select rowid from {fts} where {quote(column)} match {binder.bind(match)})"
        )
        search.descriptions.append(f'search column "{column}" matches "{text}"')
        search.terms.append((column, match))
    return search


def _options(sql: str) -> dict[str, str]:
    inner = sql[sql.find("(") + 1 :] if "(" in sql else ""
    return {m.group(1).lower(): m.group(3) for m in _OPTION.finditer(inner)}


class Recheck:
    """Keeps the candidates whose redacted text still matches the search."""

    def __init__(self, catalog: Catalog, search: Search):
        self.search = search
        options = _options(search.index.sql)
        content = options.get("content", "")
        self.columns = list(search.index.columns)
        self.tokenize = options.get("tokenize")
        if content and catalog.table(content) is None and content not in catalog.views:
            content = ""  # the source is gone: read the index's own copy
        if content:
            self.source, self.rowid = content, options.get("content_rowid") or "rowid"
        else:
            self.source, self.rowid = search.index.name, "rowid"

    def _texts(self, ids: list) -> list[tuple]:
        binder = Binder()
        marks = ", ".join(binder.bind(i) for i in ids)
        rowid = "rowid" if self.rowid == "rowid" else quote(self.rowid)
        names = ", ".join(quote(c) for c in self.columns)
        sql = f"select {rowid}, {names} from {quote(self.source)} where {rowid} in ({marks})"
        return run_store(Statement(sql, binder.params), budget=2.0)[1]

    def keep(self, ids: list) -> set:
        """The ids among ``ids`` that still match once their text is redacted."""
        if not ids:
            return set()
        rows = self._texts(ids)
        columns = list(zip(*rows, strict=True)) if rows else []
        redacted = [redact_many(c) for c in columns[1:]]
        kept = set(ids) - {r[0] for r in rows}  # not in the source: nothing to redact
        dirty = []
        for n, row in enumerate(rows):
            values = [col[n] for col in redacted]
            if values == list(row[1:]):
                kept.add(row[0])
            else:
                dirty.append((row[0], values))
        if dirty:
            kept |= self._match(dirty)
        return kept

    def _match(self, dirty: list[tuple]) -> set:
        conn = sqlite3.connect(":memory:")
        try:
            names = ", ".join(quote(c) for c in self.columns)
            tokenize = f", tokenize={_sql_text(self.tokenize)}" if self.tokenize else ""
            conn.execute(f"create virtual table recheck using fts5({names}{tokenize})")
            marks = ", ".join("?" for _ in range(len(self.columns) + 1))
            conn.executemany(
                f"insert into recheck (rowid, {names}) values ({marks})",
                [(rowid, *values) for rowid, values in dirty],
            )
            ids: set | None = None
            for column, match in self.search.terms:
                target = quote(column) if column else "recheck"
                found = {
                    r[0]
                    for r in conn.execute(
                        f"select rowid from recheck where {target} match ?", (match,)
                    )
                }
                ids = found if ids is None else ids & found
            return ids or set()
        except sqlite3.Error:
            return set()
        finally:
            conn.close()


def _sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"
