"""The redactor: gates, matching, decoding and one rebuild of the text.  Measured; change it
with ``bench/redaction.py`` (exports run every message through it).

Most text holds no secret, so a rule runs only where one of its gates (:mod:`.rules`) matched,
all found in one pass of a Hyperscan automaton (about 2 ns a byte, where a regex per leading
character took 8); :func:`redact_batch` reads a whole export column in one pass.  A rule that
runs finds exactly what it would without gates (``gated=False``; the tests compare).  Decoding
(:mod:`.decode`) runs only where it can change the result.
"""

from __future__ import annotations

import bisect
import itertools
import re
import threading
from collections import defaultdict
from collections.abc import Iterable

import hyperscan

from . import decode
from .rules import COOKIE_ATTRIBUTES, RULES, Rule

# How deep JSON inside JSON strings is decoded (a tool call's arguments are level 2).
MAX_DEPTH = 4
# Not a rule: escapes that decode to a character a shape may hold (ASCII, invisible, "/") open
# the decoding of their literals (an accent or emoji cannot complete a shape, so stays cheap);
# percent-escapes and character references too, decoded by :func:`decode.visible`.
DECODE_GATES = (
    r"\\(?:/|u00[0-7]|u20[0-6]|u[fF][eE][fF][fF]|u[fF][fF][0-5]|u3000)",
    r"%[0-7][0-9A-Fa-f]",
    r"&#?[A-Za-z0-9]{2,31};",
)
DECODE = Rule("", "", raw_gates=DECODE_GATES)


# Rules run in this order: it decides the marker when two find the same span.
_ORDER = {rule: i for i, rule in enumerate(RULES)}
COMPILED = {rule: re.compile(rule.pattern) for rule in RULES}
_LEADS = {rule: re.compile(rule.lead[0]) for rule in RULES if rule.lead}


def marker(kind: str) -> str:
    return f"[redacted: {kind}]"


def lowered(text: str) -> str:
    """A lower-cased copy whose positions match ``text`` character for character."""
    low = text.lower()
    if len(low) == len(text):
        return low
    # NOTE: a few characters ("İ") lower-case to two; map ASCII letters only, which keeps
    # every position (slower, and only for such rare text).
    return text.translate(_ASCII_LOWER)


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


# Gates ------------------------------------------------------------------------------------------
# One Hyperscan automaton for the lower-cased text and one for the text as it is.  UTF-8 and
# Unicode properties make ``\w``, ``\s`` and repeats count characters as Python's ``re`` does;
# leftmost starts give each match's span (a JSON literal is decoded where a span overlaps it).
_FLAGS = hyperscan.HS_FLAG_SOM_LEFTMOST | hyperscan.HS_FLAG_UTF8 | hyperscan.HS_FLAG_UCP


class _Automaton:
    """Gates compiled together; :meth:`matches` gives (start, end, rules) of every match in
    UTF-8 bytes (byte offsets)."""

    def __init__(self, gates: dict[str, set]):
        self.database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        self.database.compile(
            expressions=[gate.encode() for gate in gates],
            ids=list(range(len(gates))),
            elements=len(gates),
            flags=[_FLAGS] * len(gates),
        )
        self.rules = tuple(frozenset(rules) for rules in gates.values())
        # A scan needs scratch space of its own: one per thread (gthread workers serve several).
        self._local = threading.local()

    def matches(self, data: bytes) -> list[tuple[int, int, frozenset]]:
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = hyperscan.Scratch(self.database)
        found: list[tuple[int, int, frozenset]] = []
        rules = self.rules
        self.database.scan(
            data,
            match_event_handler=lambda gate, start, end, _flags, _ctx: found.append(
                (start, end, rules[gate])
            ),
            scratch=scratch,
        )
        return found


def _automata(rules: Iterable[Rule]) -> tuple[_Automaton, _Automaton]:
    on_lowered: dict[str, set] = defaultdict(set)
    on_text: dict[str, set] = defaultdict(set)
    for rule in rules:
        for gate in rule.gates:
            on_lowered[gate].add(rule)
        for gate in rule.raw_gates:
            on_text[gate].add(rule)
    return _Automaton(on_lowered), _Automaton(on_text)


_ON_LOWERED, _ON_TEXT = _automata((*RULES, DECODE))


def _in_characters(data: bytes, matches: list) -> list:
    """``matches`` with byte offsets turned into character offsets (non-ASCII ``data``)."""
    offsets = sorted({at for start, end, _ in matches for at in (start, end)})
    chars, byte, char = {}, 0, 0
    for at in offsets:
        char += len(data[byte:at].decode())
        chars[at] = char
        byte = at
    return [(chars[start], chars[end], rules) for start, end, rules in matches]


def scan(text: str, low: str) -> tuple[set[Rule], list[tuple[int, int]]]:
    """The rules whose gates match in ``text`` (``low``: its lower-cased copy), and the spans
    of the matches."""
    found: set[Rule] = set()
    spans: list[tuple[int, int]] = []
    for automaton, hay in ((_ON_LOWERED, low), (_ON_TEXT, text)):
        # A lone surrogate (no UTF-8 form) is read as "?": one character, which no gate names.
        data = hay.encode("utf-8", "replace")
        matches = automaton.matches(data)
        if matches and len(data) != len(hay):
            matches = _in_characters(data, matches)
        for start, end, rules in matches:
            found |= rules
            spans.append((start, end))
    return found, spans


def scan_batch(joined: str, starts: list[int]) -> dict[int, tuple[set[Rule], list]]:
    """:func:`scan` of each of the ASCII texts joined (text ``k`` starts at ``starts[k]``),
    for the texts where a gate matches; spans are in each text.  A match across the newline
    between two texts counts for both."""
    found: dict[int, tuple[set[Rule], list]] = {}
    for automaton, hay in ((_ON_LOWERED, joined.lower()), (_ON_TEXT, joined)):
        for start, end, rules in automaton.matches(hay.encode("ascii")):
            first = bisect.bisect_right(starts, start) - 1
            for k in range(first, bisect.bisect_right(starts, end - 1)):
                opened, spans = found.setdefault(k, (set(), []))
                opened |= rules
                spans.append((start - starts[k], end - starts[k]))
    return found


# Matching ---------------------------------------------------------------------------------------
def _glued(text: str, start: int, after: tuple[str, ...]) -> bool:
    """Whether a match at ``start`` continues a longer word ("task-ant-…", "mAKIA…").  The
    letter of an escape before it (``\\n``) is no word; nor is a word in ``after``."""
    if not start or not text[start - 1].isalnum() or decode.after_escape(text, start):
        return False
    return not any(text[max(0, start - len(w)) : start].lower() == w for w in after)


def _lead(text: str, start: int, rule: Rule) -> int | None:
    """Where the secret begins when its first characters come before the match (longest
    run first), or None when they are missing."""
    lead, (_, fewest, most) = _LEADS[rule], rule.lead
    for size in range(most, fewest - 1, -1):
        if start - size >= 0 and lead.fullmatch(text, start - size, start):
            return start - size
    return None


def rule_spans(rule: Rule, text: str, low: str) -> list[tuple[int, int, str]]:
    """(start, end, replacement) of each secret ``rule`` finds in ``text``."""
    regex = COMPILED[rule]
    spans: list[tuple[int, int, str]] = []
    hidden = "secret" if "secret" in regex.groupindex else 0  # else the whole match
    for m in regex.finditer(low if rule.lowered else text):
        if rule.handler == "pair":
            # A value with a provider's shape is labelled by it: that rule finds the same
            # span and comes first.
            spans.append((*m.span(m.lastgroup or "bare"), marker(rule.kind)))
            continue
        start, end = m.span(hidden)
        if rule.handler == "cookie":
            spans += _cookie_spans(text, start, end)
            continue
        if rule.lead is not None:
            start = _lead(text, start, rule)
            if start is None:
                continue
        if decode.inside_escape(text, start):
            continue  # the letter of an escape: the decoded text is matched instead
        if not rule.glued and _glued(text, start, rule.after):
            continue
        spans.append((start, end, marker(rule.kind)))
    return spans


_COOKIE_PART = re.compile(r"[^;]+")


def _cookie_spans(text: str, start: int, end: int) -> list[tuple[int, int, str]]:
    """Each cookie value in a Cookie or Set-Cookie header value, names and attributes kept."""
    spans = []
    for part in _COOKIE_PART.finditer(text, start, end):
        name, equals, value = part.group().partition("=")
        if not equals:
            name, value = "", name
        if name.strip().lower() in COOKIE_ATTRIBUTES or value.strip().lower() in COOKIE_ATTRIBUTES:
            continue
        value_start = part.start() + len(name) + len(equals)
        value_start += len(value) - len(value.lstrip())
        value_end = part.end() - (len(value) - len(value.rstrip()))
        if value_end > value_start:
            spans.append((value_start, value_end, marker("cookie")))
    return spans


# Decoding, merging, rebuilding ------------------------------------------------------------------
def redact_text(
    text: str, *, gated: bool = True, _depth: int = 0, _scanned: tuple | None = None
) -> tuple[str, int]:
    """``text`` with every secret replaced, and how many were (whatever the setting).

    ``_scanned``: what :func:`scan` returns for ``text``, when a batch scan found it."""
    if not text:
        return text, 0
    view, origin = decode.visible(text)
    edits = _edits(view, gated, _depth, _scanned if origin is None else None)
    if origin is not None:
        edits = [(*origin(start, end), new, n) for start, end, new, n in edits]
    return _applied(text, edits)


def _edits(text: str, gated: bool, depth: int, scanned: tuple | None) -> list[tuple]:
    """(start, end, replacement, secrets it hides) of each secret in ``text``."""
    low = lowered(text)
    if not gated:
        found, gate_spans = set(RULES), []
    elif scanned is not None:
        found, gate_spans = scanned
    else:
        found, gate_spans = scan(text, low)
    if not found:
        return []
    spans = [
        span
        for rule in sorted(found - {DECODE}, key=_ORDER.__getitem__)
        for span in rule_spans(rule, text, low)
    ]
    swaps = []
    if "\\" in text and depth < MAX_DEPTH and decode.needs_decoding(text):
        swaps = _decoded(text, gate_spans, gated, depth)
    edits = list(swaps)
    for start, end, replacement in spans:
        end = decode.escape_end(text, end)
        edits += [(*piece, replacement, 1) for piece in _outside(start, end, swaps)]
    return edits


def _decoded(text: str, spans: list[tuple[int, int]], gated: bool, depth: int) -> list[tuple]:
    """(start, end, new body, count) for each escaped literal whose decoded value hides a
    secret; with ``gated``, only literals that a gate match overlaps are decoded."""
    spans.sort()
    starts = [start for start, _ in spans]
    reach = list(itertools.accumulate((end for _, end in spans), max))
    swaps = []
    for start, end, body in decode.escaped_literals(text):
        if gated:
            before = bisect.bisect_left(starts, end)
            if not before or reach[before - 1] <= start:
                continue
        value, count = redact_text(decode.unescape(body), gated=gated, _depth=depth + 1)
        if count:
            swaps.append((start, end, decode.escape(value, ascii_only=body.isascii()), count))
    return swaps


def _outside(start: int, end: int, swaps: list[tuple]) -> list[tuple[int, int]]:
    """The parts of [start, end) outside every swapped literal (``swaps`` in order, apart):
    only the literals it overlaps are looked at, found by bisection."""
    first = bisect.bisect_right(swaps, start, key=lambda swap: swap[1])
    pieces, at = [], start
    for swap_start, swap_end, *_ in swaps[first : bisect.bisect_left(swaps, (end,))]:
        if swap_start > at:
            pieces.append((at, swap_start))
        at = swap_end
    return [*pieces, (at, end)] if end > at else pieces


def _applied(text: str, edits: list[tuple]) -> tuple[str, int]:
    """``text`` with each edit made; of overlapping ones the first (then longest, then the
    earliest rule's: a provider's before a pair's or a header's) wins."""
    if not edits:
        return text, 0
    edits.sort(key=lambda e: (e[0], -e[1]))
    out: list[str] = []
    position = 0
    count = 0
    for start, end, replacement, n in edits:
        if start < position:  # inside a secret already replaced
            continue
        out.append(text[position:start])
        out.append(replacement)
        position = end
        count += n
    out.append(text[position:])
    return "".join(out), count


# Batches ----------------------------------------------------------------------------------------
# Characters joined for one scan of the gates: big enough that the calls do not count, small
# enough that the joined copy and its lower-cased one stay small.
BATCH_CHARS = 256 * 1024


def redact_batch(values: list, *, counted: bool = False) -> list:
    """``values`` with secrets replaced in each string (``counted``: ``(value, count)``
    pairs).  ASCII strings are joined with newlines for one scan of the gates; others go one by
    one, as lower-casing non-ASCII text can change its length (the Kelvin sign)."""
    out = list(values)
    counts = [0] * len(out)
    batch: list[int] = []
    size = 0
    for i, value in enumerate(out):
        if isinstance(value, str) and value:
            if value.isascii():
                batch.append(i)
                size += len(value)
                if size >= BATCH_CHARS:
                    _redact_joined(out, counts, batch)
                    batch, size = [], 0
            else:
                out[i], counts[i] = redact_text(value)
    if batch:
        _redact_joined(out, counts, batch)
    return list(zip(out, counts, strict=True)) if counted else out


def _redact_joined(out: list, counts: list, batch: list[int]) -> None:
    texts = [out[i] for i in batch]
    starts = list(itertools.accumulate((len(t) + 1 for t in texts), initial=0))[:-1]
    for k, scanned in scan_batch("\n".join(texts), starts).items():
        out[batch[k]], counts[batch[k]] = redact_text(texts[k], _scanned=scanned)
