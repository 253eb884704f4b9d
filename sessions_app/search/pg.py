"""Search on a PostgreSQL schema: which rows may match (candidates), and what Hermes's current
word index would hold of them.

Hermes's ``messages.search_vector`` (``'simple'`` configuration) cannot propose every message
the recheck (:func:`.redacted.matching`, FTS5's ``unicode61`` words) will keep: PostgreSQL's
parser keeps host names, e-mail addresses, file names and paths whole (``settings.py`` is one
lexeme there, two words to FTS5), and the vector covers only the first 8,192 characters.  The
candidates come from the explorer's local word index (:mod:`.local_index`) up to its ``high``
id; above it (and on a schema without one) they are the rows whose stored text holds every word
of the relaxed query, in any case and with or without diacritics (:func:`candidate_clause`): a
word FTS5 finds in the redacted text is in the stored text, so no true match is left out, and
the recheck decides, as on a SQLite file.  A tool output counts by its first
:data:`TOOL_CONTENT_INDEXED` characters, as in a current file's index
(:func:`past_tool_prefix`).
"""

from __future__ import annotations

import re
import unicodedata

from .query import unquote
from .redacted import _tokens, matching

# What FTS5's unicode61 tokenizer keeps as a word: runs of letters and digits.
_WORD = re.compile(r"[^\W_]+")
_SKIPPED = {"*", "^", "+", "-", "}", ":"}
COLUMNS = ("content", "tool_name", "tool_calls")
# Characters of a tool output Hermes's current word index holds: its words past them are not
# found (a schema's search decides so too: :func:`past_tool_prefix`).
TOOL_CONTENT_INDEXED = 8192


def _variants() -> dict[str, set[str]]:
    """Each ASCII letter with the Latin letters FTS5 takes for it once it removes diacritics,
    in both cases."""
    found: dict[str, set[str]] = {}
    for code in [*range(0xC0, 0x250), *range(0x1E00, 0x1F00)]:
        base = unicodedata.normalize("NFD", chr(code))[0].lower()
        if base.isascii() and base.isalpha():
            found.setdefault(base, {base, base.upper()}).add(chr(code))
    return found


_VARIANTS = _variants()


def _pattern(word: str) -> str:
    """A regular expression for ``word`` in any case, with or without diacritics (as FTS5's
    ``unicode61`` compares words), whatever the database's locale."""
    out = []
    for ch in word:
        base = unicodedata.normalize("NFD", ch.lower())[0]
        chars = {ch, *(c for c in (ch.lower(), ch.upper()) if len(c) == 1)}
        chars |= _VARIANTS.get(base, set())
        out.append(ch if len(chars) == 1 else "[" + "".join(sorted(chars)) + "]")
    return "".join(out)


def candidate_clause(relaxed: str, columns=COLUMNS) -> tuple[str, list]:
    """A ``WHERE`` clause over ``messages m`` true of every row whose text may match the
    relaxed FTS5 query ``relaxed`` (see :func:`.redacted.candidates`): each phrase's words
    (:func:`_pattern`) in any column, the query's ``AND``, ``OR`` and parentheses kept,
    column filters, prefixes and initial-token marks loosened to "anywhere"."""
    tokens = _tokens(relaxed) or []
    any_column = "(" + " OR ".join(f"m.{c} ~ %s" for c in columns) + ")"
    parts: list[str] = []
    params: list = []
    operand_before = in_braces = False
    for i, token in enumerate(tokens):
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        in_braces = (in_braces or token == "{") and token != "}"
        if token in _SKIPPED or following == ":" or in_braces:
            continue
        if token in ("AND", "OR"):
            parts.append(token)
            operand_before = False
            continue
        if operand_before and token != ")":
            parts.append("AND")
        if token in ("(", ")"):
            parts.append(token)
            operand_before = token == ")"
            continue
        words = _WORD.findall(unquote(token))
        parts.append("(" + " AND ".join([any_column] * len(words)) + ")" if words else "TRUE")
        params += [_pattern(w) for w in words for _ in columns]
        operand_before = True
    return ("(" + " ".join(parts) + ")" if parts else "TRUE"), params


def substring_clause(match: str) -> tuple[str, list]:
    """A ``WHERE`` clause over ``messages m`` true of every row whose content holds each string
    of ``match`` (a trigram query: FTS5 strings, :func:`.query.quote`) in any case (what FTS5's
    ``trigram`` tokenizer matches, and more: the recheck decides), whatever the database's
    locale; marked content (multimodal parts, bytes) left out, as a file's trigram index reads
    nothing past the NUL that starts it there."""
    patterns = []
    for text in (unquote(token) for token in _tokens(match) or ()):
        parts = []
        for ch in text:
            pattern = _pattern(ch)
            parts.append(pattern if len(pattern) > 1 else re.escape(ch))
        patterns.append("".join(parts))
    held = " AND ".join(["m.content ~ %s"] * len(patterns) or ["TRUE"])
    return f"({held} AND left(m.content, 1) <> chr(1))", patterns


def past_tool_prefix(
    relaxed: str, docs: list, roles: list, columns, tokenize=None, *, column=None, deadline=None
) -> set:
    """Ids of the tool rows among ``docs`` (``(id, *texts in columns)``, searchable text) whose
    relaxed query holds only past their output's first :data:`TOOL_CONTENT_INDEXED` characters:
    rows a current file's word index would not propose.  The cut is made on the redacted text,
    so where it falls depends on no secret; one private index for the whole batch."""
    at = 1 + columns.index("content") if "content" in columns else None
    cut = [
        (*doc[:at], doc[at][:TOOL_CONTENT_INDEXED], *doc[at + 1 :])
        for doc, role in zip(docs, roles, strict=True)
        if at is not None and role == "tool" and len(doc[at]) > TOOL_CONTENT_INDEXED
    ]
    if not cut:
        return set()
    held = matching(relaxed, cut, columns, tokenize, column=column, deadline=deadline)
    return {doc[0] for doc in cut} - set(held)
