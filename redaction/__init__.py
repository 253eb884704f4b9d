"""Secrets stay secret: one redaction pipeline for every output path.

Tool outputs in the state.db hold environment dumps, config files and HTTP traces, so a
transcript may contain API keys, tokens, passwords and private keys, and so may a title or a
user id.  Every path that shows or exports stored text passes it through this package, which
replaces each secret with a marker such as ``[redacted: openai key]`` and leaves the rest of the
text exactly as it was.

The model: what each role may learn about a secret
    *viewer*   nothing of it: redacted content, and none of the columns hidden from viewers.
    *analyst*  its shape only, ``[redacted: <kind>]``: that a key of that kind was there,
               never its value (no filter, search or sort may confirm a value either).
    *staff*    the value, one message at a time through "reveal", each reveal audited.
``HERMES_REDACT_SECRETS=0`` turns redaction off for everyone (a single-user install).

The pipeline decodes first and redacts last (:mod:`.decode`): a JSON string literal that holds
an escape is decoded, down to JSON inside JSON strings (a tool call's arguments), matched, and
encoded again with its secrets hidden; zero-width characters are ignored inside a secret.  The
shapes (:mod:`.rules`) follow the maintained gitleaks and detect-secrets rule sets, plus
headers (``Authorization``, ``Cookie``), URLs with a password and ``NAME = value`` pairs whose
name says password, secret, token or key.  Cheap literal gates keep it fast (:mod:`.engine`),
scanned once for a whole export batch (:func:`.engine.redact_batch`).

Limits, honestly:
    * It finds shapes, not meaning: a password written as prose ("the password is hunter2"),
      a key with no known prefix outside a ``NAME=value`` pair, or a secret split across
      messages is not found.  A marker says a secret was there and which kind.
    * Encodings other than JSON's (base64, URL-encoding, HTML entities) are not decoded, and
      JSON strings are found by their quotes on one line (four levels deep at most): text with
      an odd quote before a JSON document on the same line is matched as stored only.
    * It errs towards hiding: in code, ``token = request.headers.get(…)`` loses the expression
      after the ``=``, and prose such as "the secret: keep it short" loses a word.
    * A preview cut inside a secret may leave a tail too short to recognise; the search
      snippets guard against that with the full text (``secret_pieces``).
    * Redaction hides values in output; it does not change what SQL can compare.  Filters,
      searches and the console must not let a role test a value it cannot read.

Public API (``value`` is anything a column holds; non-strings come back unchanged):
    :func:`redact` (one string), :func:`redact_many` (an export column, fast),
    :func:`redact_text` (string and count, whatever the setting), :func:`redact_value`
    (strings, JSON text, or decoded JSON structures), :func:`redact_json_text`,
    :func:`redaction_enabled`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from django.conf import settings

from .engine import marker, redact_batch
from .engine import redact_text as _redact_text
from .rules import SECRET_NAME

__all__ = [
    "redact",
    "redact_json_text",
    "redact_many",
    "redact_text",
    "redact_text_many",
    "redact_value",
    "redaction_enabled",
]


def redaction_enabled() -> bool:
    return bool(settings.HERMES_REDACT_SECRETS)


def redact_text(text: str) -> tuple[str, int]:
    """``text`` with secrets replaced, and how many were replaced (whatever the setting)."""
    return _redact_text(text)


def redact_text_many(texts: Iterable) -> list[tuple[str, int]]:
    """``[redact_text(t) for t in texts]`` (whatever the setting), with the gates run once
    over the batch: a page of transcript texts, where most hold no secret."""
    return redact_batch(texts, counted=True)


def redact(text):
    """``text`` with secrets replaced by markers, when redaction is on.

    Anything that is not a non-empty string comes back unchanged."""
    if not isinstance(text, str) or not text or not redaction_enabled():
        return text
    return _redact_text(text)[0]


def redact_many(values: Iterable) -> list:
    """``[redact(v) for v in values]``, with the gates run once over the whole batch: for
    exports, a column of a chunk at a time."""
    if not redaction_enabled():
        return list(values)
    return redact_batch(values)


def redact_value(value, *, kind: str = "text"):
    """``value`` with its secrets hidden, when redaction is on, whatever it is.

    ``kind="text"``: a string is redacted as text (JSON in it decoded where it holds
    escapes).  ``kind="json"``: a string that is a JSON document (tool calls, a route, tool
    results) comes back a valid JSON document.  A decoded structure (dict, list) is walked:
    its strings are redacted, and the scalar value of a key that names a secret
    (``"password": …``) is replaced whole.  Other values come back unchanged."""
    if not redaction_enabled():
        return value
    if isinstance(value, str):
        out = _redact_text(value)[0] if value else value
        if kind == "json" and out is not value:
            out = _still_json(value, out)
        return out
    if isinstance(value, (dict, list)):
        return _redact_structure(value)
    return value


def redact_json_text(text):
    """A JSON document (a string) with its secrets hidden, still a valid JSON document."""
    return redact_value(text, kind="json")


_SECRET_KEY = re.compile(SECRET_NAME + r"\Z")


def _redact_structure(value):
    if isinstance(value, str):
        return _redact_text(value)[0] if value else value
    if isinstance(value, list):
        return [_redact_structure(v) for v in value]
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            secret = isinstance(key, str) and _SECRET_KEY.search(key.lower())
            if secret and isinstance(item, (str, int, float)) and not isinstance(item, bool):
                if not (isinstance(item, str) and item.startswith("[redacted")):
                    item = marker("secret") if item != "" else item
                out[key] = item
            else:
                out[key] = _redact_structure(item)
        return out
    return value


def _still_json(original: str, redacted: str) -> str:
    """``redacted``, or when the original parsed as JSON and it does not, the original
    decoded, walked and encoded again (a replacement that cut a string in two)."""
    try:
        json.loads(redacted)
        return redacted
    except ValueError:
        pass
    try:
        document = json.loads(original)
    except ValueError:
        return redacted
    return json.dumps(_redact_structure(document), ensure_ascii=original.isascii())
