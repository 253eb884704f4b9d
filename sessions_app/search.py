"""Full-text search over messages: which index answers, how user text becomes a query.

Hermes keeps three kinds of index, and a file may have any subset (``hermes-schema.md``):

* ``messages_fts`` (FTS5, ``unicode61``), in one of two layouts: *inline* (one column) or
  *external content* through the view ``messages_fts_src`` (columns content, tool_name,
  tool_calls). In both the rowid is ``messages.id``, and ``snippet()`` and ``rank`` work.
* ``messages_fts_trigram`` (FTS5, ``trigram``): substrings and CJK text, three characters or
  more; it leaves out tool rows and cron/subagent sessions.
* ``messages_fts_cjk``: built with a tokenizer we do not have. Any statement that names it
  fails, so nothing here ever does (tests plant it and search the file).

User text never reaches ``MATCH`` raw in the default mode: each word is quoted, so ``"``, ``-``,
``:``, ``*``, ``NEAR`` or a stray parenthesis are just characters. ``mode=advanced`` passes the
text through for AND/OR/NOT, ``"phrases"`` and ``prefix*``; what SQLite still rejects becomes a
message. When no index can answer (no FTS table at all, a CJK word shorter than three
characters, substring mode without the trigram index), a LIKE scan walks messages newest first
in short id-range statements until it has a page of hits or its time budget is spent, and says
how far it got.

A rebuild in progress (``state_meta``: rows with ``fts_rebuild_progress < id <=
fts_rebuild_high_water`` are not indexed yet) is topped up by the same bounded scan over that
id range, shown apart from the indexed hits, or reported when the scan could not finish.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from django.db import DatabaseError
from django.urls import NoReverseMatch, reverse
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from hermes_explorer import store
from hermes_explorer.hermes_db.deadline import QueryTimeout

from .content import MULTIMODAL_PREFIX
from .redaction import redact_text, redaction_enabled

MODES = {
    "words": "Words",
    "advanced": 'Advanced (AND, OR, NOT, "phrase", prefix*)',
    "substring": "Substring / CJK",
}
SORTS = {"rank": "Best match", "newest": "Newest first"}
PER_PAGE = 20
# Relevance order is paged by OFFSET, which costs what the skipped hits cost: stop somewhere.
RANKED_CAP = 1000
# Above this many matching rows, relevance order is not attempted (see _too_many_to_rank).
RANK_MATCH_CAP = 200_000
MAX_QUERY_CHARS = 500
# Seconds: one indexed search statement; the newest-first retry after a ranking that ran out
# of time; a LIKE scan; the top-up scan of rows a rebuild has not indexed yet.
SEARCH_BUDGET = 2.0
RETRY_BUDGET = 1.5
SCAN_BUDGET = 2.0
TOPUP_BUDGET = 1.0
SNIPPET_TOKENS = 16
EXCERPT_BEFORE = 60
EXCERPT_CHARS = 240
TRIGRAM_MIN_CHARS = 3
# Characters of a hit's content and tool calls read to find the secrets a snippet may show.
REDACT_WINDOW = 65_536

# Snippet highlight markers: private-use characters, so that the snippet can be escaped as a
# whole and only then given its <mark> tags (planted markup in content stays text).
MARK_OPEN = "\ue000"
MARK_CLOSE = "\ue001"
ELLIPSIS = "…"

# Scripts the unicode61 tokenizer does not split into words (a CJK sentence is one "word").
_CJK = re.compile(
    r"[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]"
)
_ADVANCED_WORD = re.compile(r"\w+", re.UNICODE)
_OPERATORS = {"AND", "OR", "NOT", "NEAR"}
# What SQLite says when it cannot read a MATCH expression.
_QUERY_ERRORS = (
    "fts5:",
    "unterminated string",
    "no such column",
    "unknown special query",
    "malformed match",
)


@dataclass(frozen=True)
class SearchRequest:
    text: str
    mode: str = "words"
    sort: str = "rank"
    sources: tuple[str, ...] = ()
    role: str = ""
    tool_name: str = ""
    session_id: str = ""
    since: float | None = None  # epoch, inclusive
    until: float | None = None  # epoch, exclusive
    page: int = 1  # relevance order
    before: int | None = None  # newest-first order and scans: ids below this
    include_hidden: bool = False
    per_page: int = PER_PAGE
    # First and last message id of ``session_id`` (set by run_search; FTS5 seeks to it).
    session_range: tuple[int, int] | None = None


@dataclass
class Hit:
    id: int
    session_id: str
    role: str | None
    tool_name: str | None
    timestamp: float | None
    title: str | None
    source: str | None
    snippet: SafeString
    visibility: str = "live"

    @property
    def url(self) -> str | None:
        """The message inside its transcript (right page, anchored)."""
        try:
            return reverse("sessions:message", args=[self.session_id, self.id])
        except NoReverseMatch:
            return None

    @property
    def session_url(self) -> str | None:
        try:
            return reverse("sessions:detail", args=[self.session_id])
        except NoReverseMatch:
            return None


@dataclass
class SearchResult:
    request: SearchRequest
    engine: str = ""  # "fts", "trigram", "scan" or "" (nothing searched)
    sort: str = "rank"  # the order actually used
    hits: list[Hit] = field(default_factory=list)
    unindexed_hits: list[Hit] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    timed_out: bool = False
    next_page: int | None = None
    next_before: int | None = None

    @property
    def searched(self) -> bool:
        return bool(self.engine)


# --- Turning user text into FTS5 queries -----------------------------------------------


def plain_words(text: str) -> list[str]:
    """The whitespace-separated words that hold at least one letter or digit (what the
    unicode61 tokenizer would keep); pure punctuation is dropped."""
    return [w for w in text.split() if any(ch.isalnum() for ch in w)]


def quote(term: str) -> str:
    """An FTS5 string: whatever is inside is text, never syntax."""
    return '"' + term.replace('"', '""') + '"'


def words_match(text: str) -> str:
    """Every word quoted; FTS5 ANDs them."""
    return " ".join(quote(w) for w in plain_words(text))


def advanced_terms(text: str) -> list[str]:
    """Bare words of an advanced query, without operators (for LIKE scans)."""
    return [
        w
        for w in _ADVANCED_WORD.findall(text.replace("_", " "))
        if w not in _OPERATORS and any(ch.isalnum() for ch in w)
    ]


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


def like_pattern(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def is_query_error(exc: BaseException) -> bool:
    message = str(exc).lower()
    return any(needle in message for needle in _QUERY_ERRORS)


# --- Rendering snippets --------------------------------------------------------------
# Word pieces as unicode61 cuts them (letters and digits; "_" and "-" separate).
_PIECE = re.compile(r"[^\W_]{4,}")
REDACTED = "[redacted]"


def _clean(text: str | None) -> str:
    return (text or "").replace(MULTIMODAL_PREFIX, "").replace("\x00", "")


def secret_pieces(*texts: str | None) -> set[str]:
    """The word pieces of the secrets in ``texts`` that a snippet of them could show.

    A snippet starts and stops at word boundaries and carries highlight markers, so the
    redactor's patterns may not recognise what is left of a key in it ("sk-proj-" cut off, a
    marker in the middle). Redacting the source text instead and noting which pieces
    disappeared tells us what to hide in the snippet, whatever its cut."""
    if not redaction_enabled():
        return set()
    pieces: set[str] = set()
    for text in texts:
        if not text:
            continue
        redacted, count = redact_text(text)
        if count:
            pieces |= set(_PIECE.findall(text)) - set(_PIECE.findall(redacted))
    return pieces


# A word in a snippet, highlight markers included (a trigram snippet can mark part of a word).
_MARKED_RUN = re.compile(f"(?:[^\\W_]|[{MARK_OPEN}{MARK_CLOSE}])+")


def _scrub(text: str, pieces: set[str]) -> str:
    """Hide every word of ``text`` that is a secret's piece or a fragment of one (snippets
    cut words at their edges, trigram snippets anywhere)."""
    if pieces:

        def hide(match: re.Match) -> str:
            bare = match.group(0).replace(MARK_OPEN, "").replace(MARK_CLOSE, "")
            if len(bare) >= 4 and any(bare in piece for piece in pieces):
                return REDACTED
            return match.group(0)

        text = _MARKED_RUN.sub(hide, text)
    if redaction_enabled():
        # A secret beyond the window read for ``pieces``: hide it, and its highlights.
        bare = text.replace(MARK_OPEN, "").replace(MARK_CLOSE, "")
        redacted, count = redact_text(bare)
        if count:
            return redacted
    return text


def render_snippet(raw: str | None, pieces: set[str] = frozenset()) -> SafeString:
    """Redact, escape an FTS5 snippet, then turn its markers into <mark> tags."""
    html = escape(_scrub(_clean(raw), set(pieces)))
    if html.count(MARK_OPEN) != html.count(MARK_CLOSE):
        # The content itself carried one of our markers: drop highlighting, keep the text.
        return mark_safe(html.replace(MARK_OPEN, "").replace(MARK_CLOSE, ""))
    return mark_safe(html.replace(MARK_OPEN, "<mark>").replace(MARK_CLOSE, "</mark>"))


def highlight(text: str | None, terms: list[str], pieces: set[str] = frozenset()) -> SafeString:
    """Redact and escape a plain excerpt, marking every occurrence of the terms."""
    text = _scrub(_clean(text).replace(MARK_OPEN, "").replace(MARK_CLOSE, ""), set(pieces))
    terms = [t for t in terms if t]
    if not terms:
        return mark_safe(escape(text))
    pattern = re.compile("|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True)), re.I)
    out, last = [], 0
    for match in pattern.finditer(text):
        out.append(escape(text[last : match.start()]))
        out.append(f"<mark>{escape(match.group(0))}</mark>")
        last = match.end()
    out.append(escape(text[last:]))
    return mark_safe("".join(out))


# --- SQL pieces ----------------------------------------------------------------------


def _select_columns(shape) -> str:
    def col(name: str) -> str:
        return f"m.{name}" if shape.has_column("messages", name) else "NULL"

    return (
        "m.id, m.session_id, m.role, m.tool_name, m.timestamp, "
        f"{col('active')}, {col('compacted')}, {col('display_kind')}, s.title, s.source, "
        f"substr(m.content, 1, {REDACT_WINDOW}), substr(m.tool_calls, 1, {REDACT_WINDOW})"
    )


def _filters(req: SearchRequest, shape) -> tuple[list[str], list]:
    where: list[str] = []
    params: list = []
    if req.role:
        where.append("m.role = %s")
        params.append(req.role)
    if req.tool_name:
        where.append("m.tool_name = %s")
        params.append(req.tool_name)
    if req.session_id:
        where.append("m.session_id = %s")
        params.append(req.session_id)
    if req.sources:
        where.append(f"s.source IN ({', '.join(['%s'] * len(req.sources))})")
        params.extend(req.sources)
    if req.since is not None:
        where.append("m.timestamp >= %s")
        params.append(req.since)
    if req.until is not None:
        where.append("m.timestamp < %s")
        params.append(req.until)
    if not req.include_hidden and shape.has_column("messages", "display_kind"):
        # Model-only scaffolding stays out of search as it stays out of transcripts.
        where.append("(m.display_kind IS NULL OR m.display_kind <> 'hidden')")
    return where, params


def _visibility(active, compacted, display_kind) -> str:
    if display_kind == "hidden":
        return "hidden"
    if active == 0:
        return "compacted" if compacted else "rewound"
    return "live"


def _hit(row, snippet: SafeString) -> Hit:
    mid, session_id, role, tool_name, ts, active, compacted, kind, title, source = row[:10]
    return Hit(
        id=mid,
        session_id=session_id,
        role=role,
        tool_name=tool_name,
        timestamp=ts,
        title=title,
        source=source,
        snippet=snippet,
        visibility=_visibility(active, compacted, kind),
    )


# --- Indexed search --------------------------------------------------------------------


def _index_page(table: str, match: str, req: SearchRequest, sort: str, budget: float) -> list:
    """One page (+1 row, to know whether there is another) of ``table MATCH match``.

    Across all messages the FTS table drives the join (its MATCH is the selective part):
    newest first walks its rowids downwards and stops after a page; relevance order lets
    FTS5 rank every match (``ORDER BY rank``) and joins only the rows it hands out, which is
    why it has a budget and a fallback.  (``ORDER BY bm25()`` would join every match first.)

    Within one session: newest first goes the other way, the session's messages come from
    their index and each is checked against the FTS table by rowid.  Ranking never uses
    that plan (FTS5 would redo its ranking for every row); it ranks only the matches inside
    the session's id range instead, which FTS5 seeks to directly.
    """
    shape = store.shape()
    where, filter_params = _filters(req, shape)
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
    sql = f"SELECT {_select_columns(shape)}, {snippet} {joins} WHERE {table} MATCH %s"
    params: list = [MARK_OPEN, MARK_CLOSE, ELLIPSIS, match]
    for clause in where:
        sql += f" AND {clause}"
    params += filter_params
    if req.session_id and sort != "newest":
        low, high = req.session_range or _session_id_range(req.session_id)
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


def _session_id_range(session_id: str) -> tuple[int, int]:
    """The first and last message id of a session (its index answers); (0, -1) if none."""
    rows = store.rows(
        "SELECT MIN(id), MAX(id) FROM messages WHERE session_id = %s", [session_id], SEARCH_BUDGET
    )
    low, high = rows[0] if rows else (None, None)
    return (0, -1) if low is None else (int(low), int(high))


def _too_many_to_rank(table: str, match: str, req: SearchRequest) -> bool:
    """Whether more than ``RANK_MATCH_CAP`` rows match (in the session's id range, if any).

    Ranking costs a few microseconds per match; counting a tenth of that, and the count
    stops at the cap. Above it, ranking would not finish in time anyway."""
    sql = f"SELECT rowid FROM {table} WHERE {table} MATCH %s"
    params: list = [match]
    if req.session_id:
        low, high = req.session_range or _session_id_range(req.session_id)
        sql += " AND rowid >= %s AND rowid <= %s"
        params += [low, high]
    try:
        rows = store.rows(
            f"SELECT count(*) FROM ({sql} LIMIT {RANK_MATCH_CAP + 1})", params, SEARCH_BUDGET
        )
    except QueryTimeout:
        return True
    return rows[0][0] > RANK_MATCH_CAP


def _query_error(result: SearchResult, exc: DatabaseError) -> None:
    result.error = (
        f"SQLite could not read this query ({exc}). Check quotes, parentheses and "
        "operators, or search plain words instead."
        if result.request.mode == "advanced"
        else f"This search could not be run ({exc})."
    )


def _indexed_search(result: SearchResult, table: str, match: str) -> None:
    req = result.request
    sort = req.sort
    try:
        if sort == "rank" and req.page == 1 and _too_many_to_rank(table, match, req):
            # Ranking every match of a common word is what costs; newest first stops early.
            result.notes.append(
                f"More than {RANK_MATCH_CAP:,} messages match: too many to rank by relevance "
                "quickly, so newest first. Add a word or a filter to rank them."
            )
            sort = "newest"
            req = result.request = _replace(req, before=None)
        rows = _index_page(table, match, req, sort, SEARCH_BUDGET)
    except QueryTimeout:
        if sort != "rank":
            result.timed_out = True
            result.error = (
                f"The search ran out of time ({SEARCH_BUDGET:g} s) before it found a page of "
                "matches. Narrow it: a rarer word, a session, a source or a shorter date range."
            )
            return
        result.notes.append(
            "Too many matches to rank by relevance in time: showing newest first instead."
        )
        sort = "newest"
        req = result.request = _replace(req, before=None)
        try:
            rows = _index_page(table, match, req, sort, RETRY_BUDGET)
        except QueryTimeout:
            result.timed_out = True
            result.error = (
                "The search ran out of time. Narrow it: a rarer word, a session, a source or "
                "a shorter date range."
            )
            return
        except DatabaseError as exc:
            if not is_query_error(exc):
                raise
            _query_error(result, exc)
            return
    except DatabaseError as exc:
        if not is_query_error(exc):
            raise
        _query_error(result, exc)
        return
    result.sort = sort
    more = len(rows) > req.per_page
    rows = rows[: req.per_page]
    result.hits = [
        _hit(row, render_snippet(row[12], secret_pieces(row[10], row[11]))) for row in rows
    ]
    if not more:
        return
    if sort == "newest":
        result.next_before = rows[-1][0]
    elif req.page * req.per_page < RANKED_CAP:
        result.next_page = req.page + 1
    else:
        result.notes.append(
            f"Relevance order stops after {RANKED_CAP:,} hits: sort by newest first to go further."
        )


def _replace(req: SearchRequest, **changes) -> SearchRequest:
    from dataclasses import replace

    return replace(req, **changes)


# --- Bounded LIKE scans ----------------------------------------------------------------


@dataclass
class ScanOutcome:
    rows: list
    finished: bool  # the whole id range was looked at
    resume_before: int | None  # where a next page (or a longer scan) would continue


def _max_id() -> int:
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
    """Messages with ``above < id < below`` whose text contains every term, newest first.

    Each statement covers one id range (the primary key answers it), so a scan that runs out
    of time still returns what it found and where it stopped; ranges grow while they are
    quick. One session's messages are few and indexed: they are scanned in one statement."""
    shape = store.shape()
    where, filter_params = _filters(req, shape)
    like_clauses, like_params = [], []
    for term in terms:
        pattern = like_pattern(term)
        ors = [f"m.{c} LIKE %s ESCAPE '\\'" for c in columns if shape.has_column("messages", c)]
        like_clauses.append("(" + " OR ".join(ors) + ")")
        like_params += [pattern] * len(ors)
    excerpt = (
        f"substr(m.content, max(1, instr(lower(m.content), lower(%s)) - {EXCERPT_BEFORE}),"
        f" {EXCERPT_CHARS})"
    )
    sql_head = (
        f"SELECT {_select_columns(shape)}, {excerpt} FROM messages m "
        "LEFT JOIN sessions s ON s.id = m.session_id WHERE m.id > %s AND m.id < %s"
    )
    tail = "".join(f" AND {c}" for c in [*where, *like_clauses]) + " ORDER BY m.id DESC LIMIT %s"

    upper = (_max_id() + 1) if below is None else below
    chunk = 5_000 if not req.session_id else max(upper - above, 1)
    started = time.monotonic()
    rows: list = []
    while upper > above + 1 and len(rows) < limit:
        remaining = budget - (time.monotonic() - started)
        if remaining <= 0.02:
            break
        lower = max(above, upper - chunk)
        params = [terms[0], lower, upper, *filter_params, *like_params, limit - len(rows)]
        began = time.monotonic()
        try:
            found = store.rows(sql_head + tail, params, remaining)
        except QueryTimeout:
            break
        rows += found
        if len(rows) >= limit:
            return ScanOutcome(rows=rows, finished=False, resume_before=rows[-1][0])
        upper = lower + 1
        if time.monotonic() - began < budget / 20:
            chunk = min(chunk * 4, 2_000_000)
    finished = upper <= above + 1
    return ScanOutcome(rows=rows, finished=finished, resume_before=None if finished else upper)


def _scan_search(result: SearchResult, terms: list[str], columns: tuple[str, ...]) -> None:
    req = result.request
    result.engine = "scan"
    result.sort = "newest"
    if req.sort == "rank":
        result.notes.append("A scan has no relevance order: hits are newest first.")
    outcome = scan(
        req, terms, budget=SCAN_BUDGET, limit=req.per_page + 1, below=req.before, columns=columns
    )
    rows = outcome.rows
    more = len(rows) > req.per_page
    rows = rows[: req.per_page]
    result.hits = [
        _hit(row, highlight(row[12], terms, secret_pieces(row[10], row[11]))) for row in rows
    ]
    if more:
        result.next_before = rows[-1][0]
    elif not outcome.finished:
        result.timed_out = True
        result.next_before = outcome.resume_before
        result.notes.append(
            f"The scan stopped after {SCAN_BUDGET:g} s, at message #{outcome.resume_before:,}: "
            "older messages were not searched yet. Continue with the link below, or narrow the "
            "search (a session, a source, a date range)."
        )


# --- Rebuild in progress ---------------------------------------------------------------


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
    meta = {key: value for key, value in rows}
    stale = str(meta.get("fts_stale") or "").strip().lower() in {"1", "true", "yes"}
    try:
        high = int(meta["fts_rebuild_high_water"])
        progress = int(meta.get("fts_rebuild_progress") or 0)
    except (KeyError, TypeError, ValueError):
        return IndexState(stale=stale)
    if high <= progress:
        return IndexState(stale=stale)
    return IndexState(stale=stale, rebuild_from=progress, rebuild_to=high)


def _top_up(result: SearchResult, terms: list[str], state: IndexState) -> None:
    """Hits among rows the index does not hold yet, on the first page only."""
    req = result.request
    first_page = req.page == 1 and req.before is None
    if not (state.rebuilding and first_page and terms):
        if state.rebuilding:
            result.notes.append(
                f"The search index is being rebuilt: messages #{state.rebuild_from + 1:,}–"
                f"#{state.rebuild_to:,} are not indexed yet (matches among them are listed on "
                "the first page)."
            )
        return
    outcome = scan(
        req,
        terms,
        budget=TOPUP_BUDGET,
        limit=req.per_page,
        above=state.rebuild_from,
        below=state.rebuild_to + 1,
    )
    seen = {hit.id for hit in result.hits}
    result.unindexed_hits = [
        _hit(row, highlight(row[12], terms, secret_pieces(row[10], row[11])))
        for row in outcome.rows
        if row[0] not in seen
    ]
    span = f"#{state.rebuild_from + 1:,}–#{state.rebuild_to:,}"
    if outcome.finished:
        result.notes.append(
            f"The search index is being rebuilt: messages {span} are not indexed yet, so they "
            "were scanned directly (listed apart)."
        )
    else:
        result.notes.append(
            f"The search index is being rebuilt: messages {span} are not indexed yet and could "
            "not all be scanned in time, so some recent matches may be missing."
        )


# --- Entry point -----------------------------------------------------------------------


def run_search(req: SearchRequest) -> SearchResult:
    """Search messages with the best index this file has; never raises on user text."""
    text = req.text.strip()[:MAX_QUERY_CHARS]
    req = _replace(req, text=text)
    result = SearchResult(request=req, sort=req.sort)
    if not text:
        return result
    shape = store.shape()
    if req.session_id:
        req = result.request = _replace(req, session_range=_session_id_range(req.session_id))

    if req.mode == "substring":
        if shape.has_trigram and len(text) >= TRIGRAM_MIN_CHARS:
            result.engine = "trigram"
            result.notes.append(
                "Substring search uses the trigram index, which leaves out tool output and "
                "cron/subagent sessions."
            )
            _indexed_search(result, "messages_fts_trigram", quote(text))
        else:
            why = (
                "this state.db has no substring (trigram) index"
                if not shape.has_trigram
                else f"the substring index needs {TRIGRAM_MIN_CHARS} characters or more"
            )
            result.notes.append(f"Scanning messages directly: {why}.")
            _scan_search(result, [text], ("content",))
        return result

    terms = advanced_terms(text) if req.mode == "advanced" else plain_words(text)
    if not terms:
        result.error = (
            "Nothing to search for: word search ignores punctuation and operators alone. "
            "Try the substring mode to find symbols."
        )
        return result

    if shape.fts_layout is None:
        result.notes.append(
            "This state.db has no full-text index (messages_fts is missing): searching by "
            f"scanning messages newest first, up to {SCAN_BUDGET:g} s per page."
        )
        _scan_search(result, terms, ("content", "tool_name", "tool_calls"))
        return result

    state = index_state()
    if state.stale:
        result.notes.append(
            "Hermes marked the search index as stale: recent messages may be missing."
        )
    match = text if req.mode == "advanced" else words_match(text)
    result.engine = "fts"
    _indexed_search(result, "messages_fts", match)

    first_page = req.page == 1 and req.before is None
    if not result.hits and not result.error and first_page and has_cjk(text):
        # unicode61 keeps a run of CJK characters as one token, so a word inside a sentence
        # is not found: fall back to substrings.
        result.notes.append(
            "No whole-word match (the word index does not split CJK text): showing substring "
            "matches."
        )
        if shape.has_trigram and all(len(t) >= TRIGRAM_MIN_CHARS for t in terms):
            result.engine = "trigram"
            _indexed_search(result, "messages_fts_trigram", " ".join(quote(t) for t in terms))
        else:
            _scan_search(result, terms, ("content",))
        return result

    if not result.error:
        _top_up(result, terms, state)
    return result
