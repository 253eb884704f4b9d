"""Hide well-known secret shapes in message content before it is shown or exported.

Tool outputs in the state.db can hold environment dumps, config files and HTTP traces, so a
transcript may contain API keys, tokens and private keys.  :func:`redact` replaces each secret
with a marker such as ``[redacted: openai key]`` and leaves the rest of the text untouched.

Shapes are chosen for precision (a redacted word should nearly always be a real secret):
provider keys with a fixed prefix (OpenAI, Anthropic, OpenRouter, Google, AWS, GitHub, Slack),
Telegram bot tokens, JWTs, bearer tokens, private key blocks, passwords in URLs, and
``NAME=value`` / ``"name": "value"`` pairs whose name says password, secret, token or key.

Speed matters (tool outputs run to megabytes, an export redacts a gigabyte): most text holds
no secret, so each shape runs only where a cheap *gate* finds the literal it needs (``sk-``,
``AKIA``, ``://``, ``token=`` …).  A gate is a regex that starts with one literal character,
which CPython's engine scans for at a few GB/s; one alternation of all the anchors would be
tried at every position instead (about 30 MB/s, measured), and so is the ``NAME=value`` shape
itself, which is why gating it matters most.  Gates are only necessary conditions: a shape that
runs finds exactly what it found before.  The case-insensitive shapes run on a lower-cased copy
of the text.  Matches are merged and the text is rebuilt once.  Clean text costs one pass per
gate (about 0.3 ns a byte each); :func:`redact_many` gates a whole column of an export at once.

``HERMES_REDACT_SECRETS=0`` turns it off; staff can reveal one message at a time, and each
reveal is logged (``console_app.models.AuditEvent``).
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings


@dataclass(frozen=True, eq=False)  # hashed by identity: shapes go in sets
class Shape:
    label: str
    pattern: re.Pattern
    # Runs on the lower-cased text (the pattern is written in lower case).
    lowered: bool = False
    # Runs only when one of these matches the same text (the shape needs what they match).
    gates: tuple[re.Pattern, ...] = ()


def _shape(label: str, pattern: str, *gates: re.Pattern, lowered: bool = False) -> Shape:
    return Shape(label, re.compile(pattern), lowered, gates)


# Gates: each starts with ONE literal character, so the engine scans for it at C speed; a gate
# may open several shapes (one pass instead of one per shape).  Keep each gate implied by every
# shape it opens: whatever the shape matches must contain a match of one of its gates.
SK_GATE = re.compile(r"sk-")
A_GATE = re.compile(r"A(?:Iza|KIA|SIA|BIA|CCA)")
GOCSPX_GATE = re.compile(r"GOCSPX-")
YA29_GATE = re.compile(r"ya29\.")
GITHUB_GATE = re.compile(r"g(?:h[pousr]_|ithub_pat_)")
XOX_GATE = re.compile(r"xox[abposr]-")
HOOKS_GATE = re.compile(r"hooks\.slack\.com/services/")
EYJ_GATE = re.compile(r"eyJ")
BEGIN_GATE = re.compile(r"-----BEGIN ")
TELEGRAM_GATE = re.compile(r":AA")
# A URL with a password has a colon after the user name.
URL_PASSWORD_GATE = re.compile(r"://[^/\s:@'\"<>]{1,100}:")
# On the lower-cased text: "bearer " and the last word of each NAME in a NAME=value pair
# followed by its separator (password/passwd/pwd end in "wd" or "word", api_key in "key" …).
BEARER_GATE = re.compile(r"bearer\s")
_PAIR_SEPARATOR = r"[\"']?[ \t]{0,3}[=:]"
PAIR_GATES = tuple(
    re.compile(end + _PAIR_SEPARATOR)
    for end in (r"w(?:or)?d", "phrase", "secret", "key", "token", r"credentials?")
)
TEXT_GATES = (
    SK_GATE,
    A_GATE,
    GOCSPX_GATE,
    YA29_GATE,
    GITHUB_GATE,
    XOX_GATE,
    HOOKS_GATE,
    EYJ_GATE,
    BEGIN_GATE,
    TELEGRAM_GATE,
    URL_PASSWORD_GATE,
)
LOWERED_GATES = (BEARER_GATE, *PAIR_GATES)

_KEY_CHARS = r"[A-Za-z0-9_\-]"
# Provider keys: each pattern starts with the provider's literal prefix.
ANTHROPIC_KEY = _shape("anthropic key", r"sk-ant-" + _KEY_CHARS + "{20,}", SK_GATE)
OPENROUTER_KEY = _shape("openrouter key", r"sk-or-" + _KEY_CHARS + "{20,}", SK_GATE)
OPENAI_KEY = _shape(
    "openai key", r"sk-(?!ant-|or-)(?:proj-|svcacct-|admin-)?" + _KEY_CHARS + "{20,}", SK_GATE
)
GOOGLE_API_KEY = _shape("google api key", r"AIza[0-9A-Za-z_\-]{35}", A_GATE)
GOOGLE_SECRET = _shape("google oauth secret", r"GOCSPX-" + _KEY_CHARS + "{20,}", GOCSPX_GATE)
GOOGLE_TOKEN = _shape("google oauth token", r"ya29\.[0-9A-Za-z_\-]{20,}", YA29_GATE)
AWS_KEY = _shape("aws access key", r"A(?:KIA|SIA|BIA|CCA)[0-9A-Z]{16}(?![0-9A-Za-z])", A_GATE)
GITHUB_TOKEN = _shape("github token", r"gh[pousr]_[A-Za-z0-9]{36,255}", GITHUB_GATE)
GITHUB_PAT = _shape("github token", r"github_pat_[A-Za-z0-9_]{22,255}", GITHUB_GATE)
SLACK_TOKEN = _shape("slack token", r"xox[abposr]-[A-Za-z0-9\-]{10,}", XOX_GATE)
SLACK_WEBHOOK = _shape(
    "slack webhook", r"hooks\.slack\.com/services/[A-Za-z0-9_/]{20,}", HOOKS_GATE
)
JWT = _shape("jwt", r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", EYJ_GATE)
PROVIDER_SHAPES: tuple[Shape, ...] = (
    ANTHROPIC_KEY,
    OPENROUTER_KEY,
    OPENAI_KEY,
    GOOGLE_API_KEY,
    GOOGLE_SECRET,
    GOOGLE_TOKEN,
    AWS_KEY,
    GITHUB_TOKEN,
    GITHUB_PAT,
    SLACK_TOKEN,
    SLACK_WEBHOOK,
    JWT,
)
PRIVATE_KEY = _shape(
    "private key",
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
    r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
    BEGIN_GATE,
)
# "<bot id>:AA<33 chars>": matched from the colon; the digits before it are checked by hand.
TELEGRAM = _shape("telegram bot token", r":AA[A-Za-z0-9_\-]{33}(?![A-Za-z0-9_\-])", TELEGRAM_GATE)
URL_PASSWORD = _shape(
    "url password",
    r"://(?P<user>[^/\s:@'\"<>]{1,100}):[^/\s@'\"<>]{1,200}@",
    URL_PASSWORD_GATE,
)
BEARER = _shape(
    "bearer token",
    r"bearer\s+(?P<secret>[a-z0-9\-._~+/]{16,}=*)",
    BEARER_GATE,
    lowered=True,
)
PAIR = _shape(
    "secret",
    r"(?:pass(?:word|wd|phrase)|pwd|secret|secret[_\-]?(?:access[_\-]?)?key|token"
    r"|api[_\-]?key|api[_\-]?secret|private[_\-]?key|client[_\-]?secret|credentials?)"
    r"[\"']?[ \t]{0,3}[=:][ \t]{0,3}"
    r"(?:"
    # A quoted value, spaces and all.
    r"\"(?P<dq>(?!\[redacted)[^\"\n]{1,500})\"|'(?P<sq>(?!\[redacted)[^'\n]{1,500})'"
    # A bare value: not a number (max_token=4096), not a literal (null, true), not "Bearer …"
    # (its own shape), not already a marker.
    r"|(?P<bare>(?![0-9]+(?![^\s\"'&,;<>]))(?!(?:null|none|true|false)(?![a-z0-9_]))"
    r"(?!bearer\s)(?!\[redacted)(?!\*{3})[^\s\"'&,;<>]{4,})"
    r")",
    *PAIR_GATES,
    lowered=True,
)

# A value inside a NAME=value pair is labelled by its own shape when it has one.
_VALUE_LABELS = (*PROVIDER_SHAPES, TELEGRAM)

# Gates of a batch (:func:`redact_many`): fewer and coarser, to pick the strings, and the shapes
# to run on each.  Whatever a shape matches holds a match of its group here: "sk-…" holds "k-",
# "eyJ…" "yJ", ":AA<33 chars>" "AA<33 chars>", "secret=" "cret=", "token=" "ken=", a
# lower-cased "-----BEGIN " "begin ", "GOCSPX-" "gocspx-", and so on.  Grouped by first
# character, chosen rarer than the literal's own first one where it can: 9 passes instead of
# 18, about 4.5 ns a byte in all (measured).  At one position a gate's groups exclude each
# other, and no match can hide the start of another one of the same gate (its first character
# does not recur inside it); where it could (the "A" gate: "AKIA" ends with one), the rest of
# the gate is a lookahead and a match takes one character.
BATCH_TEXT_GATES = (
    re.compile(
        r"A(?=(?P<google_api_key>Iza)|(?P<aws_key>KIA|SIA|BIA|CCA)"
        r"|(?P<telegram>A[A-Za-z0-9_\-]{33}))"
    ),
    re.compile(r"(?P<url_password>//[^/\s:@'\"<>]{1,100}:)"),
    re.compile(r"(?P<slack_token>xox[abposr]-)"),
    re.compile(r"y(?:(?P<google_token>a29\.)|(?P<jwt>J))"),
)
BATCH_LOWERED_GATES = (
    re.compile(
        r"k(?:(?P<sk_key>-)|(?P<slack_webhook>s\.slack\.com/services/)"
        r"|(?P<pair_k>(?:ey|en)" + _PAIR_SEPARATOR + "))"
    ),
    re.compile(r"be(?:(?P<bearer>arer\s)|(?P<private_key>gin ))"),
    re.compile(r"(?P<pair_p>p(?:ass(?:word|wd|phrase)|wd)" + _PAIR_SEPARATOR + ")"),
    re.compile(r"(?P<pair_c>c(?:ret|redentials?)" + _PAIR_SEPARATOR + ")"),
    re.compile(r"g(?:(?P<google_secret>ocspx-)|(?P<github>h[pousr]_|ithub_pat_))"),
)
# The shapes each group stands for.
BATCH_SHAPES: dict[str, frozenset[Shape]] = {
    name: frozenset(shapes)
    for name, shapes in {
        "google_api_key": (GOOGLE_API_KEY,),
        "aws_key": (AWS_KEY,),
        "telegram": (TELEGRAM,),
        "url_password": (URL_PASSWORD,),
        "slack_token": (SLACK_TOKEN,),
        "google_token": (GOOGLE_TOKEN,),
        "jwt": (JWT,),
        "sk_key": (ANTHROPIC_KEY, OPENROUTER_KEY, OPENAI_KEY),
        "slack_webhook": (SLACK_WEBHOOK,),
        "pair_k": (PAIR,),
        "pair_p": (PAIR,),
        "pair_c": (PAIR,),
        "bearer": (BEARER,),
        "private_key": (PRIVATE_KEY,),
        "google_secret": (GOOGLE_SECRET,),
        "github": (GITHUB_TOKEN, GITHUB_PAT),
    }.items()
}
_ALL_SHAPES = frozenset((*PROVIDER_SHAPES, PRIVATE_KEY, TELEGRAM, URL_PASSWORD, BEARER, PAIR))


def _marker(label: str) -> str:
    return f"[redacted: {label}]"


def _open(gates: Iterable[re.Pattern], text: str) -> set[re.Pattern]:
    return {gate for gate in gates if gate.search(text)}


def _secret_spans(
    text: str, *, gated: bool = True, shapes: frozenset[Shape] | set[Shape] | None = None
) -> list[tuple[int, int, str]]:
    """(start, end, marker) of every secret found, possibly overlapping.

    Shapes run in a fixed order (it decides the marker when two find the same span); a shape
    whose gates all fail is skipped, which changes nothing but the time (``gated=False`` runs
    every shape: the tests compare).  ``shapes``: only these may run (a batch's gates found
    nothing the others could match)."""
    spans: list[tuple[int, int, str]] = []
    if shapes is None:
        shapes = _ALL_SHAPES
    if not gated:
        passed = set(TEXT_GATES + LOWERED_GATES)
        lowered = _lowered(text)
    elif shapes is _ALL_SHAPES:
        lowered = _lowered(text)
        passed = _open(TEXT_GATES, text) | _open(LOWERED_GATES, lowered)
    else:
        wanted = {gate for shape in shapes if not shape.lowered for gate in shape.gates}
        passed = _open(wanted, text)
        wanted = {gate for shape in shapes if shape.lowered for gate in shape.gates}
        lowered = _lowered(text) if wanted else text
        passed |= _open(wanted, lowered)
    if not passed:
        return spans

    def _runs(shape: Shape) -> bool:
        return shape in shapes and any(gate in passed for gate in shape.gates)

    for shape in (*PROVIDER_SHAPES, PRIVATE_KEY):
        if not _runs(shape):
            continue
        for m in shape.pattern.finditer(text):
            # A prefix glued to a longer word ("task-ant-…", "mAKIA…") is not a key.
            if m.start() and (text[m.start() - 1].isalnum() and shape is not PRIVATE_KEY):
                continue
            spans.append((m.start(), m.end(), _marker(shape.label)))
    if _runs(TELEGRAM):
        for m in TELEGRAM.pattern.finditer(text):
            start = m.start()
            while start > 0 and text[start - 1].isdigit() and m.start() - start < 11:
                start -= 1
            digits = m.start() - start
            # Glued to a longer word it is not a token, except in the Bot API's ".../bot<token>/".
            glued = start and text[start - 1].isalnum() and text[max(0, start - 3) : start] != "bot"
            if 8 <= digits <= 10 and not glued:
                spans.append((start, m.end(), _marker(TELEGRAM.label)))
    if _runs(URL_PASSWORD):
        for m in URL_PASSWORD.pattern.finditer(text):
            user = m.group("user")
            spans.append((m.start(), m.end(), f"://{user}:{_marker(URL_PASSWORD.label)}@"))
    if _runs(BEARER):
        for m in BEARER.pattern.finditer(lowered):
            spans.append((*m.span("secret"), _marker(BEARER.label)))
    if _runs(PAIR):
        for m in PAIR.pattern.finditer(lowered):
            group = m.lastgroup or "bare"
            start, end = m.span(group)
            value = text[start:end]
            label = next((s.label for s in _VALUE_LABELS if s.pattern.match(value)), PAIR.label)
            spans.append((start, end, _marker(label)))
    return spans


def _lowered(text: str) -> str | None:
    """A lower-cased copy whose positions match ``text`` character for character."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    # NOTE: a few characters ("İ") lower-case to two; map ASCII letters only, which keeps
    # every position (slower, and only for such rare text).
    return text.translate(_ASCII_LOWER)


_ASCII_LOWER = {c: c + 32 for c in range(ord("A"), ord("Z") + 1)}


def redact_text(text: str) -> tuple[str, int]:
    """``text`` with secrets replaced, and how many were replaced (whatever the setting)."""
    if not text:
        return text, 0
    return _replaced(text, _secret_spans(text))


def _replaced(text: str, spans: list[tuple[int, int, str]]) -> tuple[str, int]:
    """``text`` with each span replaced by its marker (the first of overlapping ones wins)."""
    if not spans:
        return text, 0
    spans.sort(key=lambda s: (s[0], -s[1]))
    out: list[str] = []
    position = 0
    count = 0
    for start, end, marker in spans:
        if start < position:  # inside a secret already replaced
            continue
        out.append(text[position:start])
        out.append(marker)
        position = end
        count += 1
    out.append(text[position:])
    return "".join(out), count


def redaction_enabled() -> bool:
    return bool(getattr(settings, "HERMES_REDACT_SECRETS", True))


def redact(text):
    """``text`` with well-known secret shapes replaced by markers, when redaction is on.

    Anything that is not a non-empty string comes back unchanged.
    """
    if not isinstance(text, str) or not text or not redaction_enabled():
        return text
    return redact_text(text)[0]


def redact_many(values: Iterable) -> list:
    """``[redact(v) for v in values]``, with the gates run once over the whole batch.

    For exports, a column of a chunk at a time: one gate pass over a megabyte costs the same
    as over a kilobyte but is called once instead of a thousand times.  The ASCII strings are
    joined with newlines, where no gate match can start, so each match belongs to the string
    it starts in; only the strings a gate matched in are redacted, and only by the shapes its
    groups stand for (each still behind its own gates).  Other strings go one by one:
    lower-casing non-ASCII text can change its length, or turn a non-ASCII letter into an
    ASCII one (the Kelvin sign), so the join's lower-cased copy would not line up."""
    out = list(values)
    if not redaction_enabled():
        return out
    batch: list[int] = []
    size = 0
    for i, value in enumerate(out):
        if isinstance(value, str) and value:
            if value.isascii():
                batch.append(i)
                size += len(value)
                if size >= BATCH_CHARS:
                    _redact_batch(out, batch)
                    batch, size = [], 0
            else:
                out[i] = redact_text(value)[0]
    if batch:
        _redact_batch(out, batch)
    return out


# Characters joined for one pass of the batch gates: big enough that the calls do not count,
# small enough that the joined copy and its lower-cased one stay small.
BATCH_CHARS = 256 * 1024


def _redact_batch(out: list, batch: list[int]) -> None:
    texts = [out[i] for i in batch]
    joined = "\n".join(texts)
    starts = list(itertools.accumulate((len(t) + 1 for t in texts), initial=0))
    found: dict[int, set[Shape]] = {}
    for gates, haystack in ((BATCH_TEXT_GATES, joined), (BATCH_LOWERED_GATES, joined.lower())):
        for gate in gates:
            for m in gate.finditer(haystack):
                k = bisect.bisect_right(starts, m.start()) - 1
                found.setdefault(k, set()).update(BATCH_SHAPES[m.lastgroup])
    for k, shapes in found.items():
        text = texts[k]
        out[batch[k]] = _replaced(text, _secret_spans(text, shapes=shapes))[0]
