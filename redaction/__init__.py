"""Secrets stay secret: one redaction pipeline for every output path.

Every path that shows or exports stored text passes it through this package, which replaces
each secret with a marker such as ``[redacted: openai key]``: decoded first (:mod:`.decode`),
matched against the shapes of :mod:`.rules` behind literal gates (:mod:`.engine`).  A viewer
learns nothing of a secret, an analyst its kind, staff its value through an audited reveal;
``HERMES_REDACT_SECRETS=0`` turns redaction off.  Its limits: ``docs/security.md``.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable
from functools import partial

from django.conf import settings

from .engine import marker, redact_batch, redact_text
from .rules import SECRET_NAME


def redaction_enabled() -> bool:
    return bool(settings.HERMES_REDACT_SECRETS)


# ``[redact_text(t) for t in texts]`` (whatever the setting), the gates run once over the batch.
redact_text_many = partial(redact_batch, counted=True)


def redact(text):
    """``text`` with secrets replaced by markers, when redaction is on (anything but a
    non-empty string comes back unchanged)."""
    if not isinstance(text, str) or not text or not redaction_enabled():
        return text
    return redact_text(text)[0]


def redact_many(values: Iterable) -> list:
    """``[redact(v) for v in values]``, the gates run once over the batch (an export column)."""
    if not redaction_enabled():
        return list(values)
    return redact_batch(values)


def redact_value(value, *, kind: str = "text"):
    """``value`` with its secrets hidden, when redaction is on, whatever it is: a string as
    text (``kind="text"``) or as a JSON document that stays valid (``kind="json"``); a decoded
    structure walked, its strings redacted and the scalar value of a key that names a secret
    replaced whole.  Other values come back unchanged."""
    if not redaction_enabled():
        return value
    out = _redact_structure(value)
    if kind == "json" and isinstance(value, str) and out is not value:
        out = _still_json(value, out)
    return out


# A JSON document (a string) with its secrets hidden, still a valid JSON document.
redact_json_text = partial(redact_value, kind="json")


_SECRET_KEY = re.compile(SECRET_NAME + r"\Z")


def _redact_structure(value):
    if isinstance(value, str):
        return redact_text(value)[0] if value else value
    if isinstance(value, list):
        return [_redact_structure(v) for v in value]
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            secret = isinstance(key, str) and _SECRET_KEY.search(key.lower())
            # A key may itself be a token (a map keyed by API keys).
            key = redact_text(key)[0] if isinstance(key, str) and key else key
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
    with contextlib.suppress(ValueError):
        json.loads(redacted)
        return redacted
    try:
        document = json.loads(original)
    except ValueError:
        return redacted
    return json.dumps(_redact_structure(document), ensure_ascii=original.isascii())
