"""What a search asks for, and how user text becomes an FTS5 query or LIKE terms.

By default each word is quoted, so no character is syntax; ``mode=advanced`` passes AND/OR/NOT,
``"phrases"`` and ``prefix*`` through, and what SQLite still rejects becomes a message
(:func:`is_query_error`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.utils.translation import gettext, gettext_lazy, pgettext_lazy

MODES = {
    "words": pgettext_lazy("search mode", "Words"),
    "advanced": gettext_lazy('Advanced (AND, OR, NOT, "phrase", prefix*)'),
    "substring": gettext_lazy("Substring / CJK"),
}
SORTS = {"rank": gettext_lazy("Best match"), "newest": gettext_lazy("Newest first")}
PER_PAGE = 20
MAX_QUERY_CHARS = 500
TRIGRAM_MIN_CHARS = 3

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


def plain_words(text: str) -> list[str]:
    """The words that hold a letter or digit (what the unicode61 tokenizer keeps)."""
    return [w for w in text.split() if any(ch.isalnum() for ch in w)]


def quote(term: str) -> str:
    """An FTS5 string: whatever is inside is text, never syntax."""
    return '"' + term.replace('"', '""') + '"'


def unquote(token: str) -> str:
    """The text of an FTS5 string (:func:`quote`), or ``token`` itself when it is a bareword."""
    return token[1:-1].replace('""', '"') if token.startswith('"') else token


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


# A prefix term expands inside one SQLite call no deadline interrupts (26 one-letter prefixes
# ran for seconds on a mid-sized store).
MAX_PREFIX_TERMS = 3
MIN_PREFIX_CHARS = 3
MAX_ADVANCED_TERMS = 16
_PREFIX_TERM = re.compile(r"(\w*)\*", re.UNICODE)


def advanced_limit_error(text: str) -> str | None:
    """Why an advanced query would cost too much to run, or None when it is bounded."""
    prefixes = _PREFIX_TERM.findall(text)
    if len(prefixes) > MAX_PREFIX_TERMS:
        return gettext(
            "This search has %(n)s prefix terms (word*); at most %(max)s can be searched at "
            "once. Narrow it: fewer prefixes, or whole words."
        ) % {"n": len(prefixes), "max": MAX_PREFIX_TERMS}
    short = [p for p in prefixes if len(p) < MIN_PREFIX_CHARS]
    if short:
        return gettext(
            "A prefix term needs at least %(n)s letters before the * (“%(prefix)s*” would match "
            "too many words). Narrow it: a longer prefix."
        ) % {"n": MIN_PREFIX_CHARS, "prefix": short[0]}
    if len(advanced_terms(text)) > MAX_ADVANCED_TERMS:
        return gettext(
            "This search has more than %(max)s terms. Narrow it: fewer words, or split it into "
            "several searches."
        ) % {"max": MAX_ADVANCED_TERMS}
    return None


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


def like_pattern(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def is_query_error(exc: BaseException) -> bool:
    message = str(exc).lower()
    return any(needle in message for needle in _QUERY_ERRORS)
