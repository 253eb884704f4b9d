"""Datasette's paging: ``_next`` tokens and the tilde encoding they are written in.

Datasette's ``_next`` is the last row's key: ``<pk>`` on a primary-key order,
``<sort value>,<pk>`` on another sort, each part tilde-encoded (``~2C`` for ``,``, ``+`` for a
space).  Here the same tokens resume the explorer's keyset pages, and the old-URL pages write
them in the same form.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from sessions_app.pagination import Keyset

_SAFE = re.compile(r"[A-Za-z0-9_\-]")
# The type of each key a token may carry, per table.
KEY_TYPES = {
    "sessions": {"id": str, "started_at": float, "source": str},
    "messages": {"id": int, "timestamp": float},
}


def tilde_decode(value: str) -> str:
    """Datasette's tilde encoding (``~2C`` for ``,``, ``+`` for a space) back to text."""
    if "~" not in value and "+" not in value:
        return value
    return unquote(value.replace("%", "%25").replace("+", " ").replace("~", "%"))


def tilde_encode(value: str) -> str:
    out = []
    for ch in value:
        if _SAFE.match(ch):
            out.append(ch)
        elif ch == " ":
            out.append("+")
        else:
            out.extend(f"~{b:02X}" for b in ch.encode())
    return "".join(out)


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


def next_token(keyset: Keyset, row) -> str:
    """The ``_next`` token that resumes after ``row``."""
    return ",".join(tilde_encode(str(v)) for v in keyset.values_of(row))


def cursor_for(table: str, keyset: Keyset, token: str) -> str | None:
    """Datasette's ``_next`` as the explorer's keyset cursor (None when it does not fit)."""
    values = next_values(table, keyset, token)
    if values is None:
        return None
    return keyset.encode(dict(zip([k for k, _ in keyset.keys], values, strict=True)), "n")


def sort_keyset(sort: str | None, desc: bool) -> Keyset:
    """Datasette's order: the sort column (if any), then the primary key."""
    name = ("-" if desc else "") + (sort or "id")
    if sort in (None, "id"):
        return Keyset((("id", desc),), name=name)
    return Keyset(((sort, desc), ("id", desc)), name=name)
