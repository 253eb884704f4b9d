"""Search messages with the best index this file has, within time budgets.

A file may have any of Hermes's indexes: ``messages_fts`` (FTS5, ``unicode61``; inline, or
external content through ``messages_fts_src``; rowid is ``messages.id``), and
``messages_fts_trigram`` (substrings and CJK, three characters or more; no tool rows nor
cron/subagent sessions).  ``messages_fts_cjk`` needs a tokenizer we lack, so no statement here
names it.

When no index can answer, a LIKE scan walks messages newest first in short id-range
statements until it has a page or its budget is spent, and says how far it got.  Relevance
order that runs out of time falls back to newest first.  Rows an index rebuild has not reached
(``state_meta``'s ``fts_rebuild_progress`` to ``fts_rebuild_high_water``) are topped up by the
same bounded scan and shown apart.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from django.db import DatabaseError
from django.utils.translation import gettext

from hermes_explorer import store
from hermes_explorer.hermes_db.deadline import QueryTimeout
from redaction import redact, redaction_enabled

from ..formatting import number, plain
from . import statements
from .negation import has_negation, index_options, matching_redacted, without_negations
from .query import (
    MAX_QUERY_CHARS,
    TRIGRAM_MIN_CHARS,
    SearchRequest,
    advanced_limit_error,
    advanced_terms,
    has_cjk,
    is_query_error,
    plain_words,
    quote,
    words_match,
)
from .snippets import highlight, matches_only_in_secrets, render_snippet, secret_pieces
from .statements import Hit, IndexState

# Relevance order is paged by OFFSET, which costs what the skipped hits cost: stop somewhere.
RANKED_CAP = 1000
# Seconds: the newest-first retry after ranking ran out, a LIKE scan, the unindexed top-up.
RETRY_BUDGET = 1.5
SCAN_BUDGET = 2.0
TOPUP_BUDGET = 1.0


@dataclass
class SearchResult:
    request: SearchRequest
    engine: str = ""  # "fts", "trigram", "scan" or "" (nothing searched)
    sort: str = "rank"  # the order actually used
    hits: list[Hit] = field(default_factory=list)
    unindexed_hits: list[Hit] = field(default_factory=list)
    # The words searched for: a hit whose match lies only inside a secret is dropped.
    terms: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    timed_out: bool = False
    next_page: int | None = None
    next_before: int | None = None
    # A query run without its NOT terms: hits must match it whole, redacted (.negation).
    whole_query: str | None = None

    @property
    def searched(self) -> bool:
        return bool(self.engine)


def _snippet_hit(row) -> Hit:
    """A hit of an indexed search: FTS5's snippet, highlighted where it matched."""
    return statements.to_hit(
        row, render_snippet(row[statements.SNIPPET], secret_pieces(*row[statements.SECRET_TEXTS]))
    )


def _excerpt_hit(row, terms: list[str]) -> Hit:
    """A hit of a scan: an excerpt around the first term, every term highlighted."""
    pieces = secret_pieces(*row[statements.SECRET_TEXTS])
    return statements.to_hit(row, highlight(row[statements.SNIPPET], terms, pieces))


def _readable(rows, terms: list[str]):
    """The rows whose match does not lie only inside a redacted secret (no oracle)."""
    return [
        row for row in rows if not matches_only_in_secrets(terms, *row[statements.SECRET_TEXTS])
    ]


def _matching_whole_query(rows, query: str):
    """The rows whose redacted text matches ``query``, NOT terms included."""
    index = store.shape().catalog.table("messages_fts")
    columns = list(index.columns) if index is not None and index.columns else ["content"]
    tokenize = index_options(index.sql).get("tokenize") if index is not None else None
    texts = []
    for row in rows:
        content, tool_calls = (redact(t) if t else "" for t in row[statements.SECRET_TEXTS])
        tool_name = row[3] or ""
        by_name = {"content": content, "tool_name": tool_name, "tool_calls": tool_calls}
        if len(columns) == 1:
            by_name = {columns[0]: " ".join(t for t in (content, tool_name, tool_calls) if t)}
        texts.append((row[0], *(by_name.get(c, "") for c in columns)))
    deadline = time.monotonic() + statements.SEARCH_BUDGET
    found = matching_redacted(query, texts, columns, tokenize, deadline=deadline)
    return [row for row in rows if row[0] in found]


def _query_error(result: SearchResult, exc: DatabaseError) -> None:
    result.error = (
        gettext(
            "SQLite could not read this query (%(error)s). Check quotes, parentheses and "
            "operators, or search plain words instead."
        )
        % {"error": exc}
        if result.request.mode == "advanced"
        else gettext("This search could not be run (%(error)s).") % {"error": exc}
    )


def _index_rows(result: SearchResult, table: str, match: str) -> list | None:
    """A page (+1 row) of ``table MATCH match``, newest first when ranking would cost too much
    or ran out of time; None when even that ran out (the result says so)."""
    req = result.request
    sort = req.sort
    try:
        if sort == "rank" and req.page == 1 and statements.too_many_to_rank(table, match, req):
            # Ranking every match of a common word is what costs; newest first stops early.
            result.notes.append(
                gettext(
                    "More than %(n)s messages match: too many to rank by relevance quickly, so "
                    "newest first. Add a word or a filter to rank them."
                )
                % {"n": number(statements.rank_match_cap())}
            )
            sort = "newest"
            req = result.request = replace(req, before=None)
        rows = statements.index_page(table, match, req, sort, statements.SEARCH_BUDGET)
    except QueryTimeout:
        if sort != "rank":
            result.timed_out = True
            result.error = gettext(
                "The search ran out of time (%(seconds)s s) before it found a page of matches. "
                "Narrow it: a rarer word, a session, a source or a shorter date range."
            ) % {"seconds": plain(statements.SEARCH_BUDGET)}
            return None
        result.notes.append(
            gettext("Too many matches to rank by relevance in time: showing newest first instead.")
        )
        sort = "newest"
        req = result.request = replace(req, before=None)
        try:
            rows = statements.index_page(table, match, req, sort, RETRY_BUDGET)
        except QueryTimeout:
            result.timed_out = True
            result.error = gettext(
                "The search ran out of time. Narrow it: a rarer word, a session, a source or "
                "a shorter date range."
            )
            return None
    result.sort = sort
    return rows


def _indexed_search(result: SearchResult, table: str, match: str) -> None:
    try:
        rows = _index_rows(result, table, match)
    except DatabaseError as exc:
        if not is_query_error(exc):
            raise
        _query_error(result, exc)
        return
    if rows is None:
        return
    req, sort = result.request, result.sort
    more = len(rows) > req.per_page
    rows = rows[: req.per_page]
    readable = _readable(rows, result.terms)
    if result.whole_query is not None:
        readable = _matching_whole_query(readable, result.whole_query)
    result.hits = [_snippet_hit(row) for row in readable]
    if not more:
        return
    if sort == "newest":
        result.next_before = rows[-1][0]
    elif req.page * req.per_page < RANKED_CAP:
        result.next_page = req.page + 1
    else:
        result.notes.append(
            gettext("Relevance order stops after %(n)s hits: sort by newest first to go further.")
            % {"n": number(RANKED_CAP)}
        )


def _scan_search(result: SearchResult, terms: list[str], columns: tuple[str, ...]) -> None:
    req = result.request
    result.engine = "scan"
    result.sort = "newest"
    if req.sort == "rank":
        result.notes.append(gettext("A scan has no relevance order: hits are newest first."))
    outcome = statements.scan(
        req, terms, budget=SCAN_BUDGET, limit=req.per_page + 1, below=req.before, columns=columns
    )
    rows = outcome.rows
    more = len(rows) > req.per_page
    rows = rows[: req.per_page]
    result.hits = [_excerpt_hit(row, terms) for row in _readable(rows, terms)]
    if more:
        result.next_before = rows[-1][0]
    elif not outcome.finished:
        result.timed_out = True
        result.next_before = outcome.resume_before
        result.notes.append(
            gettext(
                "The scan stopped after %(seconds)s s, at message #%(id)s: older messages were "
                "not searched yet. Continue with the link below, or narrow the search (a "
                "session, a source, a date range)."
            )
            % {"seconds": plain(SCAN_BUDGET), "id": number(outcome.resume_before)}
        )


def _top_up(result: SearchResult, terms: list[str], state: IndexState) -> None:
    """Hits among rows the index does not hold yet, on the first page only."""
    req = result.request
    first_page = req.page == 1 and req.before is None
    if not (state.rebuilding and first_page and terms):
        if state.rebuilding:
            result.notes.append(
                gettext(
                    "The search index is being rebuilt: messages #%(first)s–#%(last)s are not "
                    "indexed yet (matches among them are listed on the first page)."
                )
                % {"first": number(state.rebuild_from + 1), "last": number(state.rebuild_to)}
            )
        return
    outcome = statements.scan(
        req,
        terms,
        budget=TOPUP_BUDGET,
        limit=req.per_page,
        above=state.rebuild_from,
        below=state.rebuild_to + 1,
    )
    seen = {hit.id for hit in result.hits}
    result.unindexed_hits = [
        _excerpt_hit(row, terms) for row in _readable(outcome.rows, terms) if row[0] not in seen
    ]
    note = (
        gettext(
            "The search index is being rebuilt: messages %(span)s are not indexed yet, so "
            "they were scanned directly (listed apart)."
        )
        if outcome.finished
        else gettext(
            "The search index is being rebuilt: messages %(span)s are not indexed yet and "
            "could not all be scanned in time, so some recent matches may be missing."
        )
    )
    span = f"#{number(state.rebuild_from + 1)}–#{number(state.rebuild_to)}"
    result.notes.append(note % {"span": span})


def run_search(req: SearchRequest) -> SearchResult:
    """Search messages with the best index this file has; never raises on user text."""
    text = req.text.strip()[:MAX_QUERY_CHARS]
    req = replace(req, text=text)
    result = SearchResult(request=req, sort=req.sort)
    if not text:
        return result
    if req.mode == "substring":
        result.terms = [text]
    else:
        result.terms = advanced_terms(text) if req.mode == "advanced" else plain_words(text)
    shape = store.shape()
    if req.session_id:
        req = result.request = replace(
            req, session_range=statements.session_id_range(req.session_id)
        )

    if req.mode == "substring":
        if shape.has_trigram and len(text) >= TRIGRAM_MIN_CHARS:
            result.engine = "trigram"
            result.notes.append(
                gettext(
                    "Substring search uses the trigram index, which leaves out tool output and "
                    "cron/subagent sessions."
                )
            )
            _indexed_search(result, "messages_fts_trigram", quote(text))
        else:
            why = (
                gettext("this state.db has no substring (trigram) index")
                if not shape.has_trigram
                else gettext("the substring index needs %(n)s characters or more")
                % {"n": TRIGRAM_MIN_CHARS}
            )
            result.notes.append(gettext("Scanning messages directly: %(why)s.") % {"why": why})
            _scan_search(result, [text], ("content",))
        return result

    terms = result.terms
    too_costly = advanced_limit_error(text) if req.mode == "advanced" else None
    if too_costly:
        result.error = too_costly
        return result
    if not terms:
        result.error = gettext(
            "Nothing to search for: word search ignores punctuation and operators alone. "
            "Try the substring mode to find symbols."
        )
        return result

    if shape.fts_layout is None:
        result.notes.append(
            gettext(
                "This state.db has no full-text index (messages_fts is missing): searching by "
                "scanning messages newest first, up to %(seconds)s s per page."
            )
            % {"seconds": plain(SCAN_BUDGET)}
        )
        _scan_search(result, terms, ("content", "tool_name", "tool_calls"))
        return result

    state = statements.index_state()
    if state.stale:
        result.notes.append(
            gettext("Hermes marked the search index as stale: recent messages may be missing.")
        )
    match = text if req.mode == "advanced" else words_match(text)
    if req.mode == "advanced" and redaction_enabled() and has_negation(text):
        # NOT could test what a secret holds: SQLite runs the rest, each hit the whole query.
        positive = without_negations(text)
        if positive is None:
            result.error = gettext(
                "NOT needs a term on each side (for example: deploy NOT staging)."
            )
            return result
        match, result.whole_query = positive, text
        # A NOT term is no word searched for: dropping a hit for it would be the oracle too.
        result.terms = terms = advanced_terms(positive)
    result.engine = "fts"
    _indexed_search(result, "messages_fts", match)

    first_page = req.page == 1 and req.before is None
    if not result.hits and not result.error and first_page and has_cjk(text):
        # unicode61 keeps a CJK run as one token: fall back to substrings.
        result.notes.append(
            gettext(
                "No whole-word match (the word index does not split CJK text): showing substring "
                "matches."
            )
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
