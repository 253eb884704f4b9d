"""Import shim: the redaction engine lives in :mod:`hermes_explorer.redaction`."""

from hermes_explorer.redaction import (
    redact,
    redact_json_text,
    redact_many,
    redact_text,
    redact_value,
    redaction_enabled,
)

__all__ = [
    "redact",
    "redact_json_text",
    "redact_many",
    "redact_text",
    "redact_value",
    "redaction_enabled",
]
