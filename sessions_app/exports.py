"""Exports: any table view as CSV, JSON or JSONL, streamed in keyset-paged chunks.

A table URL plus ``?_export=csv|json|jsonl`` downloads exactly the rows of the current filters
and sort, all pages.  The response is a ``StreamingHttpResponse`` fed by short queries, one per
chunk (``WHERE <keyset> > <last row seen> ORDER BY <keyset> LIMIT n``), so memory stays flat
whatever the size and no read transaction stays open across chunks (a long one would stop
Hermes from recycling its WAL).  Why that holds: the ``hermes`` connection runs in autocommit
(Django sets ``isolation_level=None``; ``supports_transactions`` is False so nothing wraps it),
and a chunk is fetched completely before the next one starts, so SQLite ends the statement's
implicit read transaction as soon as its rows are read.  ``tests/test_exports.py`` proves it
with a writer that checkpoints the WAL between two chunks.  A chunk of megabyte rows makes the
next chunk smaller (``EXPORT_CHUNK_BYTES``), so memory is bounded by bytes as well as rows.

NOTE: the price of not holding one read transaction is that an export is not a snapshot: a row
Hermes adds during a long download appears if it sorts after the rows already sent (new
messages do, in id order), and a row updated behind the cursor is not sent again.

Options in the query string, read by the convenience functions below:

``_export=csv|json|jsonl``  the format (anything else shows the page with a note);
``_bom=1``                  CSV for spreadsheets: a UTF-8 BOM, cells that start with
                            ``= + - @`` (or a tab/CR) prefixed with ``'`` against formula
                            injection, NUL characters dropped;
``_preview=1``              long text (content, reasoning, tool calls) cut in SQL to
                            ``PREVIEW_CHARS`` instead of the full value.

Secrets in message text are redacted as on the transcript page (``sessions_app.redaction``,
``HERMES_REDACT_SECRETS``): a download never shows what the page hides.  Who may download at
all is decided by ``hermes_explorer.roles`` (``_export`` needs the export capability).

The API other views call (keep these names):

``requested_format(request) -> str | None``
    ``"csv"``, ``"json"`` or ``"jsonl"`` from ``?_export=``; None when absent, and None with a
    flash note naming the valid formats when unknown (the HTML page is shown).
``stream_export(*, fmt, columns, chunks, filename, spreadsheet=False, preview_only=False)``
    The streamed download of ``chunks`` (an iterable of lists of dicts keyed by ``columns``).
    The first chunk is read before the response starts, so a query that fails or runs out of
    time becomes the usual error page, not a cut download.
``keyset_chunks(queryset, keyset, *, to_row, chunk_size=2000)``
    Lists of ``to_row(row)``, following ``keyset``'s order exactly; each chunk is its own
    query under ``query_budget(settings.HERMES_EXPORT_CHUNK_TIMEOUT)``.
``export_sessions(request, queryset, keyset, *, filename_bits)``
``export_messages(request, queryset, keyset, *, filename_bits)``
    The whole thing for a filtered session or message queryset: columns of this file's shape,
    ISO 8601 times (``TIME_ZONE``) next to the raw epoch, session title and source of each
    message from the same query, full content unless ``_preview=1``.
``export_filename(noun, bits, fmt, *, preview=False)``
    ``sessions-telegram-2026-11-30.csv``: safe characters only.
"""

from __future__ import annotations

import csv
import datetime as dt
import itertools
import json
import logging
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import BadRequest
from django.db.models import F, OuterRef, Subquery
from django.db.models.functions import Coalesce, Substr
from django.http import HttpResponse, StreamingHttpResponse
from django.utils import timezone

from hermes_explorer.hermes_db.deadline import query_budget

from .models import Session
from .pagination import Keyset
from .querysets import PREVIEW_CHARS
from .redaction import redact, redaction_enabled
from .selectors import sessions_for_table

logger = logging.getLogger(__name__)

FORMATS = {
    "csv": "text/csv; charset=utf-8",
    "json": "application/json; charset=utf-8",
    "jsonl": "application/jsonl; charset=utf-8",
}
# Rows per chunk query. Tests lower it to cross chunk boundaries on small fixtures.
EXPORT_CHUNK_ROWS = 2000
# A chunk of megabyte tool outputs shrinks the next chunk so that it holds about this much
# text: memory stays bounded by bytes, not only by rows.
EXPORT_CHUNK_BYTES = 32 * 1024 * 1024
# Bytes handed to the server per write: large enough to keep syscalls rare.
FLUSH_BYTES = 64 * 1024
# Cells a spreadsheet would run as a formula (OWASP "CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

# Columns of the exports, in order. Times become two columns: ISO 8601 and ``<name>_epoch``.
TIME_FIELDS = frozenset({"started_at", "ended_at", "last_activity_at", "timestamp"})
SESSION_FIELDS = (
    "id",
    "title",
    "source",
    "user_id",
    "model",
    "started_at",
    "ended_at",
    "last_activity_at",
    "message_count",
    "tool_call_count",
    "api_call_count",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "estimated_cost_usd",
    "actual_cost_usd",
    "cost_status",
    "cost_source",
    "pricing_version",
    "billing_provider",
    "billing_base_url",
    "billing_mode",
    "parent_session_id",
    "end_reason",
    "title_source",
    "profile_name",
    "display_name",
    "chat_type",
    "chat_id",
    "thread_id",
    "cwd",
    "git_branch",
    "git_repo_root",
    "archived",
    "pinned",
    "hidden",
    "model_config",
)
# ``session_title`` and ``source`` come from ``sessions`` in the same statement.
MESSAGE_FIELDS = (
    "id",
    "session_id",
    "session_title",
    "source",
    "role",
    "tool_name",
    "tool_call_id",
    "timestamp",
    "token_count",
    "finish_reason",
    "content",
    "tool_calls",
    "reasoning",
    "active",
    "compacted",
    "compressed_summary",
    "display_kind",
)
# Text a preview export cuts in SQL, and where secrets hide: it is redacted like the transcript
# page (``HERMES_REDACT_SECRETS``), so a download never shows what the page hides.
LONG_MESSAGE_FIELDS = ("content", "tool_calls", "reasoning")
_JOINED = ("session_title", "source")


# Request options -------------------------------------------------------------------------------
def requested_format(request) -> str | None:
    """The export format asked for by ``?_export=``, or None for the HTML page.

    An unknown format also gives None (the page is shown) with a note saying which formats
    exist: a typo in a URL is not worth an error page."""
    value = request.GET.get("_export", "").strip().lower()
    if not value:
        return None
    if value not in FORMATS:
        messages.warning(request, f"Unknown export format “{value[:20]}”: use csv, json or jsonl.")
        return None
    return value


def wants_spreadsheet(request) -> bool:
    return request.GET.get("_bom", "") in ("1", "true", "yes", "on")


def wants_preview(request) -> bool:
    return request.GET.get("_preview", "") in ("1", "true", "yes", "on")


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


def _safe_filename(name: str) -> str:
    stem, dot, ext = name.rpartition(".")
    if not dot:
        return safe_name_part(name, 180) or "export"
    return (safe_name_part(stem, 180) or "export") + "." + (safe_name_part(ext, 10) or "txt")


# Chunks ------------------------------------------------------------------------------------------
def keyset_chunks(
    queryset,
    keyset: Keyset,
    *,
    to_row: Callable,
    chunk_size: int = EXPORT_CHUNK_ROWS,
    max_chunk_bytes: int | None = EXPORT_CHUNK_BYTES,
) -> Iterator[list[dict]]:
    """The rows of ``queryset`` in ``keyset`` order, as lists of ``to_row(row)``.

    Each chunk is one statement, read to the end (``list()``) before the chunk is yielded:
    between chunks the connection holds no statement and therefore no read transaction.  The
    next chunk starts strictly after the last row's keys, so rows are neither skipped nor
    repeated however long the client takes (see the module's NOTE on snapshots).  ``queryset`` may yield model instances or dicts
    (``values()``); the keyset's names must be readable on them."""
    order = keyset.order_by()
    size = max(1, chunk_size)
    last: list | None = None
    while True:
        qs = queryset if last is None else queryset.filter(keyset.after(last))
        with query_budget(settings.HERMES_EXPORT_CHUNK_TIMEOUT):
            raw = list(qs.order_by(*order)[:size])
        if not raw:
            return
        last = keyset.values_of(raw[-1])
        rows = [to_row(r) for r in raw]
        del raw
        full = len(rows) == size
        if max_chunk_bytes:
            used = _text_bytes(rows)
            if used > max_chunk_bytes:
                size = max(1, int(size * max_chunk_bytes / used))
            elif size < chunk_size:
                size = min(chunk_size, size * 2)
        yield rows
        if not full:
            return


def _text_bytes(rows: list[dict]) -> int:
    return sum(len(v) for row in rows for v in row.values() if isinstance(v, str))


# Encoders ----------------------------------------------------------------------------------------
class _Echo:
    """A file for ``csv.writer`` that hands each written line back instead of storing it."""

    def write(self, value: str) -> str:
        return value


def neutralise_formula(value):
    """A cell a spreadsheet would evaluate, made literal with a leading apostrophe."""
    if isinstance(value, str):
        value = value.replace("\x00", "")
        if value.startswith(FORMULA_STARTS):
            return "'" + value
    return value


def _csv_pieces(columns, chunks, spreadsheet: bool) -> Iterator[str]:
    writer = csv.writer(_Echo())  # minimal quoting, CRLF line ends: RFC 4180
    if spreadsheet:
        yield "\ufeff"
    yield writer.writerow(columns)
    for chunk in chunks:
        for row in chunk:
            values = [row.get(c) for c in columns]
            if spreadsheet:
                values = [neutralise_formula(v) for v in values]
            yield writer.writerow(values)
        yield ""  # end of chunk: flush what is buffered


def json_text(row) -> str:
    """One JSON value on one line; NaN/Infinity (not JSON) become null."""
    try:
        return json.dumps(row, ensure_ascii=False, allow_nan=False, default=str)
    except ValueError:
        return json.dumps(_finite(row), ensure_ascii=False, allow_nan=False, default=str)


def _finite(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _json_text(row: dict, columns) -> str:
    return json_text({c: row.get(c) for c in columns})


def _json_pieces(columns, chunks, spreadsheet: bool) -> Iterator[str]:
    first = True
    for chunk in chunks:
        for row in chunk:
            yield ("[\n" if first else ",\n") + _json_text(row, columns)
            first = False
        yield ""
    yield "[]\n" if first else "\n]\n"


def _jsonl_pieces(columns, chunks, spreadsheet: bool) -> Iterator[str]:
    for chunk in chunks:
        for row in chunk:
            yield _json_text(row, columns) + "\n"
        yield ""


_ENCODERS = {"csv": _csv_pieces, "json": _json_pieces, "jsonl": _jsonl_pieces}


def buffered(pieces: Iterable[str], *, label: str = "export") -> Iterator[bytes]:
    """UTF-8 bytes in writes of about ``FLUSH_BYTES``; an empty piece flushes (chunk ends)."""
    buffer: list[str] = []
    size = 0
    try:
        for piece in pieces:
            if piece:
                buffer.append(piece)
                size += len(piece)
                if size < FLUSH_BYTES:
                    continue
            if buffer:
                yield "".join(buffer).encode("utf-8", "replace")
                buffer, size = [], 0
        if buffer:
            yield "".join(buffer).encode("utf-8", "replace")
    except Exception:
        # Headers are gone: the server can only cut the connection, which clients see as an
        # incomplete download. Say why in the log.
        logger.exception("%s stopped mid-stream", label)
        raise


def stream_export(
    *,
    fmt: str,
    columns: list[str],
    chunks: Iterable[list[dict]],
    filename: str,
    spreadsheet: bool = False,
    preview_only: bool = False,
) -> StreamingHttpResponse:
    """A download of ``chunks`` as ``fmt`` (csv, json or jsonl).

    ``spreadsheet`` (CSV only): BOM and formula neutralisation.  ``preview_only`` marks the
    file as holding cut text (``-preview`` in the name, ``X-Export-Preview`` header)."""
    if fmt not in FORMATS:
        raise BadRequest(f"Unknown export format {fmt!r}: use csv, json or jsonl.")
    iterator = iter(chunks)
    # Run the first query now: a bad filter or a timeout still gets a proper error page.
    first = next(iterator, None)
    rows = itertools.chain([first] if first is not None else [], iterator)
    name = _safe_filename(filename)
    if preview_only and "-preview" not in name:
        stem, _, ext = name.rpartition(".")
        name = f"{stem}-preview.{ext}"
    pieces = _ENCODERS[fmt](list(columns), rows, spreadsheet and fmt == "csv")
    response = StreamingHttpResponse(buffered(pieces, label=name), content_type=FORMATS[fmt])
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = "private, no-store"
    if preview_only:
        response["X-Export-Preview"] = f"text cut to {PREVIEW_CHARS} characters"
    return response


# Rows --------------------------------------------------------------------------------------------
def output_columns(fields: Sequence[str]) -> list[str]:
    """Header of an export: each time field as ISO 8601 followed by its raw epoch."""
    out = []
    for name in fields:
        out.append(name)
        if name in TIME_FIELDS:
            out.append(f"{name}_epoch")
    return out


def row_builder(
    fields: Sequence[str],
    sources: dict[str, str] | None = None,
    *,
    redacted: Iterable[str] = (),
) -> Callable:
    """``values()`` dict → export row. ``sources`` maps an output field to the key it is read
    from when they differ (annotations); ``redacted`` fields get secrets replaced by markers."""
    sources = sources or {}
    plan = [(name, sources.get(name, name), name in TIME_FIELDS) for name in fields]
    hide = [name for name in redacted if name in fields] if redaction_enabled() else []
    # Resolved once: looking the zone up per value cost a third of the time of a row.
    zone = timezone.get_current_timezone()

    def to_row(raw: dict) -> dict:
        row = {}
        for name, key, is_time in plan:
            value = raw.get(key)
            if is_time:
                row[name] = iso_in(value, zone)
                row[f"{name}_epoch"] = value
            else:
                row[name] = value
        for name in hide:
            row[name] = redact(row[name])
        return row

    return to_row


def iso_in(value, zone) -> str | None:
    """ISO 8601 of an epoch in ``zone`` (what ``timefmt.iso`` gives, without its per-call
    zone lookup); None for NULL or an out-of-range value."""
    if value is None:
        return None
    try:
        return dt.datetime.fromtimestamp(float(value), zone).isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError, TypeError):
        return None


def _present(queryset, fields: Sequence[str], virtual: Iterable[str] = ()) -> list[str]:
    """The fields this file has (``virtual`` ones are computed and always there)."""
    meta = queryset.model._meta
    virtual = set(virtual)
    return [f for f in fields if f in virtual or queryset.has_column(meta.get_field(f).column)]


def _with_keys(names: list[str], keyset: Keyset) -> list[str]:
    return names + [k for k, _ in keyset.keys if k not in names]


def export_sessions(
    request, queryset, keyset: Keyset, *, filename_bits=()
) -> StreamingHttpResponse:
    """The sessions of ``queryset`` in ``keyset`` order, every column this file has."""
    fmt = requested_format(request) or "csv"
    qs = queryset
    if (
        any(k == "last_active" for k, _ in keyset.keys)
        and "last_active" not in qs.query.annotations
    ):
        qs = qs.annotate(last_active=Coalesce(F("last_activity_at"), F("started_at")))
    fields = _present(qs, SESSION_FIELDS)
    rows = qs.values(*_with_keys(list(fields), keyset))
    chunks = keyset_chunks(rows, keyset, to_row=row_builder(fields), chunk_size=EXPORT_CHUNK_ROWS)
    return stream_export(
        fmt=fmt,
        columns=output_columns(fields),
        chunks=chunks,
        filename=export_filename("sessions", filename_bits, fmt),
        spreadsheet=wants_spreadsheet(request),
    )


def message_rows(queryset, keyset: Keyset, *, preview: bool):
    """A ``values()`` queryset of the message export columns, and how to turn it into rows.

    The session's title and source are correlated lookups on the sessions primary key inside
    the same statement (not a query per row).  NOTE: a subquery rather than Django's INNER
    JOIN, so that a message whose session row was pruned still exports (with empty title)."""
    session = Session.objects.order_by().filter(pk=OuterRef("session_id"))
    qs = queryset.annotate(
        export_session_title=Subquery(session.values("title")[:1]),
        export_session_source=Subquery(session.values("source")[:1]),
    )
    fields = _present(qs, MESSAGE_FIELDS, virtual=_JOINED)
    sources = {"session_title": "export_session_title", "source": "export_session_source"}
    if preview:
        cuts = {
            f"export_cut_{name}": Substr(name, 1, PREVIEW_CHARS) for name in LONG_MESSAGE_FIELDS
        }
        qs = qs.annotate(**cuts)
        sources.update({name: f"export_cut_{name}" for name in LONG_MESSAGE_FIELDS})
    selected = [sources.get(f, f) for f in fields]
    to_row = row_builder(fields, sources, redacted=LONG_MESSAGE_FIELDS)
    return qs.values(*_with_keys(selected, keyset)), fields, to_row


def export_messages(
    request, queryset, keyset: Keyset, *, filename_bits=()
) -> StreamingHttpResponse:
    """The messages of ``queryset`` in ``keyset`` order; full content unless ``_preview=1``."""
    fmt = requested_format(request) or "csv"
    preview = wants_preview(request)
    rows, fields, to_row = message_rows(queryset, keyset, preview=preview)
    chunks = keyset_chunks(rows, keyset, to_row=to_row, chunk_size=EXPORT_CHUNK_ROWS)
    return stream_export(
        fmt=fmt,
        columns=output_columns(fields),
        chunks=chunks,
        filename=export_filename("messages", filename_bits, fmt, preview=preview),
        spreadsheet=wants_spreadsheet(request),
        preview_only=preview,
    )


# The session table -------------------------------------------------------------------------------
def invalid_filters_response(form) -> HttpResponse:
    """A 400 that says which filters are wrong (plain text: scripts read it too)."""
    lines = ["The export was not made: some filters are not valid.", ""]
    for field, errors in form.errors.items():
        for error in errors:
            lines.append(f"{field}: {error}")
    response = HttpResponse(
        "\n".join(lines) + "\n", status=400, content_type="text/plain; charset=utf-8"
    )
    response["X-Content-Type-Options"] = "nosniff"
    return response


def session_filename_bits(filterset) -> list[str]:
    """What the filters narrow to, for the filename (sources, model, user, days)."""
    if not filterset.is_bound or not filterset.is_valid():
        return []
    data = filterset.form.cleaned_data
    bits: list[str] = list(data.get("source") or [])
    for key in ("model", "user_id", "end_reason", "cost_status"):
        if data.get(key):
            bits.append(str(data[key]).rsplit("/", 1)[-1])
    if data.get("started_after"):
        bits.append(f"from-{data['started_after'].isoformat()}")
    if data.get("started_before"):
        bits.append(f"to-{data['started_before'].isoformat()}")
    return bits


def export_session_list(request, filterset, keyset: Keyset):
    """``/sessions/?…&_export=``: the page's filterset, sort and table queryset, all pages."""
    if filterset.is_bound and not filterset.is_valid():
        return invalid_filters_response(filterset.form)
    qs = sessions_for_table(filterset.qs, sort=keyset.name)
    return export_sessions(request, qs, keyset, filename_bits=session_filename_bits(filterset))
