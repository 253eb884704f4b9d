"""One pass over a batch of text for every gate at once.  Measured; change it with
``bench/redaction.py`` (exports run every message through it).

The engine's own scans read a text once per leading character of its gates (thirteen scans
and a lower-cased copy, about 8 ns a byte).  When the optional ``hyperscan`` package is
installed, every gate of every rule, and the decoding gate, is compiled into one automaton
that reads a batch of ASCII texts once (about 2 ns a byte, the join and the copy to bytes
included); only the texts where one of them matches go on to the engine, which scans them
again itself and so redacts them exactly as it would without this module.

Conservative by construction: a text the engine would find a gate in is always a candidate.
Each pattern is one gate, rewritten only in ways that keep every match:

* ``X(?<=YX)`` (a literal confirmed by what precedes it) becomes ``YX``: the same matches end
  at the same places; any other lookbehind is dropped, which only adds matches;
* gates written for the lower-cased text match case-insensitively (on ASCII text, the same
  as matching its lower-cased copy); the others match the text as it is;
* ``\\s`` is spelled out as the ASCII characters Python's ``\\s`` matches (Hyperscan's omits
  ``\\x1c``-``\\x1f``).

Only ASCII texts are prefiltered: lower-casing other text can change its length or turn a
letter into an ASCII one (the Kelvin sign), and zero-width characters are stripped before
matching, so those go to the engine's own scans.  ``tests/test_redaction_prefilter.py``
checks every rule's shapes and random texts: whatever the engine's gates find, a candidate.

Without the package, or where it cannot compile or run (a CPU without SSSE3), :func:`compiled`
is None and the engine scans every batch itself: slower, the same output.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import logging
import os
import platform
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from .rules import RULES

logger = logging.getLogger(__name__)

_ONE = 1
# What Python's ``\s`` matches in ASCII text.
_SPACE = "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f "


def _structure(pattern: str, begin: int = 0, end: int | None = None):
    """``(index, character)`` of the characters of ``pattern[begin:end]`` that can open, close
    or split a group: escapes and character classes (``[]…]`` and ``[^]…]`` included) are
    skipped."""
    stop = len(pattern) if end is None else end
    i, in_class = begin, False
    while i < stop:
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "^":
                i += 1
            if pattern[i + 1 : i + 2] == "]":
                i += 1
        else:
            yield i, c
        i += 1


def _group_end(pattern: str, start: int) -> int:
    """The index of the ``)`` that closes the group opening at ``start``."""
    depth = 0
    for i, c in _structure(pattern, start):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError(f"unbalanced group in {pattern!r}")


def _group_start(pattern: str, at: int) -> int | None:
    """The index of the ``(`` of the innermost group around ``at`` (None at the top level)."""
    opened: list[int] = []
    for i, c in _structure(pattern, end=at):
        if c == "(":
            opened.append(i)
        elif c == ")":
            opened.pop()
    return opened[-1] if opened else None


def _branches(body: str) -> list[str]:
    """The top-level alternatives of a group's body."""
    parts, depth, start = [], 0, 0
    for i, c in _structure(body):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    return [*parts, body[start:]]


def relaxed(gate: str) -> str:
    """``gate`` as a pattern for the automaton: every match of the gate ends where one of it
    does (see the module's docstring)."""
    out = gate
    while (at := out.find("(?<=")) >= 0:
        end = _group_end(out, at)
        body = out[at + 4 : end]
        group = _group_start(out, at)
        if group is None:
            before = out[:at]
            if before and "|" not in before and body.endswith(before):
                out = body + out[end + 1 :]
            else:
                out = before + out[end + 1 :]
            continue
        branch = max(out.rfind("|", group, at), group + 2) + 1
        before = out[branch:at]
        prefix = out[:group]
        if before and body.endswith(before):
            out = out[:branch] + body + out[end + 1 :]
        elif (
            not before
            and out.startswith("(?:", group)
            and prefix
            and _group_start(out, group) is None
            and "|" not in prefix
        ):
            # P(?:A|(?<=B)) is (?:PA|P(?<=B)): the prefix moves into each branch, and the
            # next turn reads the lookbehind against it.
            close = _group_end(out, group)
            inner = _branches(out[group + 3 : close])
            out = "(?:" + "|".join(prefix + b for b in inner) + ")" + out[close + 1 :]
        else:
            out = out[:at] + out[end + 1 :]
    return _spaces(out)


def _spaces(pattern: str) -> str:
    """``\\s`` spelled out, inside a class or outside one."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            pair = pattern[i : i + 2]
            if pair == "\\s":
                out.append(_SPACE if in_class else f"[{_SPACE}]")
            else:
                out.append(pair)
            i += 2
            continue
        if in_class and c == "]":
            in_class = False
        elif not in_class and c == "[":
            in_class = True
        out.append(c)
        i += 1
    return "".join(out)


def patterns(decode_gate: str) -> list[tuple[str, bool]]:
    """(pattern, case-insensitive) for every gate of every rule, and the decoding gate."""
    found: dict[tuple[str, bool], None] = {}
    for rule in RULES:
        for gate in rule.gates:
            found[relaxed(gate), True] = None
        for gate in rule.raw_gates:
            found[relaxed(gate), False] = None
    found[relaxed(decode_gate), False] = None
    return list(found)


class Prefilter:
    """The compiled automaton: :meth:`candidates` of a batch of ASCII texts."""

    def __init__(self, hyperscan, compiled: list[tuple[str, bool]], database=None):
        self._hs = hyperscan
        if database is None:
            database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
            database.compile(
                expressions=[p.encode("ascii") for p, _ in compiled],
                ids=list(range(len(compiled))),
                elements=len(compiled),
                flags=[hyperscan.HS_FLAG_CASELESS if caseless else 0 for _, caseless in compiled],
            )
        self.database = database
        # A scan needs scratch space of its own: one per thread (gthread workers).
        self._local = threading.local()

    def _scratch(self):
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = self._hs.Scratch(self.database)
        return scratch

    def candidates(self, texts: Sequence[str], joined: str | None = None) -> set[int]:
        """The indexes of the ``texts`` (ASCII strings) where a gate may match.

        The texts are joined with newlines (``joined``, when the caller has it) and read
        once; a match belongs to the text its last character is in (one that spans a newline
        also names the text it ends in, which only costs that text a scan by the engine)."""
        if joined is None:
            joined = "\n".join(texts)
        starts = list(itertools.accumulate(map(_ONE.__add__, map(len, texts)), initial=0))
        ends: list[int] = []
        self.database.scan(
            joined.encode("ascii"),
            match_event_handler=lambda _id, _from, to, _flags, _ctx: ends.append(to),
            scratch=self._scratch(),
        )
        return {bisect.bisect_right(starts, end - 1) - 1 for end in ends}


_COMPILED: list = []


def compiled(decode_gate: str, *, keep_in: Path | None = None) -> Prefilter | None:
    """The prefilter of these rules, or None when Hyperscan cannot provide it here.

    Compiling the automaton takes ~0.2 s, once per process.  With ``keep_in`` (a directory of
    the app's own data), the compiled automaton is saved there and the next processes load it
    in microseconds; the file's name carries a digest of the patterns, the Hyperscan version
    and the machine, and a file that does not load is compiled again."""
    if not _COMPILED:
        _COMPILED.append(_build(decode_gate, keep_in))
    return _COMPILED[0]


def _build(decode_gate: str, keep_in: Path | None = None) -> Prefilter | None:
    try:
        import hyperscan
    except ImportError:
        return None
    wanted = patterns(decode_gate)
    saved = _saved_path(hyperscan, wanted, keep_in) if keep_in else None
    loaded = _load(hyperscan, saved)
    try:
        prefilter = Prefilter(hyperscan, wanted, database=loaded)
        prefilter.candidates(["probe"])
    except Exception:  # a pattern it cannot compile, a CPU it cannot run on
        logger.warning("redaction prefilter unavailable; the engine scans alone", exc_info=True)
        return None
    if saved is not None and loaded is None:
        _save(hyperscan, prefilter.database, saved)
    return prefilter


def _saved_path(hyperscan, wanted: list[tuple[str, bool]], folder: Path) -> Path:
    digest = hashlib.sha256(
        repr((wanted, getattr(hyperscan, "__version__", ""), platform.machine())).encode()
    ).hexdigest()[:24]
    return Path(folder) / f"redaction-prefilter-{digest}.hsdb"


def _load(hyperscan, saved: Path | None):
    if saved is None:
        return None
    try:
        return hyperscan.loadb(saved.read_bytes(), mode=hyperscan.HS_MODE_BLOCK)
    except FileNotFoundError:
        return None
    except Exception:  # another build's or another CPU's automaton: compile again
        logger.info("saved redaction prefilter %s not loadable; compiling", saved)
        return None


def _save(hyperscan, database, saved: Path) -> None:
    # Written beside and renamed: a process starting meanwhile sees the whole file or none.
    try:
        saved.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=saved.parent, prefix=".prefilter-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(hyperscan.dumpb(database))
            os.replace(temporary, saved)
        finally:
            Path(temporary).unlink(missing_ok=True)
    except OSError:
        logger.info("could not keep the redaction prefilter in %s", saved.parent)
