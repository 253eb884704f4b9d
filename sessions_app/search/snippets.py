"""Hits as HTML: FTS5 snippets and scan excerpts of searchable text, escaped and highlighted.
They are cut from text that holds no secret (:mod:`.redacted`), so no cut can show part of one.
"""

from __future__ import annotations

import re

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from ..content import MULTIMODAL_PREFIX

# Highlight markers: private-use characters, so the snippet is escaped before its <mark> tags.
MARK_OPEN = "\ue000"
MARK_CLOSE = "\ue001"
ELLIPSIS = "…"

# What a secret in searchable text is shown as.
REDACTED = "[redacted]"


def _clean(text: str | None) -> str:
    return (text or "").replace(MULTIMODAL_PREFIX, "").replace("\x00", "")


def render_snippet(raw: str | None) -> SafeString:
    """Escape a snippet of searchable text, then turn its markers into <mark> tags."""
    html = escape(_clean(raw))
    if html.count(MARK_OPEN) != html.count(MARK_CLOSE):
        # The content itself carried one of our markers: drop highlighting, keep the text.
        return mark_safe(html.replace(MARK_OPEN, "").replace(MARK_CLOSE, ""))
    return mark_safe(html.replace(MARK_OPEN, "<mark>").replace(MARK_CLOSE, "</mark>"))


def highlight(text: str | None, terms: list[str]) -> SafeString:
    """Escape an excerpt of searchable text, marking every occurrence of the terms."""
    text = _clean(text).replace(MARK_OPEN, "").replace(MARK_CLOSE, "")
    terms = [t for t in terms if t]
    if not terms:
        return mark_safe(escape(text))
    pattern = "(" + "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True)) + ")"
    # Split on a group: the matches are the odd pieces.
    pieces = re.split(pattern, text, flags=re.I)
    return mark_safe(
        "".join(f"<mark>{escape(p)}</mark>" if i % 2 else escape(p) for i, p in enumerate(pieces))
    )
