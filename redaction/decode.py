"""Decoding before matching: JSON string escapes, percent-escapes, HTML character references and
invisible characters.

Tool results and arguments are JSON, often JSON inside a JSON string, so a secret may sit
behind an escape or be spelled with escapes (``\\u0073k-…``).  The engine also matches each
JSON string literal holding an escape, decoded (and the next level inside it), and hides what it
finds in the decoded value, encoded again in place: a JSON document stays valid, with the same
layout.  Literals are found by their quotes, not by parsing, so text cut short is handled too.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Iterator

# A double-quoted string on one line: the body, then the closing quote, or the end of the line
# or of the text (a preview cut inside a string), a lone backslash before them left out.  It
# never fails once started: a failure would be read again from each quote before it.
_LITERAL = re.compile(r'"([^"\\\n]*(?:\\.[^"\\\n]*)*)(?:"|(?=\\?(?:\n|\Z)))')
_DECODER = json.JSONDecoder(strict=False)
# The escapes JSON defines; anything else after a backslash is kept as it is.
_ESCAPE = re.compile(r'\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))')
_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_HEX4 = re.compile(r"[0-9a-fA-F]{4}")
_SURROGATE = re.compile("[\ud800-\udfff]")


# Escapes after which matching the stored text is not enough.  A newline's (``\\n``, ``\\r``,
# at any depth) is handled there: the shapes stop at it, and one after it starts a word.  Any
# other (``\\"``, ``\\t``, ``\\u…``, ``\\/``, or a deeper level's ``\\\\u…``) may hide a
# shape.  Found by the last backslash of a run (a run tried from each of its backslashes would
# be read again as many times).
_MEANINGFUL_ESCAPE = re.compile(r"\\[^nr\\]")


def needs_decoding(body: str) -> bool:
    """Whether a literal's body holds an escape that decoding must undo before matching."""
    return _MEANINGFUL_ESCAPE.search(body) is not None


def escaped_literals(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, body) of each string literal in ``text`` that :func:`needs_decoding`."""
    for m in _LITERAL.finditer(text):
        start, end = m.span(1)
        if text.find("\\", start, end) >= 0 and _MEANINGFUL_ESCAPE.search(text, start, end):
            yield start, end, m.group(1)


def unescape(body: str) -> str:
    """The value of a JSON string literal's body; escapes JSON does not define stay as they
    are (a literal found in text that is not JSON)."""
    try:
        return _DECODER.decode(f'"{body}"')
    except ValueError:
        pass

    def value(m: re.Match) -> str:
        return chr(int(m.group(1), 16)) if m.group(1) else _SIMPLE[m.group(2)]

    return _ESCAPE.sub(value, body)


def escape(value: str, *, ascii_only: bool) -> str:
    """``value`` as the body of a JSON string literal (``ascii_only``: as ``\\uXXXX``, the way
    an all-ASCII original was written).  A lone surrogate (from a cut ``\\ud83d``) stays escaped:
    written raw it could not be encoded to UTF-8."""
    body = json.dumps(value, ensure_ascii=ascii_only)[1:-1]
    if not ascii_only and _SURROGATE.search(body):
        body = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", body)
    return body


def after_escape(text: str, start: int) -> bool:
    """Whether ``text[start - 1]`` is the last character of an escape (``\\n``, ``\\u00a0``):
    then it is not part of a word, whatever it looks like."""
    if start >= 2 and text[start - 2] == "\\" and text[start - 1] in "nrtbf":
        return True
    return (
        start >= 6
        and text[start - 6 : start - 4] == "\\u"
        and bool(_HEX4.fullmatch(text, start - 4, start))
    )


def inside_escape(text: str, start: int) -> bool:
    """Whether ``text[start]`` is escaped (an odd run of backslashes before it): a match may
    not start there, and a replacement may not end there."""
    run = 0
    while start - run > 0 and text[start - run - 1] == "\\":
        run += 1
    return run % 2 == 1


def escape_end(text: str, end: int) -> int:
    """``end``, moved past the escape that a replacement ending there would cut in two."""
    if end < len(text) and inside_escape(text, end):
        if text[end] == "u" and _HEX4.fullmatch(text, end + 1, end + 5):
            return end + 5
        return end + 1
    return end


# Invisible characters and encodings -------------------------------------------------------------
_INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff"
_UNUSUAL = re.compile("[\u200b-\u200d\u2060\ufeff\u3000\uff01-\uff5e]")
# What is decoded before matching: a percent-escape of an ASCII character (a URL's query), an
# HTML character reference (a page or an XML file), a JSON escape of a letter, a digit or
# a character a key or a pair may hold ("+-./:=@_"), zero-width characters (dropped) and fullwidth forms (read as ASCII).
ENCODED = re.compile(
    r"%[0-7][0-9A-Fa-f]|&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,30});"
    r"|\\u(?:00(?:2[bdefBDEF]|3[0-9aAdD]|[45][0-9a-fA-F]|6[1-9a-fA-F]|7[0-9aAeE])"
    r"|[fF][fF](?:0[1-9a-fA-F]|[1-5][0-9a-fA-F])|3000)"
    "|[\u200b-\u200d\u2060\ufeff\u3000\uff01-\uff5e]"
)


def _decoded_piece(piece: str) -> str | None:
    """What one match of ``ENCODED`` stands for ("" for an invisible character), or None when
    it stands for itself (an unknown entity, a non-ASCII byte)."""
    if piece[0] == "%":
        return chr(int(piece[1:], 16))
    if piece[0] == "&":
        value = html.unescape(piece)
        return value if value != piece and len(value) == 1 else None
    if piece[0] == "\\":  # a JSON escape: read as the character it stands for
        piece = chr(int(piece[2:], 16))
    if piece in _INVISIBLE:
        return ""
    if piece == "\u3000":
        return " "
    # A fullwidth form reads as its ASCII character; a quote or a backslash stays as it is
    # (decoded, it would change where a JSON string ends).
    value = chr(ord(piece) - 0xFEE0) if piece > "\uff00" else piece
    return None if value in '"\\\x7f' else value


def visible(text: str) -> tuple[str, Callable[[int, int], tuple[int, int]] | None]:
    """``text`` as a reader sees it: without zero-width characters, with percent-escapes and
    HTML character references decoded; and a function that maps a span of it back to ``text``
    (None when nothing changed)."""
    if (
        "%" not in text
        and "&" not in text
        and "\\u" not in text
        and (text.isascii() or not _UNUSUAL.search(text))
    ):
        return text, None
    out: list[str] = []
    starts: list[int] = []  # where each character of ``out`` begins in ``text``
    ends: list[int] = []  # and ends
    position = 0
    for m in ENCODED.finditer(text):
        value = _decoded_piece(m.group())
        if value is None or (value and m.group()[0] == "\\" and inside_escape(text, m.start())):
            continue
        out.append(text[position : m.start()])
        starts.extend(range(position, m.start()))
        ends.extend(range(position + 1, m.start() + 1))
        if value:
            out.append(value)
            starts.append(m.start())
            ends.append(m.end())
        position = m.end()
    if not position:
        return text, None
    out.append(text[position:])
    starts.extend(range(position, len(text)))
    ends.extend(range(position + 1, len(text) + 1))
    view = "".join(out)

    def origin(start: int, end: int) -> tuple[int, int]:
        if start >= len(starts):
            return len(text), len(text)
        return starts[start], (ends[end - 1] if end > start else starts[start])

    return view, origin
