"""The SQL of search: an indexed page, a bounded LIKE scan, and what ``state_meta`` says.

Every statement returns the columns of :func:`select_columns` (the hit's fields, the start of
its content and tool calls for the snippet's secrets, its snippet), read by :func:`to_hit`.
On a rollback-journal file an indexed page comes from short statements over id ranges
(:mod:`.ranges`), and scans size their ranges by time.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.utils.safestring import SafeString

from hermes_explorer import store
from hermes_explorer.hermes_db.deadline import QueryTimeout
from hermes_explorer.stores import Store
from redaction import redact

from ..links import store_link
from ..visibility import kind_of
from . import ranges
from .query import SearchRequest, like_pattern
from .snippets import ELLIPSIS, MARK_CLOSE, MARK_OPEN

# Above this many matching rows, relevance order is not attempted (see too_many_to_rank)...
RANK_MATCH_CAP = 200_000
# ...nor above this many on a rollback-journal file (FTS5 first counts each word's matches).
SHORT_READ_RANK_MATCH_CAP = 50_000
# Seconds: one indexed search statement (the engine gives scans and retries their own).
SEARCH_BUDGET = 2.0
SNIPPET_TOKENS = 16
EXCERPT_BEFORE = 60
EXCERPT_CHARS = 240
# Characters of a hit's content and tool calls read to find the secrets a snippet may show.
REDACT_WINDOW = 65_536
# Where a hit row holds the texts its secrets are looked for in, and its snippet or excerpt.
SECRET_TEXTS = slice(10, 12)
SNIPPET = 12


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

    @property
    def session_url(self) -> str | None:
        return store_link("sessions:detail", [self.session_id], self.store)


def select_columns(shape) -> str:
    """The columns every hit statement starts with (the snippet or excerpt follows them)."""

    def col(name: str) -> str:
        return f"m.{name}" if shape.has_column("messages", name) else "NULL"

    title = "s.title" if shape.has_column("sessions", "title") else "NULL"
    return (
        "m.id, m.session_id, m.role, m.tool_name, m.timestamp, "
        f"{col('active')}, {col('compacted')}, {col('display_kind')}, {title}, s.source, "
        f"substr(m.content, 1, {REDACT_WINDOW}), substr(m.tool_calls, 1, {REDACT_WINDOW})"
    )


def filters(req: SearchRequest, shape) -> tuple[list[str], list]:
    """The request's filters as ``WHERE`` clauses over ``messages m`` and ``sessions s``."""
    asked = [
        ("m.role = %s", [req.role] if req.role else []),
        ("m.tool_name = %s", [req.tool_name] if req.tool_name else []),
        ("m.session_id = %s", [req.session_id] if req.session_id else []),
        (f"s.source IN ({', '.join(['%s'] * len(req.sources or ()))})", list(req.sources or ())),
        ("m.timestamp >= %s", [] if req.since is None else [req.since]),
        ("m.timestamp < %s", [] if req.until is None else [req.until]),
    ]
    where = [clause for clause, values in asked if values]
    params: list = [value for _clause, values in asked for value in values]
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
    title = redact(title) if title else title
    visibility = kind_of(active, compacted, kind)
    return Hit(mid, session_id, role, tool_name, ts, title, source, snippet, visibility)


def index_page(table: str, match: str, req: SearchRequest, sort: str, budget: float) -> list:
    """One page (+1 row, to know whether there is another) of ``table MATCH match``.

    Across all messages the FTS table drives the join: newest first walks its rowids down,
    relevance order lets FTS5 rank every match (``ORDER BY rank``, hence the budget; ``ORDER
    BY bm25()`` would join every match first).  Within one session, newest first reads the
    session's messages by their index and checks each by rowid; ranking ranks only the
    matches inside the session's id range, which FTS5 seeks to directly.
    """
    shape = store.shape()
    where, filter_params = filters(req, shape)
    snippet = f"snippet({table}, -1, %s, %s, %s, {SNIPPET_TOKENS})"
    if req.session_id and sort == "newest":
        joins = (
            f"FROM messages m CROSS JOIN {table} ON {table}.rowid = m.id "
            "LEFT JOIN sessions s ON s.id = m.session_id"
        )
    else:
        joins = (
            f"FROM {table} JOIN messages m ON m.id = {table}.rowid "
            "LEFT JOIN sessions s ON s.id = m.session_id"
        )
    sql = f"SELECT {select_columns(shape)}, {snippet} {joins} WHERE {table} MATCH %s"
    sql += "".join(f" AND {clause}" for clause in where)
    params: list = [MARK_OPEN, MARK_CLOSE, ELLIPSIS, match, *filter_params]
    if store.readers_block_writer():
        return _page_in_ranges(table, match, req, sort, budget, joins, sql, params)
    if req.session_id and sort != "newest":
        low, high = req.session_range or session_id_range(req.session_id)
        sql += f" AND {table}.rowid >= %s AND {table}.rowid <= %s"
        params += [low, high]
    if sort == "newest":
        # The order must name the driving table's key, or SQLite sorts every match.
        key = "m.id" if req.session_id else f"{table}.rowid"
        if req.before is not None:
            sql += f" AND {key} < %s"
            params.append(req.before)
        sql += f" ORDER BY {key} DESC LIMIT %s"
        params.append(req.per_page + 1)
    else:
        sql += f" ORDER BY {table}.rank LIMIT %s OFFSET %s"
        params += [req.per_page + 1, (req.page - 1) * req.per_page]
    return store.rows(sql, params, budget)


def _page_in_ranges(
    table: str,
    match: str,
    req: SearchRequest,
    sort: str,
    budget: float,
    joins: str,
    sql: str,
    params: list,
) -> list:
    """:func:`index_page` from short statements over id ranges (:mod:`.ranges`); ranked
    pages first find the page's ids by rank alone, then read those rows."""
    low, high = _id_range(req)
    if sort == "newest":
        key = "m.id" if req.session_id else f"{table}.rowid"
        upper = high + 1 if req.before is None else min(high + 1, req.before)
        page_sql = sql + f" AND {key} >= %s AND {key} < %s ORDER BY {key} DESC LIMIT %s"

        def newest(lo: int, hi: int, limit: int, seconds: float) -> list:
            return store.rows(page_sql, [*params, lo, hi, limit], seconds)

        return ranges.newest_first(
            newest, low=low, upper=upper, need=req.per_page + 1, budget=budget
        )
    rank_sql = f"SELECT {table}.rowid, {table}.rank {joins} WHERE {table} MATCH %s"
    where, filter_params = filters(req, store.shape())
    rank_sql += "".join(f" AND {clause}" for clause in where)
    rank_sql += f" AND {table}.rowid >= %s AND {table}.rowid < %s ORDER BY {table}.rank LIMIT %s"

    def ranked(lo: int, hi: int, limit: int, seconds: float) -> list:
        return store.rows(rank_sql, [match, *filter_params, lo, hi, limit], seconds)

    offset = (req.page - 1) * req.per_page
    best = ranges.best_ranked(
        ranked,
        low=low,
        high=high,
        need=offset + req.per_page + 1,
        budget=budget,
        rank_of=lambda row: row[1],
    )
    ids = [row[0] for row in best[offset:]]
    if not ids:
        return []
    marks = ", ".join(["%s"] * len(ids))
    found = store.rows(sql + f" AND {table}.rowid IN ({marks})", [*params, *ids], budget)
    by_id = {row[0]: row for row in found}
    return [by_id[i] for i in ids if i in by_id]


def rank_match_cap() -> int:
    """Matches above which relevance order is not tried on this file."""
    if store.readers_block_writer():
        return min(RANK_MATCH_CAP, SHORT_READ_RANK_MATCH_CAP)
    return RANK_MATCH_CAP


def _id_range(req: SearchRequest) -> tuple[int, int]:
    """The message ids a search covers: its session's, else every one."""
    if req.session_id:
        return req.session_range or session_id_range(req.session_id)
    return 0, max_id()


def session_id_range(session_id: str) -> tuple[int, int]:
    """The first and last message id of a session (its index answers); (0, -1) if none."""
    rows = store.rows(
        "SELECT MIN(id), MAX(id) FROM messages WHERE session_id = %s", [session_id], SEARCH_BUDGET
    )
    low, high = rows[0] if rows else (None, None)
    return (0, -1) if low is None else (int(low), int(high))


MATCH_COUNT_TTL = 300


def too_many_to_rank(table: str, match: str, req: SearchRequest) -> bool:
    """Whether more than :func:`rank_match_cap` rows match (in the session's id range, if
    any): ranking would not finish in time.  Counting costs a tenth of ranking, stops at the
    cap, and is reused while the file is unchanged."""
    cap = rank_match_cap()
    try:
        return store.while_unchanged(
            "too-many-to-rank",
            (table, match, req.session_id, cap, store.readers_block_writer()),
            lambda: _count_above(table, match, req, cap),
            MATCH_COUNT_TTL,
        )
    except QueryTimeout:
        return True  # not an answer: counted again next time


def _count_above(table: str, match: str, req: SearchRequest, cap: int) -> bool:
    sql = f"SELECT rowid FROM {table} WHERE {table} MATCH %s"
    params: list = [match]
    if store.readers_block_writer():
        low, high = _id_range(req)
        ranged = f"SELECT count(*) FROM ({sql} AND rowid >= %s AND rowid < %s LIMIT %s)"

        def count(lo: int, hi: int, limit: int, seconds: float) -> list:
            return store.rows(ranged, [match, lo, hi, limit], seconds)

        return ranges.count_over(count, low=low, high=high, cap=cap, budget=SEARCH_BUDGET) > cap
    if req.session_id:
        low, high = req.session_range or session_id_range(req.session_id)
        sql += " AND rowid >= %s AND rowid <= %s"
        params += [low, high]
    rows = store.rows(f"SELECT count(*) FROM ({sql} LIMIT {cap + 1})", params, SEARCH_BUDGET)
    return rows[0][0] > cap


@dataclass
class ScanOutcome:
    rows: list
    finished: bool  # the whole id range was looked at
    resume_before: int | None  # where a next page (or a longer scan) would continue


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
) -> ScanOutcome:
    """Messages with ``above < id < below`` whose text contains every term, newest first, one
    id range a statement, so a scan out of time returns what it found and where it stopped.
    One session's messages are scanned in one statement."""
    shape = store.shape()
    where, filter_params = filters(req, shape)
    present = [c for c in columns if shape.has_column("messages", c)]
    any_column = " OR ".join(f"m.{c} LIKE %s ESCAPE '\\'" for c in present)
    like_clauses = [f"({any_column})"] * len(terms)
    like_params = [like_pattern(term) for term in terms for _ in present]
    excerpt = (
        f"substr(m.content, max(1, instr(lower(m.content), lower(%s)) - {EXCERPT_BEFORE}),"
        f" {EXCERPT_CHARS})"
    )
    sql_head = (
        f"SELECT {select_columns(shape)}, {excerpt} FROM messages m "
        "LEFT JOIN sessions s ON s.id = m.session_id WHERE m.id > %s AND m.id < %s"
    )
    tail = "".join(f" AND {c}" for c in [*where, *like_clauses]) + " ORDER BY m.id DESC LIMIT %s"

    upper = (max_id() + 1) if below is None else below
    whole = max(upper - above, 1)
    # Ranges grow fourfold while quick; on a rollback-journal file they follow time instead.
    clock = store.ChunkClock(
        5_000 if not req.session_id else whole,
        maximum=2_000_000 if not req.session_id else None,
        first=5_000,
        grow_below=budget / 20,
        growth=4,
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
            params = [terms[0], lower, upper, *filter_params, *like_params, want]
            return store.rows(sql_head + tail, params, remaining)

        try:
            chunk, found = clock.run(one)
        except QueryTimeout:
            break
        rows += found
        if len(rows) >= limit:
            return ScanOutcome(rows=rows, finished=False, resume_before=rows[-1][0])
        upper = max(above, upper - chunk) + 1
    finished = upper <= above + 1
    return ScanOutcome(rows=rows, finished=finished, resume_before=None if finished else upper)


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
    if not store.shape().has_table("state_meta"):
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
