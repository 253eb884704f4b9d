"""Datasette's ``_next`` tokens as the explorer's keyset cursors (for the redirects).

Datasette's ``_next`` is the last row's key: ``<pk>`` on a primary-key order,
``<sort value>,<pk>`` on another sort, each part tilde-encoded (``legacy_app.api.tokens``).
When an old URL redirects to an explorer page, its token becomes that page's cursor.
"""

from __future__ import annotations

from sessions_app.pagination import Keyset

from .api.tokens import tilde_decode, tilde_encode

__all__ = ["cursor_for", "next_values", "tilde_decode", "tilde_encode"]

# The type of each key a token may carry, per table.
KEY_TYPES = {
    "sessions": {"id": str, "started_at": float, "source": str},
    "messages": {"id": int, "timestamp": float},
}


def next_values(table: str, keyset: Keyset, token: str) -> list | None:
    """The key values in a Datasette ``_next`` token, typed; None when it does not fit."""
    parts = [tilde_decode(p) for p in token.split(",")]
    if len(parts) != len(keyset.keys) or "$null" in parts:
        return None
    values: list = []
    for (name, _desc), part in zip(keyset.keys, parts, strict=True):
        kind = KEY_TYPES[table].get(name)
        if kind is None:
            return None
        try:
            values.append(kind(part))
        except ValueError:
            return None
    return values


def cursor_for(table: str, keyset: Keyset, token: str) -> str | None:
    """Datasette's ``_next`` as the explorer's keyset cursor (None when it does not fit)."""
    values = next_values(table, keyset, token)
    if values is None:
        return None
    return keyset.encode(dict(zip([k for k, _ in keyset.keys], values, strict=True)), "n")
