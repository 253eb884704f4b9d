"""``NOT`` in a full-text query, for readers who cannot read every secret (no oracle).

A row FTS5 removed because its ``NOT`` term matched cannot be brought back, so ``anchor NOT
prefix*`` would say whether a hidden token starts with ``prefix``.  For those readers SQLite
runs the query without the right-hand side of every ``NOT`` (:func:`without_negations`: the
rest of FTS5's syntax is monotonic, so it only finds more rows), and the whole query is then
evaluated on each candidate's *redacted* text in a private in-memory index
(:func:`matching_redacted`).

FTS5's syntax (sqlite.org/fts5.html, section 3): quoted strings, barewords, ``*`` after a
term, ``^`` before one, ``+`` in phrases, ``NEAR(…)``, column filters, parentheses, ``AND``,
``OR`` and ``NOT``, which binds tightest (its right operand is one phrase, ``NEAR`` or group).
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Iterable, Sequence

_TOKEN = re.compile(r'\s*(?:("(?:[^"]|"")*")|([A-Za-z0-9_\x1a\x80-\U0010ffff]+)|(.))', re.S)
_SYMBOLS = set("()*^+:{},-")
_OPTION = re.compile(
    r"\b(content|content_rowid|tokenize)\s*=\s*(['\"]?)(.*?)\2\s*(?:,|\)\s*$)", re.I
)


def index_options(sql: str) -> dict[str, str]:
    """``content``, ``content_rowid`` and ``tokenize`` of a ``CREATE VIRTUAL TABLE … fts5(…)``."""
    inner = sql[sql.find("(") + 1 :] if "(" in sql else ""
    return {m.group(1).lower(): m.group(3) for m in _OPTION.finditer(inner)}


def _tokens(text: str) -> list[str] | None:
    """The query's tokens, or None when it holds a character FTS5 would reject."""
    found = []
    for string, word, other in _TOKEN.findall(text):
        token = string or word or other
        if not token:
            continue
        if other and other not in _SYMBOLS:
            return None
        found.append(token)
    return found


def has_negation(text: str) -> bool:
    tokens = _tokens(text)
    return "NOT" in tokens if tokens is not None else "NOT" in text


def _primary_end(tokens: list[str], at: int) -> int | None:
    """Where the operand starting at ``at`` ends (exclusive), or None when there is none."""
    n = len(tokens)
    # Column filter: "- col :", "col :", "{a b} :".
    i = at
    if i < n and tokens[i] == "-":
        i += 1
    if i < n and tokens[i] == "{":
        while i < n and tokens[i] != "}":
            i += 1
        i += 1
        if i < n and tokens[i] == ":":
            i += 1
    elif i + 1 < n and tokens[i + 1] == ":" and tokens[i] not in ("(", ")"):
        i += 2
    if i >= n:
        return None
    if tokens[i] == "(" or (tokens[i] == "NEAR" and i + 1 < n and tokens[i + 1] == "("):
        if tokens[i] == "NEAR":
            i += 1
        depth = 0
        while i < n:
            if tokens[i] == "(":
                depth += 1
            elif tokens[i] == ")":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return None
    # A phrase: ^? term *? ("+" term *?)*
    while True:
        if i < n and tokens[i] == "^":
            i += 1
        if i >= n or tokens[i] in _SYMBOLS or tokens[i] in ("AND", "OR", "NOT"):
            return None
        i += 1
        if i < n and tokens[i] == "*":
            i += 1
        if i < n and tokens[i] == "+":
            i += 1
            continue
        return i


def without_negations(text: str) -> str | None:
    """``text`` without every ``NOT <operand>``; None when unreadable or nothing is left."""
    tokens = _tokens(text)
    if tokens is None:
        return None
    kept: list[str] = []
    i = 0
    while i < len(tokens):
        if tokens[i] != "NOT":
            kept.append(tokens[i])
            i += 1
            continue
        if not kept or kept[-1] in ("(", "AND", "OR", "NOT"):
            return None  # a NOT without a left operand: not a query
        end = _primary_end(tokens, i + 1)
        if end is None:
            return None
        i = end
    positive = " ".join(kept).replace("( )", "").strip()
    return positive or None


def matching_redacted(
    match: str,
    rows: Iterable[Sequence],
    columns: Sequence[str],
    tokenize: str | None = None,
    *,
    column: str | None = None,
    deadline: float | None = None,
) -> set:
    """The ids of ``rows`` (``(id, redacted text of each column…)``) that ``match`` matches
    (in ``column`` when named), in a private FTS5 index; nothing when the query cannot be read
    or runs past ``deadline`` (``time.monotonic()``)."""
    rows = list(rows)
    if not rows:
        return set()
    conn = sqlite3.connect(":memory:")
    if deadline is not None:
        conn.set_progress_handler(lambda: time.monotonic() > deadline, 1000)
    try:
        names = ", ".join('"' + c.replace('"', '""') + '"' for c in columns)
        options = ", tokenize='" + tokenize.replace("'", "''") + "'" if tokenize else ""
        conn.execute(f"create virtual table recheck using fts5({names}{options})")
        marks = ", ".join("?" for _ in range(len(columns) + 1))
        conn.executemany(f"insert into recheck (rowid, {names}) values ({marks})", rows)
        target = '"' + column.replace('"', '""') + '"' if column else "recheck"
        found = conn.execute(f"select rowid from recheck where {target} match ?", (match,))
        return {r[0] for r in found}
    except sqlite3.Error:
        return set()
    finally:
        conn.close()
