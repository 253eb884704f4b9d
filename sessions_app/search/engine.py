"""Search messages with the best index this file has, within time budgets, decided on the
redacted text (:mod:`.redacted`).

An index proposes candidates: ``messages_fts`` (FTS5, ``unicode61``; rowid is ``messages.id``),
``messages_fts_trigram`` (substrings, three characters or more; no tool rows nor cron/subagent
sessions), else a LIKE scan in short id-range statements; on a PostgreSQL schema, every message
holding the query's words (:mod:`.pg`).  Best match ranks the newest :data:`RANKED_CAP` hits; a
walk out of time shows what it found and says how far it got; rows an index rebuild has not
reached (``state_meta``) are scanned on the first page and shown apart.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from django.db import DatabaseError
from django.utils.translation import gettext

from hermes_explorer import dialect, store
from hermes_explorer.hermes_db.deadline import QueryTimeout
from redaction import redact

from ..content import as_text
from ..formatting import number, plain
from . import pg, statements
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
from .redacted import (
    SECRET,
    candidates,
    clean,
    index_options,
    matching,
    query_error,
    ranked,
    searchable_many,
)
from .snippets import ELLIPSIS, MARK_CLOSE, MARK_OPEN, REDACTED, highlight, render_snippet
from .statements import Hit, IndexState, Walk

# Best match ranks this many of the newest hits (a common word's every match would cost).
RANKED_CAP = 200
# Seconds: an indexed walk, a LIKE scan, the unindexed top-up.
SEARCH_BUDGET = statements.SEARCH_BUDGET
SCAN_BUDGET = 2.0
TOPUP_BUDGET = 1.0
# Candidates read at once: the first batch a page's worth, each next one fourfold, up to this.
MAX_BATCH = 2000
EXCERPT_BEFORE = 60
EXCERPT_CHARS = 240


@dataclass
class SearchResult:
    request: SearchRequest
    engine: str = ""  # "fts", "trigram", "scan" or "" (nothing searched)
    sort: str = "rank"  # the order actually used
    hits: list[Hit] = field(default_factory=list)
    unindexed_hits: list[Hit] = field(default_factory=list)
    # The words searched for (highlighted in scan excerpts).
    terms: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    timed_out: bool = False
    next_page: int | None = None
    next_before: int | None = None

    @property
    def searched(self) -> bool:
        return bool(self.engine)


def _texts(rows) -> list[dict[str, str]]:
    """Each candidate's searchable content, tool name and tool calls."""
    contents = searchable_many(as_text(row[statements.CONTENT]) for row in rows)
    names = searchable_many(row[3] for row in rows)
    calls = searchable_many(row[statements.TOOL_CALLS] for row in rows)
    return [
        {"content": c, "tool_name": n, "tool_calls": t}
        for c, n, t in zip(contents, names, calls, strict=True)
    ]


def _filtered(rows, req: SearchRequest) -> list:
    """``rows`` whose tool name is the one asked for once redacted, as the page shows it."""
    if not req.tool_name:
        return rows
    return [row for row in rows if (redact(row[3]) or "") == req.tool_name]


def _document(mid: int, texts: dict[str, str], index) -> tuple:
    """``(id, texts…)`` in the index's columns; an inline index's one column holds them all."""
    if index.inline:
        texts = {index.columns[0]: " ".join(t for t in texts.values() if t)}
    return (mid, *(texts.get(c, "") for c in index.columns))


@dataclass(frozen=True)
class Index:
    """What the private index must copy of a store's FTS5 index: columns and tokenizer."""

    columns: tuple[str, ...]
    tokenize: str | None
    inline: bool  # one column, filled with content, tool name and tool calls together

    @classmethod
    def of(cls, table: str) -> Index:
        shape = store.shape()
        if dialect.postgres():
            if table == statements.TRIGRAM_TABLE:
                # As a current file's substring index reads: one column, trigrams (and, one
                # column without external content, read as the inline layout is).
                return cls(("content",), "trigram", True)
            # Hermes's vector covers content, tool name and tool calls: FTS5's view layout.
            return cls(tuple(c for c in pg.COLUMNS if shape.has_column("messages", c)), None, False)
        info = shape.catalog.table(table)
        if info is None or not info.columns:
            return cls(("content",), None, False)
        options = index_options(info.sql)
        inline = len(info.columns) == 1 and not options.get("content")
        return cls(tuple(info.columns), options.get("tokenize"), inline)


def _clean_whole(row, doc_texts: dict[str, str]) -> bool:
    """Whether the store read exactly the candidate's searchable text: it holds no secret
    (nor a marker) and was read whole.  The store's match then is the redacted text's."""
    raw = {"content": row[statements.CONTENT], "tool_name": row[3]}
    raw["tool_calls"] = row[statements.TOOL_CALLS]
    return all(
        len(raw[c] or "") < statements.REDACT_WINDOW and (raw[c] or "") == doc_texts[c] for c in raw
    )


def _walk_index(req: SearchRequest, table: str, match: str, need: int) -> Walk:
    """Up to ``need`` hits of ``match``, newest first: the index's candidates for the relaxed
    query, each matched whole on its searchable text (a candidate without a secret, read whole,
    already was, when the query was not relaxed)."""
    index = Index.of(table)
    relaxed = candidates(match)
    if relaxed is None:
        error = (
            None if " NOT " in f" {match} " else query_error(match, index.columns, index.tokenize)
        )
        raise DatabaseError(error) if error else ValueError(match)
    deadline = time.monotonic() + SEARCH_BUDGET
    walk = Walk()
    before, batch = req.before, req.per_page + 1
    # The first batch's rows (a page and one, already read and redacted) are checked whatever
    # the clock says, so a walk out of time always moves on: a page that checked nothing would
    # send its "continue" link back where it started.  Later batches stop at the deadline.
    check_by = None
    while len(walk.found) < need:
        remaining = deadline - time.monotonic()
        try:
            if remaining <= 0.02:
                raise QueryTimeout(SEARCH_BUDGET)
            rows, stopped, exact_upto = statements.index_page(
                table, relaxed, replace(req, before=before, per_page=batch), remaining
            )
        except QueryTimeout:
            walk.finished, walk.resume_before = False, before
            break
        more = len(rows) > batch
        stopped = None if more else stopped
        last = rows[batch - 1][0] if more else None
        rows = _filtered(rows[:batch], req)
        texts = _texts(rows)
        docs = [_document(row[0], t, index) for row, t in zip(rows, texts, strict=True)]
        if dialect.postgres() and table != statements.TRIGRAM_TABLE:
            roles = [row[2] for row in rows]
            cut = pg.past_tool_prefix(
                relaxed, docs, roles, index.columns, index.tokenize, deadline=check_by
            )
            if cut:
                kept = [i for i, doc in enumerate(docs) if doc[0] not in cut]
                rows, texts, docs = ([x[i] for i in kept] for x in (rows, texts, docs))
        settled = {
            row[0]
            for row, t in zip(rows, texts, strict=True)
            # An FTS5 index matched the query itself up to exact_upto; above, on a schema,
            # the scanned candidates only hold its words.
            if relaxed == match and row[0] <= exact_upto and _clean_whole(row, t)
        }
        unsure = [doc for doc in docs if doc[0] not in settled]
        settled |= set(matching(match, unsure, index.columns, index.tokenize, deadline=check_by))
        if check_by and docs and time.monotonic() > check_by:  # cut short: none of it holds
            walk.finished, walk.resume_before = False, before
            break
        walk.found += [(row, doc) for row, doc in zip(rows, docs, strict=True) if doc[0] in settled]
        if stopped is not None and len(walk.found) < need:  # a walk in id ranges, out of time
            walk.finished, walk.resume_before = False, stopped
            break
        if len(walk.found) >= need:
            walk.finished = len(walk.found) == need and not more
            del walk.found[need:]
        if not more or not walk.finished:
            break
        before, check_by = last, deadline
        batch = min(MAX_BATCH, max(batch, 2 * (need - len(walk.found))))
    return walk


def _snippet_hits(found: list, match: str, index: Index) -> list[Hit]:
    """The hits of ``found`` (``(row, doc)``), each with its snippet cut from its searchable
    text around the match."""
    marks = (MARK_OPEN, MARK_CLOSE, ELLIPSIS)
    docs = [doc for _row, doc in found]
    snippets = matching(match, docs, index.columns, index.tokenize, snippets=marks)
    return [
        statements.to_hit(
            row, render_snippet((snippets.get(doc[0]) or "").replace(SECRET, REDACTED))
        )
        for row, doc in found
    ]


def _newest_page(result: SearchResult, walk: Walk, seconds: float) -> list:
    """The first page of a walk newest first, and where the next one starts: below it, or
    where a walk out of time stopped (said in a note)."""
    page = walk.found[: result.request.per_page]
    if len(walk.found) > len(page):
        result.next_before = page[-1][0][0]
    elif not walk.finished:
        result.timed_out = True
        result.next_before = walk.resume_before
        result.notes.append(
            gettext(
                "The search stopped after %(seconds)s s: older messages were not searched yet. "
                "Continue with the link below, or narrow the search (a rarer word, a session, a "
                "source or a shorter date range)."
            )
            % {"seconds": plain(seconds)}
        )
    return page


def _indexed_search(result: SearchResult, table: str, match: str) -> None:
    req = result.request
    ranking = req.sort == "rank"
    try:
        walk = _walk_index(req, table, match, RANKED_CAP if ranking else req.per_page + 1)
    except ValueError:
        result.error = gettext("NOT needs a term on each side (for example: deploy NOT staging).")
        return
    except DatabaseError as exc:
        if not is_query_error(exc):
            raise
        result.error = (
            gettext(
                "SQLite could not read this query (%(error)s). Check quotes, parentheses and "
                "operators, or search plain words instead."
            )
            % {"error": exc}
            if req.mode == "advanced"
            else gettext("This search could not be run (%(error)s).") % {"error": exc}
        )
        return
    result.sort = "rank" if ranking else "newest"
    found, index = walk.found, Index.of(table)
    if ranking:
        if len(found) >= RANKED_CAP or not walk.finished:
            result.notes.append(
                gettext(
                    "Best match among the newest %(n)s matches: sort by newest first to see "
                    "every match."
                )
                % {"n": number(len(found))}
            )
        by_id = {row[0]: (row, doc) for row, doc in found}
        order = ranked(
            match,
            [doc for _row, doc in found],
            index.columns,
            index.tokenize,
            deadline=time.monotonic() + SEARCH_BUDGET,
        )
        start = (req.page - 1) * req.per_page
        page = [by_id[i] for i in order[start : start + req.per_page]]
        result.hits = _snippet_hits(page, match, index)
        if len(order) > start + req.per_page:
            result.next_page = req.page + 1
        return
    result.hits = _snippet_hits(_newest_page(result, walk, SEARCH_BUDGET), match, index)


def _contains(texts: dict[str, str], terms: list[str], columns: tuple[str, ...]) -> bool:
    """Whether every term is in one of the columns' texts, as LIKE finds it (ASCII case)."""
    lowered = [_ascii_lower(texts.get(c, "")) for c in columns]
    return all(any(_ascii_lower(t) in text for text in lowered) for t in terms)


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def _ascii_lower(text: str) -> str:
    return text.translate(_ASCII_LOWER)


def _walk_scan(req, terms, columns, *, budget, need, above=0, below=None, match=None) -> Walk:
    """Up to ``need`` hits newest first among messages with ``above < id < below`` that hold
    every term (stored text, by LIKE), each kept when its searchable text holds them too, or
    when given, matches the FTS5 query ``match`` (rows an index has not reached yet)."""
    deadline = time.monotonic() + budget
    walk = Walk()
    below = statements.max_id() + 1 if below is None else below
    index = Index.of("messages_fts") if match is not None else None
    while len(walk.found) < need:
        remaining = deadline - time.monotonic()
        if remaining <= 0.02:
            walk.finished, walk.resume_before = False, below
            break
        want = need - len(walk.found)
        outcome = statements.scan(
            req, terms, budget=remaining, limit=want, above=above, below=below, columns=columns
        )
        rows = _filtered(outcome.found, req)
        texts = _texts(rows)
        if match is None:
            kept = {
                row[0] for row, t in zip(rows, texts, strict=True) if _contains(t, terms, columns)
            }
        else:
            docs = [_document(row[0], t, index) for row, t in zip(rows, texts, strict=True)]
            # No deadline: rows read (at most ``want``) are checked whole, or a check cut short
            # would pass over their hits as the walk goes on below them.
            kept = set(matching(match, docs, index.columns, index.tokenize))
        walk.found += [(row, t) for row, t in zip(rows, texts, strict=True) if row[0] in kept]
        if outcome.finished:
            break
        below = outcome.resume_before
    return walk


def _excerpt_hit(row, texts: dict[str, str], terms: list[str]) -> Hit:
    """A hit of a scan: an excerpt of its searchable content around the first term."""
    content = texts["content"]
    at = _ascii_lower(content).find(_ascii_lower(terms[0])) if terms else -1
    start = max(0, at - EXCERPT_BEFORE)
    excerpt = content[start : start + EXCERPT_CHARS].replace(SECRET, REDACTED)
    return statements.to_hit(row, highlight(excerpt, terms))


def _scan_search(result: SearchResult, terms: list[str], columns: tuple[str, ...]) -> None:
    req = result.request
    result.engine = "scan"
    result.sort = "newest"
    if req.sort == "rank":
        result.notes.append(gettext("A scan has no relevance order: hits are newest first."))
    walk = _walk_scan(
        req, terms, columns, budget=SCAN_BUDGET, need=req.per_page + 1, below=req.before
    )
    page = _newest_page(result, walk, SCAN_BUDGET)
    result.hits = [_excerpt_hit(row, texts, terms) for row, texts in page]


def _top_up(result: SearchResult, match: str, state: IndexState) -> None:
    """Hits among rows the index does not hold yet, on the first page only."""
    req = result.request
    first_page = req.page == 1 and req.before is None
    if not (state.rebuilding and first_page):
        if state.rebuilding:
            result.notes.append(
                gettext(
                    "The search index is being rebuilt: messages #%(first)s–#%(last)s are not "
                    "indexed yet (matches among them are listed on the first page)."
                )
                % {"first": number(state.rebuild_from + 1), "last": number(state.rebuild_to)}
            )
        return
    walk = _walk_scan(
        req,
        [],
        ("content",),
        budget=TOPUP_BUDGET,
        need=req.per_page,
        above=state.rebuild_from,
        below=state.rebuild_to + 1,
        match=match,
    )
    seen = {hit.id for hit in result.hits}
    result.unindexed_hits = [
        _excerpt_hit(row, texts, result.terms) for row, texts in walk.found if row[0] not in seen
    ]
    note = (
        gettext(
            "The search index is being rebuilt: messages %(span)s are not indexed yet, so "
            "they were scanned directly (listed apart)."
        )
        if walk.finished
        else gettext(
            "The search index is being rebuilt: messages %(span)s are not indexed yet and "
            "could not all be scanned in time, so some recent matches may be missing."
        )
    )
    span = f"#{number(state.rebuild_from + 1)}–#{number(state.rebuild_to)}"
    result.notes.append(note % {"span": span})


def _by_trigrams(shape, terms: list[str]) -> bool:
    """Whether substrings of ``terms`` are found as a file's trigram index finds them: through
    it, or on a schema, scanned and then matched and ranked as it would be."""
    has_index = shape.has_trigram or dialect.postgres()
    return has_index and all(len(t) >= TRIGRAM_MIN_CHARS for t in terms)


def _substring_search(result: SearchResult, shape, terms: list[str]) -> None:
    """The messages whose content holds every term: as the trigram index finds them
    (:func:`_by_trigrams`), else scanned."""
    if _by_trigrams(shape, terms):
        result.engine = "trigram"
        _indexed_search(result, statements.TRIGRAM_TABLE, " ".join(quote(t) for t in terms))
    else:
        _scan_search(result, terms, ("content",))


def run_search(req: SearchRequest) -> SearchResult:
    """Search messages with the best index this file has; never raises on user text."""
    text = clean(req.text).strip()[:MAX_QUERY_CHARS]
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
        result.notes.append(
            gettext(
                "Substring search reads what Hermes's substring index holds: it leaves out tool "
                "output and cron/subagent sessions."
            )
        )
        postgres = dialect.postgres()
        if postgres or not _by_trigrams(shape, [text]):
            why = (
                gettext("a PostgreSQL profile has no substring (trigram) index")
                if postgres
                else gettext("this state.db has no substring (trigram) index")
                if not shape.has_trigram
                else gettext("the substring index needs %(n)s characters or more")
                % {"n": TRIGRAM_MIN_CHARS}
            )
            result.notes.append(gettext("Scanning messages directly: %(why)s.") % {"why": why})
        _substring_search(result, shape, [text])
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
        _substring_search(result, shape, terms)
        return result

    if not result.error:
        _top_up(result, match, state)
    return result
