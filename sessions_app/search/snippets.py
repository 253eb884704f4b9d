"""Hits as HTML: FTS5 snippets and scan excerpts, redacted, escaped and highlighted.

Snippets come with private-use markers around the matches, so they are escaped whole before
their ``<mark>`` tags; secrets are hidden even in a cut or half-highlighted snippet
(:func:`secret_pieces`).
"""

from __future__ import annotations

import re

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from redaction import redact_text, redaction_enabled

from ..content import MULTIMODAL_PREFIX

# Highlight markers: private-use characters, so the snippet is escaped before its <mark> tags.
MARK_OPEN = "\ue000"
MARK_CLOSE = "\ue001"
ELLIPSIS = "…"

# Word pieces as unicode61 cuts them (letters and digits; "_" and "-" separate).
_PIECE = re.compile(r"[^\W_]{4,}")
REDACTED = "[redacted]"


def _clean(text: str | None) -> str:
    return (text or "").replace(MULTIMODAL_PREFIX, "").replace("\x00", "")


def secret_pieces(*texts: str | None) -> set[str]:
    """The word pieces of the secrets in ``texts`` that a snippet of them could show: a cut,
    highlighted snippet may hide a key from the patterns, so the pieces redaction removes from
    the full text say what to hide."""
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


def matches_only_in_secrets(terms: list[str], *texts: str | None) -> bool:
    """Whether a search term of this hit is found only inside a secret of the message (in a
    piece redaction removed, and not in the redacted text): such a hit would confirm a guess
    at a key, so it is dropped."""
    if not redaction_enabled():
        return False
    present = [t for t in texts if t]
    if not present:
        return False
    secret = {p.lower() for p in secret_pieces(*present)}
    if not secret:
        return False
    redacted = " ".join(redact_text(t)[0] for t in present).lower()
    for term in terms:
        for piece in _ANY_PIECE.findall(term.lower()):
            if any(piece in s for s in secret) and piece not in redacted:
                return True
    return False


_ANY_PIECE = re.compile(r"[^\W_]+")


# A word in a snippet, highlight markers included (a trigram snippet can mark part of a word).
_MARKED_RUN = re.compile(f"(?:[^\\W_]|[{MARK_OPEN}{MARK_CLOSE}])+")


def _scrub(text: str, pieces: set[str]) -> str:
    """Hide every word of ``text`` that is a secret's piece or a fragment of one."""
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
