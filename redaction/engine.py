"""The redactor: gates, matching, decoding and one rebuild of the text.  Measured; change it
with ``bench/redaction.py`` (exports run every message through it).

Most text holds no secret, so a rule runs only where one of its gates (:mod:`.rules`)
matched.  Gates are grouped by their first character into one regex per character,
``c(?:rest|…)``, which CPython scans for at C speed (about 0.35 ns a byte); one alternation of
every anchor would be tried at every position instead (about 30 MB/s).  The rarest characters
(J, K, ~) are found with ``str.find``.  :func:`redact_batch` scans a whole export column at
once, and a text shorter than ``SHORT`` is scanned by one regex of all the gates.

Gates are only necessary conditions: a rule that runs finds exactly what it would find
without them (``gated=False`` runs every rule; the tests compare).  Decoding (:mod:`.decode`)
runs only where it can change the result: a JSON string literal holding an escape and a gate
match, or an escape that decodes to a character a shape may hold (``\\u0073``, ``\\/``).
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from . import decode
from .rules import COOKIE_ATTRIBUTES, RULES, Rule

# How deep JSON inside JSON strings is decoded (a tool call's arguments are level 2).
MAX_DEPTH = 4
# Not a rule: escapes that decode to a character a shape may hold (ASCII, invisible, "/") open
# the decoding of their literals (an accent or emoji cannot complete a shape, so stays cheap);
# percent-escapes and character references too, decoded by :func:`decode.visible`.
DECODE = Rule("", "")
DECODE_GATE = re.compile(r"\\(?:/|u00[0-7]|u20[0-6]|u[fF][eE][fF][fF])")
# Each begins with its literal, so that the regex engine scans for it at C speed.
DECODE_GATES = (DECODE_GATE, re.compile(r"%[0-7][0-9A-Fa-f]"), re.compile(r"&#?[A-Za-z0-9]{2,31};"))
_DECODE_CHARS = ("\\", "%", "&")


@dataclass(frozen=True)
class _Compiled:
    regex: re.Pattern
    lead: re.Pattern | None


@dataclass(frozen=True)
class _Scan:
    """One pass over the text (or its lower-cased copy) for the gates that begin with ``char``."""

    lowered: bool
    regex: re.Pattern  # char, then any gate's rest
    gates: tuple[tuple[re.Pattern, frozenset[Rule]], ...]  # each whole gate, and its rules
    char: str  # the literal character
    # A character rarer than one in a thousand is found with str.find (memchr), ten times
    # faster than the regex engine's scan, and the regex tried where it is.
    sparse: bool
    # The gates by the literal character that follows ``char`` in them ("" for the others).
    by_next: dict[str, tuple[tuple[re.Pattern, frozenset[Rule]], ...]]

    def opened(self, hay: str, at: int) -> set[Rule]:
        """The rules whose gates match at ``at``, where one of this scan's gates does."""
        rules: set[Rule] = set()
        for gate, opened in self.by_next.get(hay[at + 1 : at + 2], ()) + self.by_next[""]:
            if gate.match(hay, at):
                rules |= opened
        return rules

    def positions(self, hay: str) -> Iterator[int]:
        """Where a gate of this scan matches in ``hay``: every position is tried, so that a
        match does not hide one that starts inside it."""
        if self.sparse:
            at = hay.find(self.char)
            while at >= 0:
                if self.regex.match(hay, at):
                    yield at
                at = hay.find(self.char, at + 1)
            return
        m = self.regex.search(hay)
        while m:
            yield m.start()
            m = self.regex.search(hay, m.start() + 1)


# Raw characters rare in every kind of text (logs, code, prose, JSON), measured.
_SPARSE = frozenset("JK~")


def _first(gate: str) -> tuple[str, str]:
    """The leading literal character of a gate and the rest of it."""
    if gate[0] == "\\":
        return gate[:2], gate[2:]
    return gate[0], gate[1:]


def _scans(rules: Iterable[Rule]) -> tuple[_Scan, ...]:
    grouped: dict[tuple[bool, str], dict[str, set[Rule]]] = defaultdict(lambda: defaultdict(set))
    for rule in rules:
        for lowered, gates in ((True, rule.gates), (False, rule.raw_gates)):
            for gate in gates:
                grouped[lowered, _first(gate)[0]][gate].add(rule)
    scans = []
    for (lowered, char), gates in grouped.items():
        rests = _alternation([_first(gate)[1] for gate in gates])
        compiled = [(re.compile(gate), frozenset(rules)) for gate, rules in gates.items()]
        by_next: dict[str, list] = defaultdict(list)
        for (gate, _), one in zip(compiled, gates, strict=True):
            head = _literal_head(_first(one)[1])
            by_next[head[-1] if head else ""].append((gate, _))
        scans.append(
            _Scan(
                lowered,
                re.compile(f"{char}{rests}"),
                tuple(compiled),
                char[-1],
                not lowered and char[-1] in _SPARSE,
                {head: tuple(group) for head, group in by_next.items()} | {"": tuple(by_next[""])},
            )
        )
    return tuple(scans)


_QUANTIFIERS = frozenset("?*+{")


def _literal_head(rest: str) -> str | None:
    """The literal character ``rest`` begins with (``\\.`` included), or None."""
    if rest[:1] == "\\" and len(rest) > 1 and not rest[1].isalnum():
        head = rest[:2]
    elif rest and rest[0] not in "\\()[]{}?*+|^$.":
        head = rest[0]
    else:
        return None
    return None if rest[len(head) : len(head) + 1] in _QUANTIFIERS else head


def _alternation(rests: list[str]) -> str:
    """``(?:rest|rest|…)``, alternatives that begin with the same literal character merged:
    where the text cannot continue a gate, the regex engine then rejects it after one
    comparison per distinct first character instead of one per gate."""
    by_head: dict[str | None, list[str]] = defaultdict(list)
    for rest in rests:
        by_head[_literal_head(rest) if rest else None].append(rest)
    parts = []
    for head, group in by_head.items():
        if head is None or len(group) == 1:
            parts += [f"(?:{rest})" if rest else "" for rest in group]
        else:
            parts.append(head + _alternation([rest[len(head) :] for rest in group]))
    # Alternatives with a literal head first: the engine skips those cheaply.
    parts.sort(key=lambda part: part.startswith("(?:") and _literal_head(part[3:]) is None)
    return "(?:" + "|".join(parts) + ")"


SCANS = _scans(RULES)
# On a short text (a decoded argument, a pair's value, a title) one scan per character costs
# more in calls than one regex of every gate costs in matching.
SHORT = 1024
_SHORT_SCANS = tuple(
    (
        lowered,
        re.compile("|".join(f"(?:{s.regex.pattern})" for s in SCANS if s.lowered == lowered)),
        {s.char: s for s in SCANS if s.lowered == lowered},
    )
    for lowered in (True, False)
)
# Rules run in this order: it decides the marker when two find the same span.
_ORDER = {rule: i for i, rule in enumerate(RULES)}
COMPILED = {
    rule: _Compiled(re.compile(rule.pattern), re.compile(rule.lead[0]) if rule.lead else None)
    for rule in RULES
}


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
def scan(text: str, low: str) -> tuple[set[Rule], list[int]]:
    """The rules whose gates match in ``text``, and where the gates matched."""
    found: set[Rule] = set()
    hits: list[int] = []
    if len(text) < SHORT:
        for lowered_, regex, by_char in _SHORT_SCANS:
            hay = low if lowered_ else text
            m = regex.search(hay)
            while m:
                at = m.start()
                hits.append(at)
                found |= by_char[hay[at]].opened(hay, at)
                m = regex.search(hay, at + 1)
    else:
        for one in SCANS:
            hay = low if one.lowered else text
            for at in one.positions(hay):
                hits.append(at)
                found |= one.opened(hay, at)
    for char, gate in zip(_DECODE_CHARS, DECODE_GATES, strict=True):
        if char in text:
            for m in gate.finditer(text):
                hits.append(m.start())
                found.add(DECODE)
    return found, hits


def scan_batch(joined: str, starts: list[int]) -> dict[int, tuple[set[Rule], list[int]]]:
    """:func:`scan` of each of the texts joined (text ``k`` starts at ``starts[k]``), for the
    texts where a gate matches; positions are in each text."""
    found: dict[int, tuple[set[Rule], list[int]]] = {}
    low = joined.lower()
    for one in SCANS:
        hay = low if one.lowered else joined
        for at in one.positions(hay):
            k = bisect.bisect_right(starts, at) - 1
            rules, hits = found.setdefault(k, (set(), []))
            hits.append(at - starts[k])
            rules |= one.opened(hay, at)
    for gate in DECODE_GATES:
        for m in gate.finditer(joined):
            k = bisect.bisect_right(starts, m.start()) - 1
            rules, hits = found.setdefault(k, (set(), []))
            hits.append(m.start() - starts[k])
            rules.add(DECODE)
    return found


# Matching ---------------------------------------------------------------------------------------
def _glued(text: str, start: int, after: tuple[str, ...]) -> bool:
    """Whether a match at ``start`` continues a longer word ("task-ant-…", "mAKIA…").  The
    letter of an escape before it (``\\n``) is no word; nor is a word in ``after``."""
    if not start or not text[start - 1].isalnum() or decode.after_escape(text, start):
        return False
    return not any(text[max(0, start - len(w)) : start].lower() == w for w in after)


def _lead(text: str, start: int, rule: Rule, lead: re.Pattern) -> int | None:
    """Where the secret begins when its first characters come before the match (longest
    run first), or None when they are missing."""
    _, fewest, most = rule.lead
    for size in range(most, fewest - 1, -1):
        if start - size >= 0 and lead.fullmatch(text, start - size, start):
            return start - size
    return None


def rule_spans(rule: Rule, text: str, low: str) -> list[tuple[int, int, str]]:
    """(start, end, replacement) of each secret ``rule`` finds in ``text``."""
    compiled = COMPILED[rule]
    spans: list[tuple[int, int, str]] = []
    for m in compiled.regex.finditer(low if rule.lowered else text):
        if rule.handler == "pair":
            # A value with a provider's shape is labelled by it: that rule finds the same
            # span and comes first.
            spans.append((*m.span(m.lastgroup or "bare"), marker(rule.kind)))
            continue
        start, end = m.span(rule.secret or 0)
        if rule.handler == "cookie":
            spans += _cookie_spans(text, start, end)
            continue
        if compiled.lead is not None:
            start = _lead(text, start, rule, compiled.lead)
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
@dataclass(frozen=True)
class Edit:
    start: int
    end: int
    replacement: str
    count: int  # secrets it hides


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
        edits = [Edit(*origin(e.start, e.end), e.replacement, e.count) for e in edits]
    return _applied(text, edits)


def _edits(text: str, gated: bool, depth: int, scanned: tuple | None) -> list[Edit]:
    low = lowered(text)
    if not gated:
        found, hits = set(RULES), []
    elif scanned is not None:
        found, hits = scanned
    else:
        found, hits = scan(text, low)
    if not found:
        return []
    spans = [
        span
        for rule in sorted(found - {DECODE}, key=_ORDER.__getitem__)
        for span in rule_spans(rule, text, low)
    ]
    swaps = []
    if "\\" in text and depth < MAX_DEPTH and decode.needs_decoding(text):
        swaps = _decoded(text, hits, gated, depth)
    edits = [Edit(start, end, replacement, n) for start, end, replacement, n in swaps]
    for start, end, replacement in spans:
        end = decode.escape_end(text, end)
        for piece_start, piece_end in _outside(start, end, swaps):
            edits.append(Edit(piece_start, piece_end, replacement, 1))
    return edits


def _decoded(text: str, hits: list[int], gated: bool, depth: int) -> list[tuple]:
    """(start, end, new body, count) for each escaped literal whose decoded value hides a
    secret; with ``gated``, only literals that hold a gate match are decoded."""
    hits.sort()
    swaps = []
    for start, end, body in decode.escaped_literals(text):
        if not decode.needs_decoding(body):
            continue
        if gated:
            i = bisect.bisect_left(hits, start)
            if i == len(hits) or hits[i] >= end:
                continue
        value, count = redact_text(decode.unescape(body), gated=gated, _depth=depth + 1)
        if count:
            swaps.append((start, end, decode.escape(value, ascii_only=body.isascii()), count))
    return swaps


def _outside(start: int, end: int, swaps: list[tuple]) -> list[tuple[int, int]]:
    """The parts of [start, end) outside every swapped literal."""
    pieces = [(start, end)]
    for swap_start, swap_end, *_ in swaps:
        if swap_end <= start or swap_start >= end:
            continue
        pieces = [
            part
            for s, e in pieces
            for part in ((s, min(e, swap_start)), (max(s, swap_end), e))
            if part[1] > part[0]
        ]
    return pieces


def _applied(text: str, edits: list[Edit]) -> tuple[str, int]:
    """``text`` with each edit made; of overlapping ones the first (then longest, then the
    earliest rule's: a provider's before a pair's or a header's) wins."""
    if not edits:
        return text, 0
    edits.sort(key=lambda e: (e.start, -e.end))
    out: list[str] = []
    position = 0
    count = 0
    for edit in edits:
        if edit.start < position:  # inside a secret already replaced
            continue
        out.append(text[position : edit.start])
        out.append(edit.replacement)
        position = edit.end
        count += edit.count
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
