"""What an export request asks for (``?_export=csv|json|jsonl``, ``_bom``, ``_raw``,
``_preview``) and the name of its file, in characters safe in a header."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import partial

from django.contrib import messages
from django.utils import timezone
from django.utils.translation import gettext

from hermes_explorer.params import flag

FORMATS = {
    "csv": "text/csv; charset=utf-8",
    "json": "application/json; charset=utf-8",
    "jsonl": "application/jsonl; charset=utf-8",
}


def requested_format(request) -> str | None:
    """The export format asked for by ``?_export=``, or None for the HTML page (also for an
    unknown format, with a note naming the formats)."""
    value = request.GET.get("_export", "").strip().lower()
    if not value:
        return None
    if value not in FORMATS:
        messages.warning(
            request,
            gettext("Unknown export format “%(format)s”: use csv, json or jsonl.")
            % {"format": value[:20]},
        )
        return None
    return value


# ``_bom=1``: CSV for spreadsheets; ``_raw=1``: CSV cells exactly as stored, formulas included
# (for scripts); ``_preview=1``: long text cut in SQL.
wants_spreadsheet = partial(flag, name="_bom")
wants_raw = partial(flag, name="_raw")
wants_preview = partial(flag, name="_preview")


# Filenames ---------------------------------------------------------------------------------------
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name_part(value: object, limit: int = 60) -> str:
    """One piece of a filename: letters, digits, dot, dash and underscore only."""
    return _UNSAFE.sub("_", str(value)).strip("._-")[:limit]


def export_filename(noun: str, bits: Iterable[object], fmt: str, *, preview: bool = False) -> str:
    """``<noun>-<bits…>[-preview]-<local date>.<fmt>``, e.g. ``sessions-telegram-2026-11-30.csv``."""
    parts = [safe_name_part(noun) or "export"]
    parts += [p for p in (safe_name_part(b) for b in bits if b not in (None, "")) if p]
    if preview:
        parts.append("preview")
    parts.append(timezone.localdate().isoformat())
    return "-".join(parts)[:180] + "." + fmt


def safe_filename(name: str) -> str:
    """A whole filename made safe, its extension kept (``export`` when nothing is left)."""
    stem, dot, ext = name.rpartition(".")
    if not dot:
        return safe_name_part(name, 180) or "export"
    return (safe_name_part(stem, 180) or "export") + "." + (safe_name_part(ext, 10) or "txt")


def session_filename_bits(filterset) -> list[str]:
    """What the filters narrow to, for the filename (sources, model, user, days)."""
    if not filterset.is_bound or not filterset.is_valid():
        return []
    data = filterset.form.cleaned_data
    bits: list[str] = list(data.get("source") or [])
    for key in ("model", "user_id", "end_reason", "cost_status"):
        if data.get(key):
            bits.append(str(data[key]).rsplit("/", 1)[-1])
    for key, word in (("started_after", "from"), ("started_before", "to")):
        if data.get(key):
            bits.append(f"{word}-{data[key].isoformat()}")
    return bits
