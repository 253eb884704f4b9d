"""Datasette's ``_next`` tokens (``[sort value,]key``, tilde-encoded: a real Datasette token
resumes at the same row), and the rows that come after one, by Datasette's conditions.
"""

from __future__ import annotations

from urllib.parse import unquote_plus

from .errors import ApiError
from .operators import Binder, quote

_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_ENCODED = {b: (chr(b) if b in _SAFE else "+" if b == 0x20 else f"~{b:02X}") for b in range(256)}
NULL = "$null"


def tilde_encode(value: str) -> str:
    """``/foo bar`` → ``~2Ffoo+bar`` (Datasette's tilde encoding)."""
    return "".join(_ENCODED[b] for b in value.encode("utf-8"))


def tilde_decode(value: str) -> str:
    # A literal "%" must survive: it is protected before "~" becomes "%".
    return unquote_plus(value.replace("%", "%25").replace("~", "%"))


def key_path(values: list) -> str:
    """A row's key as Datasette writes it in a token or a row URL (``a,b`` for two columns)."""
    return ",".join(tilde_encode(str(v)) for v in values)


def components(token: str) -> list[str]:
    return [tilde_decode(part) for part in token.split(",")]


def next_token(key_values: list, sort_value=None, *, sorted_: bool = False) -> str:
    """The token that resumes after a row: ``[sort value,]key``."""
    prefix = NULL if sort_value is None else tilde_encode(str(sort_value))
    return f"{prefix},{key_path(key_values)}" if sorted_ else key_path(key_values)


def keys_after(names: list[str], values: list[str], binder: Binder) -> str:
    """``(k1 > v1) or (k1 = v1 and k2 > v2) or …``: rows after a compound key."""
    ors = []
    for n in range(len(names), 0, -1):
        head, last = names[: n - 1], names[n - 1]
        ands = [f"{quote(k)} = {binder.bind(v)}" for k, v in zip(head, values, strict=False)]
        ands.append(f"{quote(last)} > {binder.bind(values[n - 1])}")
        ors.append("(" + " and ".join(ands) + ")")
    ors.reverse()
    return "(" + " or ".join(ors) + ")"


def after(token: str, *, key: list[str], sort: str | None, desc: bool, binder: Binder) -> list:
    """WHERE clauses selecting the rows after ``token`` (Datasette's conditions); ``sort``: the
    sort column as SQL; ``key``: ``["rowid"]`` for a table paged by its rowid."""
    parts = components(token)
    sort_value: str | None = None
    if sort and len(parts) > 1:
        sort_value = None if token.split(",")[0] == NULL else parts[0]
        parts = parts[1:]
    key_clauses = []
    if key == ["rowid"]:
        key_clauses.append(f"rowid > {binder.bind(parts[0])}")
    elif len(parts) == len(key):
        # Datasette bound the first key parts in order; so do we (p-numbers follow).
        key_clauses.append(keys_after(key, parts, binder))
    if not sort:
        return key_clauses
    if not key_clauses:
        raise ApiError(f"The _next token {token!r} does not name a row of this table.")
    keyed = " and ".join(key_clauses)
    if sort_value is None:
        if desc:
            return [f"({sort} is null and {keyed})"]
        return [f"({sort} is not null or ({sort} is null and {keyed}))"]
    value = binder.bind(sort_value)
    if desc:
        return [f"({sort} < {value} or {sort} is null or ({sort} = {value} and {keyed}))"]
    return [f"({sort} > {value} or ({sort} = {value} and {keyed}))"]
