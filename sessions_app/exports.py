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

Speed (issue 7: at least 50 MB/s for a million messages, redaction on): the per-row Python
work is what costs, so a chunk is handled a column at a time.  Rows are fetched as tuples
(``values_list()``, the same SQL as ``values()``), times become ISO 8601 through a per-hour
cache (:func:`iso_converter`), secrets are looked for a column at a time
(:func:`sessions_app.redaction.redact_many`), CSV is written a column at a time with the same
bytes as ``csv.writer`` (:func:`csv_lines`), and lines are encoded and sent in pieces of about
``FLUSH_BYTES``.  1,000 rows a chunk measured as fast as 2,000, 5,000 or 10,000 (more rows
only hold more memory: a chunk's text is held about twice while it is written out).

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
    The streamed download of ``chunks`` (an iterable of lists of dicts keyed by ``columns``, or
    of sequences in ``columns`` order).  The first chunk is read before the response starts,
    so a query that fails or runs out of time becomes the usual error page, not a cut download.
``keyset_chunks(queryset, keyset, *, to_row, chunk_size=1000)``
    Lists of ``to_row(row)``, following ``keyset``'s order exactly; each chunk is its own
    query under ``query_budget(settings.HERMES_EXPORT_CHUNK_TIMEOUT)``.  ``to_rows=`` converts
    a whole chunk at once instead.
``table_plan(queryset, keyset, fields, …) -> TablePlan`` / ``message_rows(…) -> TablePlan``
    What a table export fetches and how: ``plan.columns`` is the header, ``plan.chunks()``
    the lists of rows (tuples in ``columns`` order).
``export_sessions(request, queryset, keyset, *, filename_bits)``
``export_messages(request, queryset, keyset, *, filename_bits)``
    The whole thing for a filtered session or message queryset: columns of this file's shape,
    ISO 8601 times (``TIME_ZONE``) next to the raw epoch, session title and source of each
    message from the same query, full content unless ``_preview=1``.
``export_filename(noun, bits, fmt, *, preview=False)``
    ``sessions-telegram-2026-11-30.csv``: safe characters only.
"""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
import json
import logging
import math
import operator
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import BadRequest
from django.db.models import F, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.http import HttpResponse, StreamingHttpResponse
from django.utils import timezone

from hermes_explorer.hermes_db.deadline import query_budget

from .models import Session
from .pagination import Keyset
from .querysets import PREVIEW_CHARS
from .redaction import redact_many, redaction_enabled
from .selectors import sessions_for_table
from .sqlfunctions import ContentHead

logger = logging.getLogger(__name__)

FORMATS = {
    "csv": "text/csv; charset=utf-8",
    "json": "application/json; charset=utf-8",
    "jsonl": "application/jsonl; charset=utf-8",
}
# Rows per chunk query (each a short statement: a few ms on the 1M-message store). Tests lower
# it to cross chunk boundaries on small fixtures.
EXPORT_CHUNK_ROWS = 1000
# A chunk of megabyte tool outputs shrinks the next chunk so that it holds about this much
# text: memory stays bounded by bytes, not only by rows (the writer holds a chunk's text about
# twice; an ordinary chunk of the 1M store holds ~1 MB).
EXPORT_CHUNK_BYTES = 16 * 1024 * 1024
# Characters encoded and handed to the server per write: one encode and one send per ~128 KiB.
# Measured as fast as 256 KiB or 512 KiB, and the worker's RSS stays lower (big short-lived
# strings are what the allocator keeps).
FLUSH_BYTES = 128 * 1024
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
    to_row: Callable | None = None,
    chunk_size: int = EXPORT_CHUNK_ROWS,
    max_chunk_bytes: int | None = EXPORT_CHUNK_BYTES,
    to_rows: Callable[[list], list] | None = None,
    keys_of: Callable | None = None,
    text_size: Callable[[list], int] | None = None,
) -> Iterator[list]:
    """The rows of ``queryset`` in ``keyset`` order, in lists of ``to_row(row)`` (or as fetched).

    Each chunk is one statement, read to the end (``list()``) before the chunk is yielded:
    between chunks the connection holds no statement and therefore no read transaction.  The
    next chunk starts strictly after the last row's keys, so rows are neither skipped nor
    repeated however long the client takes (see the module's NOTE on snapshots).  ``queryset``
    may yield model instances or dicts (``values()``); the keyset's names must be readable on
    them.

    For speed, exports fetch tuples (``values_list()``) and convert a whole chunk at once:
    ``to_rows(fetched) -> rows`` replaces ``to_row``, ``keys_of(row)`` reads the keyset's
    values from a fetched row and ``text_size(fetched)`` measures the text that bounds the
    next chunk (by default the strings of the converted dicts)."""
    order = keyset.order_by()
    keys_of = keys_of or keyset.values_of
    size = max(1, chunk_size)
    last: list | None = None
    while True:
        qs = queryset if last is None else queryset.filter(keyset.after(last))
        with query_budget(settings.HERMES_EXPORT_CHUNK_TIMEOUT):
            raw = list(qs.order_by(*order)[:size])
        if not raw:
            return
        last = keys_of(raw[-1])
        full = len(raw) == size
        used = text_size(raw) if text_size and max_chunk_bytes else 0
        if to_rows is not None:
            rows = to_rows(raw)
        elif to_row is not None:
            rows = [to_row(r) for r in raw]
        else:
            rows = raw
        del raw
        if max_chunk_bytes:
            if not text_size:
                used = _text_bytes(rows)
            if used > max_chunk_bytes:
                size = max(1, int(size * max_chunk_bytes / used))
            elif size < chunk_size:
                size = min(chunk_size, size * 2)
        # Handed over, not kept: while the consumer writes this chunk out, this frame holds no
        # reference to it, so its text can be freed as soon as the consumer is done with it.
        handed = [rows]
        del rows
        yield handed.pop()
        if not full:
            return


def _text_bytes(rows: list[dict]) -> int:
    return sum(len(v) for row in rows for v in row.values() if isinstance(v, str))


# Encoders ----------------------------------------------------------------------------------------
# Rows are written a chunk at a time: each line is built in one join, lines are encoded together
# in pieces of about ``FLUSH_BYTES`` and each piece is one write.  CSV is written here rather
# than by ``csv.writer``, which copies each character into its own buffer (about 60 MB/s,
# measured); the output is the same, byte for byte (``tests/test_exports.py`` compares).
def neutralise_formula(value):
    """A cell a spreadsheet would evaluate, made literal with a leading apostrophe."""
    if isinstance(value, str):
        value = value.replace("\x00", "")
        if value.startswith(FORMULA_STARTS):
            return "'" + value
    return value


def csv_cell(value) -> str:
    """One CSV field as ``csv.writer`` writes it (minimal quoting, RFC 4180)."""
    if value is None:
        return ""
    if value.__class__ is not str:
        if value.__class__ is int or value.__class__ is float:
            return str(value)
        value = str(value)
    if '"' in value:
        return '"' + value.replace('"', '""') + '"'
    if "," in value or "\n" in value or "\r" in value:
        return '"' + value + '"'
    return value


def csv_line(values: Sequence) -> str:
    """One record without its line end; a lone empty field is ``""`` as ``csv.writer`` has it."""
    line = ",".join(map(csv_cell, values))
    if not line and len(values) == 1:
        return '""'
    return line


def json_text(row) -> str:
    """One JSON value on one line; NaN/Infinity (not JSON) become null."""
    try:
        return _JSON.encode(row)
    except ValueError:
        return _JSON.encode(_finite(row))


# One encoder for every row: ``json.dumps`` with options builds a new one per call.
_JSON = json.JSONEncoder(ensure_ascii=False, allow_nan=False, default=str)


def _finite(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def _as_values(chunk: list, columns: list[str]) -> list:
    """Rows as sequences in ``columns`` order (``stream_export`` takes dicts too)."""
    if chunk and isinstance(chunk[0], dict):
        return [[row.get(c) for c in columns] for row in chunk]
    return chunk


_NONE = type(None)
_NUMBERS = frozenset({int, float})
# Longer text columns (content) nearly always need quotes: checked value by value, no join.
_SCANNED_COLUMN = 64 * 1024


def csv_column(values: Sequence, *, spreadsheet: bool = False) -> Sequence[str]:
    """``csv_cell`` of each value of one column, cheaply for the common columns: numbers
    (``str``), and short text with nothing to quote (four scans of the joined column, then
    returned as it is)."""
    if spreadsheet:
        return [csv_cell(neutralise_formula(v)) for v in values]
    kinds = set(map(type, values))
    if kinds <= _NUMBERS:
        return list(map(str, values))
    if _NONE in kinds and kinds <= {_NONE, str, int, float}:
        values = ["" if v is None else v for v in values]
        kinds.discard(_NONE)
        if kinds <= _NUMBERS:
            return list(map(str, values))
    if kinds == {str} and sum(map(len, values)) <= _SCANNED_COLUMN:
        joined = "\x00".join(values)
        if '"' not in joined and "," not in joined and "\n" not in joined and "\r" not in joined:
            return values
    return list(map(csv_cell, values))


def csv_lines(rows: list[Sequence], *, spreadsheet: bool = False) -> list[str]:
    """The CSV records of ``rows`` (without line ends), encoded a column at a time."""
    return _records([csv_column(c, spreadsheet=spreadsheet) for c in zip(*rows, strict=True)])


def _records(cells: list[Sequence[str]]) -> list[str]:
    if not cells:
        return []
    if len(cells) == 1:
        return [c or '""' for c in cells[0]]  # a lone empty field, as csv.writer has it
    return list(map(",".join, zip(*cells, strict=True)))


def _pieces(lines: list[str], sep: str, lead: str = "", tail: str = "") -> Iterator[str]:
    """``lead + sep.join(lines) + tail`` in strings of about ``FLUSH_BYTES`` characters."""
    if not lines:
        if lead or tail:
            yield lead + tail
        return
    ends = list(
        itertools.accumulate(map(operator.add, map(len, lines), itertools.repeat(len(sep))))
    )
    start, done = 0, 0
    while start < len(lines):
        stop = min(len(lines), bisect.bisect_left(ends, done + FLUSH_BYTES, lo=start) + 1)
        text = sep.join(lines[start:stop])
        yield (lead if start == 0 else "") + text + (tail if stop == len(lines) else sep)
        done, start = ends[stop - 1], stop


def _csv_pieces(columns, chunks, spreadsheet: bool) -> Iterator[str]:
    yield ("\ufeff" if spreadsheet else "") + csv_line(columns) + "\r\n"
    for chunk in chunks:
        # Memory: the fields of the chunk, then its records, then its pieces; each is dropped
        # once the next is made, so the chunk's text is held about twice at most.
        cells = [
            csv_column(c, spreadsheet=spreadsheet)
            for c in zip(*_as_values(chunk, columns), strict=True)
        ]
        del chunk
        lines = _records(cells)
        del cells
        yield from _pieces(lines, "\r\n", tail="\r\n")


def _json_rows(columns, chunk) -> list[str]:
    return [json_text(dict(zip(columns, row, strict=True))) for row in _as_values(chunk, columns)]


def _json_pieces(columns, chunks, spreadsheet: bool) -> Iterator[str]:
    first = True
    for chunk in chunks:
        lines = _json_rows(columns, chunk)
        del chunk  # written out from ``lines`` (see _csv_pieces)
        if lines:
            yield from _pieces(lines, ",\n", lead="[\n" if first else ",\n")
            first = False
    yield "[]\n" if first else "\n]\n"


def _jsonl_pieces(columns, chunks, spreadsheet: bool) -> Iterator[str]:
    for chunk in chunks:
        lines = _json_rows(columns, chunk)
        del chunk
        yield from _pieces(lines, "\n", tail="\n")


_ENCODERS = {"csv": _csv_pieces, "json": _json_pieces, "jsonl": _jsonl_pieces}


def _encoded(pieces: Iterable[str], *, label: str) -> Iterator[bytes]:
    """Each piece as one UTF-8 write."""
    try:
        for piece in pieces:
            if piece:
                yield piece.encode("utf-8", "replace")
    except Exception:
        # Headers are gone: the server can only cut the connection, which clients see as an
        # incomplete download. Say why in the log.
        logger.exception("%s stopped mid-stream", label)
        raise


def buffered(pieces: Iterable[str], *, label: str = "export") -> Iterator[bytes]:
    """UTF-8 bytes in writes of about ``FLUSH_BYTES``; an empty piece flushes (chunk ends)."""

    def joined() -> Iterator[str]:
        buffer: list[str] = []
        size = 0
        for piece in pieces:
            if piece:
                buffer.append(piece)
                size += len(piece)
                if size < FLUSH_BYTES:
                    continue
            if buffer:
                yield "".join(buffer)
                buffer, size = [], 0
        if buffer:
            yield "".join(buffer)

    return _encoded(joined(), label=label)


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

    A chunk is a list of dicts keyed by ``columns``, or of sequences in ``columns`` order.

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
    response = StreamingHttpResponse(_encoded(pieces, label=name), content_type=FORMATS[fmt])
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


def iso_in(value, zone) -> str | None:
    """ISO 8601 of an epoch in ``zone`` (what ``timefmt.iso`` gives, without its per-call
    zone lookup); None for NULL or an out-of-range value."""
    if value is None:
        return None
    try:
        return dt.datetime.fromtimestamp(float(value), zone).isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError, TypeError):
        return None


# "MM:SS" of each second of an hour.
_MINUTES_SECONDS = [f"{m:02d}:{s:02d}" for m in range(60) for s in range(60)]
_EPOCH = dt.datetime(1970, 1, 1)
# Epochs of years 1..9999 with a margin: outside, or NaN, take the slow path.
_ISO_RANGE = (-62_000_000_000.0, 253_000_000_000.0)


def iso_converter(zone) -> Callable[[object], str | None]:
    """``iso_in(value, zone)``, about twice as fast for a column of times (measured 0.7 µs a
    value instead of 1.6 µs): the UTC offset is looked up once per hour of the epoch,
    local hours are formatted once, and minutes and seconds come from a table.

    Exact, DST zones included: an hour is cached only when the offset is the same at both
    ends of it and a whole number of minutes (else every value of it takes ``iso_in``), and
    the second is the one ``datetime.fromtimestamp`` gives (rounded to the microsecond, half
    to even, then cut).  NOTE: this assumes no zone changes its offset twice within one hour
    (none in tzdata does).  The caches hold at most a few thousand entries."""
    offsets: dict[int, tuple[int, str] | None] = {}
    hours: dict[int, str] = {}
    low, high = _ISO_RANGE

    def offset_of(hour: int) -> tuple[int, str] | None:
        if len(offsets) > 4096:
            offsets.clear()
            hours.clear()
        try:
            first = dt.datetime.fromtimestamp(hour * 3600, zone)
            last = dt.datetime.fromtimestamp(hour * 3600 + 3599, zone)
        except (OverflowError, OSError, ValueError):
            offsets[hour] = None
            return None
        offset = first.utcoffset()
        if offset is None or offset != last.utcoffset() or offset.total_seconds() % 60:
            offsets[hour] = None
            return None
        # "+HH:MM" as isoformat writes it.
        offsets[hour] = entry = (
            int(offset.total_seconds()),
            first.isoformat(timespec="seconds")[19:],
        )
        return entry

    def iso(value) -> str | None:
        kind = value.__class__
        if (kind is float or kind is int) and low < value < high:
            second = int(value)
            if kind is float and not 0 <= value - second < 0.999999:
                # Negative, or within a microsecond of the next second: round like
                # fromtimestamp (microseconds half to even, carried into the second).
                fraction, whole = math.modf(value)
                micro = round(fraction * 1e6)
                second = int(whole) + (micro >= 1_000_000) - (micro < 0)
            hour = second // 3600
            entry = offsets[hour] if hour in offsets else offset_of(hour)
            if entry is not None:
                local_hour, within = divmod(second + entry[0], 3600)
                prefix = hours.get(local_hour)
                if prefix is None:
                    prefix = hours[local_hour] = (
                        _EPOCH + dt.timedelta(hours=local_hour)
                    ).isoformat()[:14]
                return prefix + _MINUTES_SECONDS[within] + entry[1]
        return iso_in(value, zone)

    return iso


@dataclass(frozen=True)
class TablePlan:
    """A table export: the ``values_list()`` queryset it reads and how rows become lines.

    A fetched row holds ``fields`` (export fields, read from annotations where they differ)
    followed by any keyset key not among them; ``columns`` is the header."""

    queryset: object
    keyset: Keyset
    fields: list[str]
    columns: list[str]
    to_rows: Callable[[list[tuple]], list[tuple]]
    key_positions: tuple[int, ...]
    text_positions: tuple[int, ...]

    def chunks(self, chunk_size: int | None = None) -> Iterator[list[tuple]]:
        """Lists of output rows (tuples in ``columns`` order), one query per list."""
        return keyset_chunks(
            self.queryset,
            self.keyset,
            to_rows=self.to_rows,
            keys_of=self._keys_of,
            text_size=self._text_size,
            chunk_size=chunk_size or EXPORT_CHUNK_ROWS,
            max_chunk_bytes=EXPORT_CHUNK_BYTES,
        )

    def _keys_of(self, row: tuple) -> list:
        return [row[i] for i in self.key_positions]

    def _text_size(self, rows: list[tuple]) -> int:
        return sum(
            len(value)
            for i in self.text_positions
            for value in [row[i] for row in rows]
            if value.__class__ is str
        )


def table_plan(
    queryset,
    keyset: Keyset,
    fields: Sequence[str],
    sources: dict[str, str] | None = None,
    *,
    redacted: Iterable[str] = (),
    text_fields: Iterable[str] | None = None,
) -> TablePlan:
    """The plan of an export of ``fields`` of ``queryset`` in ``keyset`` order.

    ``sources`` maps a field to the name it is selected as (an annotation); ``redacted``
    fields get secrets replaced by markers (:func:`sessions_app.redaction.redact_many`, a
    column of a chunk at a time); ``text_fields`` are those whose size bounds the next chunk
    (all of them by default).  Times become ISO 8601 in ``TIME_ZONE`` followed by the raw
    epoch, computed a column at a time (:func:`iso_converter`)."""
    fields = list(fields)
    sources = sources or {}
    selected = [sources.get(f, f) for f in fields]
    names = _with_keys(selected, keyset)
    count = len(fields)
    times = frozenset(i for i, f in enumerate(fields) if f in TIME_FIELDS)
    redacted = set(redacted)
    hide = frozenset(i for i, f in enumerate(fields) if f in redacted)
    if not redaction_enabled():
        hide = frozenset()
    # Resolved once: looking the zone up per value cost a third of the time of a row.
    iso = iso_converter(timezone.get_current_timezone())

    def to_rows(fetched: list[tuple]) -> list[tuple]:
        # A column at a time: zip() transposes in C, and the redactor gates a whole column
        # in one pass.  Keys appended for the keyset are dropped.
        columns = list(zip(*fetched, strict=True))[:count]
        out: list = []
        for i, column in enumerate(columns):
            if i in hide:
                column = redact_many(column)
            if i in times:
                out.append(list(map(iso, column)))
            out.append(column)
        return list(zip(*out, strict=True))

    wanted = set(fields if text_fields is None else text_fields)
    return TablePlan(
        queryset=queryset.values_list(*names),
        keyset=keyset,
        fields=fields,
        columns=output_columns(fields),
        to_rows=to_rows,
        key_positions=tuple(names.index(k) for k, _ in keyset.keys),
        text_positions=tuple(i for i, f in enumerate(fields) if f in wanted),
    )


def _present(queryset, fields: Sequence[str], virtual: Iterable[str] = ()) -> list[str]:
    """The fields this file has (``virtual`` ones are computed and always there)."""
    meta = queryset.model._meta
    virtual = set(virtual)
    return [f for f in fields if f in virtual or queryset.has_column(meta.get_field(f).column)]


def _with_keys(names: list[str], keyset: Keyset) -> list[str]:
    return names + [k for k, _ in keyset.keys if k not in names]


def _stream_plan(request, plan: TablePlan, fmt: str, filename: str, *, preview: bool = False):
    return stream_export(
        fmt=fmt,
        columns=plan.columns,
        chunks=plan.chunks(),
        filename=filename,
        spreadsheet=wants_spreadsheet(request),
        preview_only=preview,
    )


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
    # model_config can carry a base URL with credentials: redacted like the session page.
    plan = table_plan(qs, keyset, _present(qs, SESSION_FIELDS), redacted=("model_config",))
    return _stream_plan(request, plan, fmt, export_filename("sessions", filename_bits, fmt))


def message_rows(queryset, keyset: Keyset, *, preview: bool) -> TablePlan:
    """The plan of a message export: its columns and how fetched rows become export rows.

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
            # NUL-safe: multimodal content starts with a NUL that stops SQLite's substr().
            f"export_cut_{name}": ContentHead(name, PREVIEW_CHARS)
            for name in LONG_MESSAGE_FIELDS
        }
        qs = qs.annotate(**cuts)
        sources.update({name: f"export_cut_{name}" for name in LONG_MESSAGE_FIELDS})
    return table_plan(
        qs,
        keyset,
        fields,
        sources,
        redacted=LONG_MESSAGE_FIELDS,
        text_fields=LONG_MESSAGE_FIELDS,
    )


def export_messages(
    request, queryset, keyset: Keyset, *, filename_bits=()
) -> StreamingHttpResponse:
    """The messages of ``queryset`` in ``keyset`` order; full content unless ``_preview=1``."""
    fmt = requested_format(request) or "csv"
    preview = wants_preview(request)
    plan = message_rows(queryset, keyset, preview=preview)
    filename = export_filename("messages", filename_bits, fmt, preview=preview)
    return _stream_plan(request, plan, fmt, filename, preview=preview)


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
