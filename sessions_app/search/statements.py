"""The SQL of search: an indexed page, a bounded LIKE scan, and what ``state_meta`` says.

Every statement returns the columns of :func:`select_columns`, read by :func:`to_hit`.
Candidates come newest first: on a rollback-journal file from short statements over id ranges
(:mod:`.ranges`); scans size their ranges by time; a PostgreSQL schema's are a scan (:mod:`.pg`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from django.db import DatabaseError
from django.utils.safestring import SafeString

from hermes_explorer import dialect, store
from hermes_explorer.hermes_db.deadline import QueryTimeout
from hermes_explorer.stores import Store
from redaction import redact

from ..links import store_link
from ..visibility import kind_of
from . import local_index, pg, ranges
from .query import SearchRequest, like_pattern
from .redacted import query_error

# Seconds: one indexed search statement (the engine gives scans and retries their own).
SEARCH_BUDGET = 2.0
# Characters of a hit's content and tool calls read, redacted and matched again.
REDACT_WINDOW = 65_536
# The share of a walk's time a PostgreSQL page reads candidates in (the rest rechecks them).
READ_SHARE = 0.75
# Message ids a scan's first statement covers (the next ones grow while quick).
SCAN_FIRST_IDS = 5_000
# The file's substring index (a schema's substring search reads as if it had one).
TRIGRAM_TABLE = "messages_fts_trigram"
# Above every message id (a file's own FTS5 index matched every row it gives).
EVERY_ID = 2**63
# Where a hit row holds its content and tool calls.
CONTENT, TOOL_CALLS = 10, 11


@dataclass
class Hit:
    """A message that matched, with its session's title and source and its rendered snippet."""

    id: int
    session_id: str
    role: str | None
    tool_name: str | None
    timestamp: float | None
    title: str | None
    source: str | None
    snippet: SafeString
    visibility: str = "live"
    # The store the hit comes from (None: the current one).
    store: Store | None = None

    @property
    def url(self) -> str | None:
        """The message inside its transcript (right page, anchored)."""
        return store_link("sessions:message", [self.session_id, self.id], self.store)


def select_columns(shape) -> str:
    """The columns of every hit statement."""

    def col(name: str) -> str:
        return shape.column_or_null("messages", name, "m")

    title = shape.column_or_null("sessions", "title", "s")
    return (
        "m.id, m.session_id, m.role, m.tool_name, m.timestamp, "
        f"{col('active')}, {col('compacted')}, {col('display_kind')}, {title}, s.source, "
        f"{dialect.text_window('m.content', REDACT_WINDOW)}, "
        f"substr(m.tool_calls, 1, {REDACT_WINDOW})"
    )


def filters(req: SearchRequest, shape, *, trigram: bool = False) -> tuple[list[str], list]:
    """The request's filters as ``WHERE`` clauses over ``messages m`` and ``sessions s``; with
    ``trigram`` (or in substring mode), only rows Hermes's substring index holds."""
    asked = [
        ("m.role = %s", [req.role] if req.role else []),
        ("m.tool_name = %s", [req.tool_name] if req.tool_name else []),
        ("m.session_id = %s", [req.session_id] if req.session_id else []),
        (f"s.source IN ({store.marks(req.sources or ())})", list(req.sources or ())),
        ("m.timestamp >= %s", [] if req.since is None else [req.since]),
        ("m.timestamp < %s", [] if req.until is None else [req.until]),
    ]
    where = [clause for clause, values in asked if values]
    params: list = [value for _clause, values in asked for value in values]
    if trigram or req.mode == "substring":
        # What Hermes's substring (trigram) index holds, however the search is answered (a
        # schema's trigram search reads as if it had that index).
        where.append("COALESCE(m.role, '') <> 'tool' AND COALESCE(s.source, '') NOT IN (%s, %s)")
        params += ["cron", "subagent"]
    if not req.include_hidden and shape.has_column("messages", "display_kind"):
        # Model-only scaffolding stays out of search as it stays out of transcripts.
        where.append("(m.display_kind IS NULL OR m.display_kind <> 'hidden')")
    if shape.has_column("messages", "active") and shape.has_column("messages", "message_uid"):
        # A compaction's carried copy is found once (MessageQuerySet.without_superseded).
        where.append(
            "NOT (m.active = 0 AND m.message_uid IS NOT NULL AND EXISTS (SELECT 1 FROM messages"
            " l WHERE l.session_id = m.session_id AND l.message_uid = m.message_uid"
            " AND l.active = 1))"
        )
    return where, params


def to_hit(row, snippet: SafeString) -> Hit:
    """The hit of a statement row, with its rendered snippet."""
    mid, session_id, role, tool_name, ts, active, compacted, kind, title, source = row[:10]
    # Metadata text, shown redacted for every role (a tool may be named like a key).
    title, tool_name = redact(title), redact(tool_name)
    visibility = kind_of(active, compacted, kind)
    return Hit(mid, session_id, role, tool_name, ts, title, source, snippet, visibility)


def index_page(
    table: str, match: str, req: SearchRequest, budget: float
) -> tuple[list, int | None, int]:
    """Up to ``req.per_page`` + 1 rows of ``table MATCH match``, newest first (ids below
    ``req.before``), the id below which a walk out of time would go on (PostgreSQL), and the
    id up to which an FTS5 index with the recheck's columns and tokenizer matched the rows
    (the rows above it, scanned on a schema, only hold the query's words).

    Across all messages the FTS table drives the join, its rowids walked down; within one
    session, the session's messages are read by their index and each checked by rowid.
    """
    shape = store.shape()
    trigram = table == TRIGRAM_TABLE
    where, filter_params = filters(req, shape, trigram=trigram)
    if dialect.postgres():
        columns = [c for c in pg.COLUMNS if shape.has_column("messages", c)]
        if trigram:
            # Substrings: scanned (the local index holds words), as the file's trigram
            # index would propose them.
            clause, index = pg.substring_clause(match), None
        else:
            error = query_error(match, columns)
            if error:
                raise DatabaseError(error)  # what FTS5 would have said of it
            clause, index = pg.candidate_clause(match, columns), local_index.current(budget)
        started = time.monotonic()
        newer = 0 if index is None else index.high
        limit = req.per_page + 1
        outcome = Walk()
        if req.before is None or req.before > newer + 1:
            # Messages newer than the local index (every one, without it): scanned.
            outcome = scan(
                req,
                [],
                budget=budget * READ_SHARE,
                limit=limit,
                above=newer,
                below=req.before,
                match=clause,
                trigram=trigram,
            )
        if index is None or len(outcome.found) >= limit or not outcome.finished:
            return outcome.found, outcome.resume_before, 0
        below = newer + 1 if req.before is None else min(req.before, newer + 1)
        remaining = budget * READ_SHARE - (time.monotonic() - started)
        filtered = (where, filter_params)
        found = _indexed_rows(req, match, index, filtered, outcome.found, below, remaining)
        return (*found, newer)
    joins = (
        f"FROM messages m CROSS JOIN {table} ON {table}.rowid = m.id"
        if req.session_id
        else f"FROM {table} JOIN messages m ON m.id = {table}.rowid"
    ) + " LEFT JOIN sessions s ON s.id = m.session_id"
    sql = f"SELECT {select_columns(shape)} {joins} WHERE {table} MATCH %s"
    sql += "".join(f" AND {clause}" for clause in where)
    params: list = [match, *filter_params]
    # The order must name the driving table's key, or SQLite sorts every match.
    key = "m.id" if req.session_id else f"{table}.rowid"
    if store.readers_block_writer():
        # A session's ids were looked up once per search (run_search); else every id.
        low, high = req.session_range if req.session_id else (0, max_id())
        upper = high + 1 if req.before is None else min(high + 1, req.before)
        page_sql = sql + f" AND {key} >= %s AND {key} < %s ORDER BY {key} DESC LIMIT %s"

        def newest(lo: int, hi: int, limit: int, seconds: float) -> list:
            return store.rows(page_sql, [*params, lo, hi, limit], seconds)

        need = req.per_page + 1
        found = ranges.newest_first(newest, low=low, upper=upper, need=need, budget=budget)
        return found, None, EVERY_ID
    if req.before is not None:
        sql += f" AND {key} < %s"
        params.append(req.before)
    sql += f" ORDER BY {key} DESC LIMIT %s"
    params.append(req.per_page + 1)
    return store.rows(sql, params, budget), None, EVERY_ID


def _indexed_rows(
    req: SearchRequest, match: str, index, filtered: tuple, rows: list, below: int, budget: float
) -> tuple[list, int | None]:
    """``rows`` and then the messages below ``below`` that the local index proposes for
    ``match``, read from the schema in batches with the request's filters (``filtered``:
    :func:`filters`), newest first, up to ``req.per_page`` + 1; and where a walk out of time
    would go on."""
    shape = store.shape()
    where, filter_params = filtered
    sql = (
        f"SELECT {select_columns(shape)} FROM messages m "
        "LEFT JOIN sessions s ON s.id = m.session_id WHERE m.id = ANY(%s)"
        + "".join(f" AND {clause}" for clause in where)
        + " ORDER BY m.id DESC"
    )
    low = 0
    if req.session_id and req.session_range:
        # Within the session's ids (the statement keeps its messages alone).
        low, below = req.session_range[0], min(below, req.session_range[1] + 1)
    limit = batch = req.per_page + 1
    started = time.monotonic()
    rows = list(rows)
    while len(rows) < limit:
        remaining = budget - (time.monotonic() - started)
        if remaining <= 0.02:
            return rows, below
        ids = index.ids(match, below=below, low=low, limit=batch)
        if not ids:
            return rows, None
        rows += store.rows(sql, [ids, *filter_params], remaining)[: limit - len(rows)]
        below = ids[-1]
        batch = min(batch * 4, 20_000)
    return rows, None


def session_id_range(session_id: str) -> tuple[int, int]:
    """The first and last message id of a session (its index answers); (0, -1) if none."""
    rows = store.rows(
        "SELECT MIN(id), MAX(id) FROM messages WHERE session_id = %s", [session_id], SEARCH_BUDGET
    )
    low, high = rows[0] if rows else (None, None)
    return (0, -1) if low is None else (int(low), int(high))


@dataclass
class Walk:
    """Rows a walk down the messages found, newest first (the engine's: ``(row, its searchable
    texts)`` each, as an index's document after an indexed walk)."""

    found: list = field(default_factory=list)
    finished: bool = True  # every candidate was looked at
    resume_before: int | None = None  # where a next page (or a walk out of time) would go on


def max_id() -> int:
    rows = store.rows("SELECT MAX(id) FROM messages", [], SEARCH_BUDGET)
    return int(rows[0][0] or 0) if rows else 0


def scan(
    req: SearchRequest,
    terms: list[str],
    *,
    budget: float,
    limit: int,
    above: int = 0,
    below: int | None = None,
    columns: tuple[str, ...] = ("content", "tool_name", "tool_calls"),
    match: tuple[str, list] | None = None,
    trigram: bool = False,
) -> Walk:
    """Messages with ``above < id < below`` whose text contains every term (or, given,
    satisfies the clause ``match``: SQL and its values), newest first, one id range a
    statement, so a scan out of time returns what it found and where it stopped.  One
    session's messages are scanned in one statement; ``trigram``: among the rows Hermes's
    substring index holds (:func:`filters`)."""
    shape = store.shape()
    where, filter_params = filters(req, shape, trigram=trigram)
    present = [c for c in columns if shape.has_column("messages", c)]
    like = dialect.like_ascii_case()
    any_column = " OR ".join(f"m.{c} {like} %s ESCAPE '\\'" for c in present)
    like_clauses = [f"({any_column})"] * len(terms) if match is None else [match[0]]
    like_params = [like_pattern(term) for term in terms for _ in present]
    like_params += match[1] if match else []
    sql_head = (
        f"SELECT {select_columns(shape)} FROM messages m "
        "LEFT JOIN sessions s ON s.id = m.session_id WHERE m.id > %s AND m.id < %s"
    )
    tail = "".join(f" AND {c}" for c in [*where, *like_clauses]) + " ORDER BY m.id DESC LIMIT %s"

    upper = (max_id() + 1) if below is None else below
    whole = max(upper - above, 1)
    # Ranges grow fourfold while quick; on a rollback-journal file they follow time instead.
    clock = store.ChunkClock(
        SCAN_FIRST_IDS if not req.session_id else whole,
        maximum=2_000_000 if not req.session_id else None,
        first=SCAN_FIRST_IDS,
        grow_below=budget / 20,
    )
    started = time.monotonic()
    rows: list = []
    while upper > above + 1 and len(rows) < limit:
        remaining = budget - (time.monotonic() - started)
        if remaining <= 0.02:
            break

        want = limit - len(rows)

        def one(chunk: int, upper=upper, remaining=remaining, want=want) -> list:
            lower = max(above, upper - chunk)
            params = [lower, upper, *filter_params, *like_params, want]
            return store.rows(sql_head + tail, params, remaining)

        try:
            chunk, found = clock.run(one)
        except QueryTimeout:
            break
        rows += found
        if len(rows) >= limit:
            return Walk(rows, finished=False, resume_before=rows[-1][0])
        upper = max(above, upper - chunk) + 1
    finished = upper <= above + 1
    return Walk(rows, finished, None if finished else upper)


@dataclass(frozen=True)
class IndexState:
    stale: bool = False
    rebuild_from: int | None = None  # exclusive
    rebuild_to: int | None = None  # inclusive

    @property
    def rebuilding(self) -> bool:
        return self.rebuild_from is not None


def index_state() -> IndexState:
    """What ``state_meta`` says about the FTS index (nothing, on files without it)."""
    if not store.shape().has_table("state_meta") or dialect.postgres():
        # (A PostgreSQL schema's vector is a generated column: never behind.)
        return IndexState()
    rows = store.rows(
        "SELECT key, value FROM state_meta WHERE key IN "
        "('fts_stale', 'fts_rebuild_high_water', 'fts_rebuild_progress')",
        [],
        SEARCH_BUDGET,
    )
    meta = dict(rows)
    stale = str(meta.get("fts_stale") or "").strip().lower() in {"1", "true", "yes"}
    try:
        high = int(meta["fts_rebuild_high_water"])
        progress = int(meta.get("fts_rebuild_progress") or 0)
    except (KeyError, TypeError, ValueError):
        return IndexState(stale=stale)
    if high <= progress:
        return IndexState(stale=stale)
    return IndexState(stale=stale, rebuild_from=progress, rebuild_to=high)
