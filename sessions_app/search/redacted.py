"""Search decided on the redacted text: what a reader is told matches is what they can read.

The store's index only proposes *candidates*, found with a relaxed query (:func:`candidates`:
no ``NOT`` operands, ``NEAR`` as ``AND``, so every true match is among them); each candidate's
*searchable* text (:func:`searchable`: redacted, every secret one :data:`SECRET` character) is
then matched against the whole query in a private in-memory FTS5 index with the store's
columns and tokenizer (:func:`matching`), which also cuts snippets and ranks (:func:`ranked`).
Why this leaks nothing about a secret: ``docs/security.md``.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Iterable, Sequence

from redaction import redact_many

# A secret in searchable text: a private-use character, a token character to unicode61 (so a
# word glued to a secret stays one word, as it was) that no query may hold (:func:`clean`).
SECRET = "\ue002"
_PRIVATE = re.compile("[\ue000-\ue002]")
_MARKER = re.compile(r"\[redacted(?:: [^\]\n]{1,60})?\]")
SNIPPET_TOKENS = 16
# Characters of each column the ranking reads (the cost of ranking is the text it indexes).
RANK_WINDOW = 4096

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


def clean(query: str) -> str:
    """``query`` without the private characters snippets and secrets are marked with."""
    return _PRIVATE.sub(" ", query)


def searchable(text: str | None) -> str:
    """What search reads of ``text``: redacted, each secret one :data:`SECRET` character."""
    return searchable_many([text])[0]


def searchable_many(texts: Iterable[str | None]) -> list[str]:
    """``[searchable(t) for t in texts]``, redacted in one batch."""
    return [_MARKER.sub(SECRET, t) if t else "" for t in redact_many(texts)]


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


def candidates(text: str) -> str | None:
    """The relaxed query that finds every row ``text`` matches once redacted: without every
    ``NOT <operand>``, each ``NEAR(…, n)`` as its phrases ANDed (a secret is one word once
    redacted, several when stored).  None when unreadable or nothing is left."""
    tokens = _tokens(text)
    if tokens is None:
        return None
    kept: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token == "NEAR" and i + 1 < len(tokens) and tokens[i + 1] == "(":
            i += 1  # the group's parentheses stay: its phrases, ANDed
            continue
        if token == "," and i + 1 < len(tokens) and tokens[i + 1].isdigit():
            i += 2  # a NEAR group's distance
            continue
        if token != "NOT":
            kept.append(token)
            i += 1
            continue
        if not kept or kept[-1] in ("(", "AND", "OR", "NOT"):
            return None  # a NOT without a left operand: not a query
        end = _primary_end(tokens, i + 1)
        if end is None:
            return None
        i = end
    relaxed = " ".join(kept).replace("( )", "").strip()
    return relaxed or None


def _index(conn: sqlite3.Connection, name: str, columns: Sequence[str], tokenize: str | None):
    names = ", ".join('"' + c.replace('"', '""') + '"' for c in columns)
    options = ", tokenize='" + tokenize.replace("'", "''") + "'" if tokenize else ""
    conn.execute(f"create virtual table {name} using fts5({names}{options})")
    marks = ", ".join("?" for _ in range(len(columns) + 1))
    return f"insert into {name} (rowid, {names}) values ({marks})"


def _private(sql: str, params: tuple, rows, columns, tokenize, deadline=None) -> list:
    """The rows ``sql`` reads of a private FTS5 table ``recheck`` of ``rows``; raises what
    SQLite says, also when the statement runs past ``deadline`` (``time.monotonic()``)."""
    conn = sqlite3.connect(":memory:")
    if deadline is not None:
        conn.set_progress_handler(lambda: time.monotonic() > deadline, 1000)
    try:
        conn.executemany(_index(conn, "recheck", columns, tokenize), rows)
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def query_error(match: str, columns: Sequence[str], tokenize: str | None = None) -> str | None:
    """What FTS5 says of ``match`` over these columns, when it cannot read it."""
    try:
        _private("select rowid from recheck where recheck match ?", (match,), [], columns, tokenize)
        return None
    except sqlite3.Error as exc:
        return str(exc)


def matching(
    match: str,
    rows: Iterable[Sequence],
    columns: Sequence[str],
    tokenize: str | None = None,
    *,
    column: str | None = None,
    deadline: float | None = None,
    snippets: tuple[str, str, str] | None = None,
) -> dict:
    """``{id: snippet}`` of the ``rows`` (``(id, searchable text of each column…)``) that
    ``match`` matches (in ``column`` when named), in a private FTS5 index; the snippet is
    FTS5's, cut around the match with ``snippets`` (open mark, close mark, ellipsis), or None.
    Nothing when the query cannot be read or runs past ``deadline`` (``time.monotonic()``)."""
    rows = list(rows)
    if not rows:
        return {}
    target = '"' + column.replace('"', '""') + '"' if column else "recheck"
    cut = f"snippet(recheck, -1, ?, ?, ?, {SNIPPET_TOKENS})" if snippets else "NULL"
    sql = f"select rowid, {cut} from recheck where {target} match ?"
    try:
        return dict(_private(sql, (*(snippets or ()), match), rows, columns, tokenize, deadline))
    except sqlite3.Error:
        return {}


def ranked(
    match: str,
    rows: Sequence[Sequence],
    columns: Sequence[str],
    tokenize: str | None = None,
    *,
    deadline: float | None = None,
) -> list:
    """The ids of ``rows`` (which all match), best first by FTS5's rank over these rows alone,
    read up to :data:`RANK_WINDOW` characters a column (ties, and rows whose match lies beyond:
    newest first, as ``rows`` come)."""
    sql = "select rowid from recheck where recheck match ? order by rank, rowid desc"
    cut = [(row[0], *(text[:RANK_WINDOW] for text in row[1:])) for row in rows]
    try:
        order = [r[0] for r in _private(sql, (match,), cut, columns, tokenize, deadline)]
    except sqlite3.Error:
        order = []
    placed = set(order)
    return order + [row[0] for row in rows if row[0] not in placed]
