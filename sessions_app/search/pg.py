"""Search candidates on a PostgreSQL schema, and its text as a SQLite file would hold it.

Hermes's ``messages.search_vector`` (``'simple'`` configuration) cannot propose every message
the recheck (:func:`.redacted.matching`, FTS5's ``unicode61`` words) will keep: PostgreSQL's
parser keeps host names, e-mail addresses, file names and paths whole (``settings.py`` is one
lexeme there, two words to FTS5), and the vector covers only the first 8,192 characters.  So the
candidates are the rows whose stored text holds every word of the relaxed query, in any case and
with or without diacritics (:func:`candidate_clause`): a word FTS5 finds in the redacted text is
in the stored text, so no true match is left out, and the recheck decides, as on a SQLite file.
"""

from __future__ import annotations

import re
import unicodedata

from .redacted import _tokens

# What FTS5's unicode61 tokenizer keeps as a word: runs of letters and digits.
_WORD = re.compile(r"[^\W_]+")
_SKIPPED = {"*", "^", "+", "-", "}", ":"}
COLUMNS = ("content", "tool_name", "tool_calls")
# Characters of a tool output Hermes's current word index holds: its words past them are not
# found (the schema's search decides so too, on the redacted text: ``engine._as_indexed``).
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
        text = token[1:-1].replace('""', '"') if token.startswith('"') else token
        words = _WORD.findall(text)
        parts.append("(" + " AND ".join([any_column] * len(words)) + ")" if words else "TRUE")
        params += [_pattern(w) for w in words for _ in columns]
        operand_before = True
    return ("(" + " ".join(parts) + ")" if parts else "TRUE"), params


def substring_clause(text: str) -> tuple[str, list]:
    """A ``WHERE`` clause over ``messages m`` true of every row whose content holds ``text``
    in any case (what FTS5's ``trigram`` tokenizer matches, and more: the recheck decides),
    whatever the database's locale; marked content (multimodal parts, bytes) left out, as a
    file's trigram index reads nothing past the NUL that starts it there."""
    parts = []
    for ch in text:
        pattern = _pattern(ch)
        parts.append(pattern if len(pattern) > 1 else re.escape(ch))
    return "(m.content ~ %s AND left(m.content, 1) <> chr(1))", ["".join(parts)]
