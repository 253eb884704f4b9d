"""Hide well-known secret shapes in message content before it is shown or exported.

Tool outputs in the state.db can hold environment dumps, config files and HTTP traces, so a
transcript may contain API keys, tokens and private keys.  :func:`redact` replaces each secret
with a marker such as ``[redacted: openai key]`` and leaves the rest of the text untouched.

Shapes are chosen for precision (a redacted word should nearly always be a real secret):
provider keys with a fixed prefix (OpenAI, Anthropic, OpenRouter, Google, AWS, GitHub, Slack),
Telegram bot tokens, JWTs, bearer tokens, private key blocks, passwords in URLs, and
``NAME=value`` / ``"name": "value"`` pairs whose name says password, secret, token or key.

Speed matters (tool outputs run to megabytes): every pattern starts with a literal, which lets
the regex engine jump from candidate to candidate instead of trying every position, and the
case-insensitive ones run on a lower-cased copy of the text.  Matches are merged and the text
is rebuilt once; a megabyte costs a few milliseconds.

``HERMES_REDACT_SECRETS=0`` turns it off; staff can reveal one message at a time, and each
reveal is logged (``console_app.models.AuditEvent``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.conf import settings


@dataclass(frozen=True)
class Shape:
    label: str
    pattern: re.Pattern
    # Runs on the lower-cased text (the pattern is written in lower case).
    lowered: bool = False


def _shape(label: str, pattern: str, *, lowered: bool = False) -> Shape:
    return Shape(label, re.compile(pattern), lowered)


_KEY_CHARS = r"[A-Za-z0-9_\-]"
# Provider keys: each pattern starts with the provider's literal prefix.
PROVIDER_SHAPES: tuple[Shape, ...] = (
    _shape("anthropic key", r"sk-ant-" + _KEY_CHARS + "{20,}"),
    _shape("openrouter key", r"sk-or-" + _KEY_CHARS + "{20,}"),
    _shape("openai key", r"sk-(?!ant-|or-)(?:proj-|svcacct-|admin-)?" + _KEY_CHARS + "{20,}"),
    _shape("google api key", r"AIza[0-9A-Za-z_\-]{35}"),
    _shape("google oauth secret", r"GOCSPX-" + _KEY_CHARS + "{20,}"),
    _shape("google oauth token", r"ya29\.[0-9A-Za-z_\-]{20,}"),
    _shape("aws access key", r"A(?:KIA|SIA|BIA|CCA)[0-9A-Z]{16}(?![0-9A-Za-z])"),
    _shape("github token", r"gh[pousr]_[A-Za-z0-9]{36,255}"),
    _shape("github token", r"github_pat_[A-Za-z0-9_]{22,255}"),
    _shape("slack token", r"xox[abposr]-[A-Za-z0-9\-]{10,}"),
    _shape("slack webhook", r"hooks\.slack\.com/services/[A-Za-z0-9_/]{20,}"),
    _shape("jwt", r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
)
PRIVATE_KEY = _shape(
    "private key",
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
    r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)",
)
# "<bot id>:AA<33 chars>": matched from the colon; the digits before it are checked by hand.
TELEGRAM = _shape("telegram bot token", r":AA[A-Za-z0-9_\-]{33}(?![A-Za-z0-9_\-])")
URL_PASSWORD = _shape("url password", r"://(?P<user>[^/\s:@'\"<>]{1,100}):[^/\s@'\"<>]{1,200}@")
BEARER = _shape("bearer token", r"bearer\s+(?P<secret>[a-z0-9\-._~+/]{16,}=*)", lowered=True)
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
    lowered=True,
)

# A value inside a NAME=value pair is labelled by its own shape when it has one.
_VALUE_LABELS = (*PROVIDER_SHAPES, TELEGRAM)


def _marker(label: str) -> str:
    return f"[redacted: {label}]"


def _secret_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, marker) of every secret found, possibly overlapping."""
    spans: list[tuple[int, int, str]] = []
    for shape in (*PROVIDER_SHAPES, PRIVATE_KEY):
        for m in shape.pattern.finditer(text):
            # A prefix glued to a longer word ("task-ant-…", "mAKIA…") is not a key.
            if m.start() and (text[m.start() - 1].isalnum() and shape is not PRIVATE_KEY):
                continue
            spans.append((m.start(), m.end(), _marker(shape.label)))
    for m in TELEGRAM.pattern.finditer(text):
        start = m.start()
        while start > 0 and text[start - 1].isdigit() and m.start() - start < 11:
            start -= 1
        digits = m.start() - start
        # Glued to a longer word it is not a token, except in the Bot API's ".../bot<token>/".
        glued = start and text[start - 1].isalnum() and text[max(0, start - 3) : start] != "bot"
        if 8 <= digits <= 10 and not glued:
            spans.append((start, m.end(), _marker(TELEGRAM.label)))
    for m in URL_PASSWORD.pattern.finditer(text):
        user = m.group("user")
        spans.append((m.start(), m.end(), f"://{user}:{_marker(URL_PASSWORD.label)}@"))
    lowered = _lowered(text)
    if lowered is None:
        return spans
    for m in BEARER.pattern.finditer(lowered):
        spans.append((*m.span("secret"), _marker(BEARER.label)))
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
    spans = _secret_spans(text)
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
