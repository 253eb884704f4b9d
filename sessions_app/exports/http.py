"""Export responses: the streamed download, its headers, the 400 for invalid filters, and the
429 when the host already streams ``HERMES_EXPORT_CONCURRENCY`` exports (each holds a slot of
:mod:`hermes_explorer.host_slots` from its first query to its end or its client's going)."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable, Iterator

from django.conf import settings
from django.core.exceptions import BadRequest
from django.http import HttpResponse, StreamingHttpResponse

from hermes_explorer import host_slots
from hermes_explorer.metrics import EXPORT_BYTES

from ..querysets import PREVIEW_CHARS
from . import encoders
from .csv_fast import SEMICOLON_STYLE
from .request import FORMATS, safe_filename, wants_raw, wants_spreadsheet

logger = logging.getLogger(__name__)


def _encoded(pieces: Iterable[str], *, label: str, kind: str) -> Iterator[bytes]:
    """Each piece as one UTF-8 write, counted in the metrics' export bytes of ``kind``."""
    try:
        for piece in pieces:
            if piece:
                data = piece.encode("utf-8", "replace")
                EXPORT_BYTES.labels(kind).inc(len(data))
                yield data
    except Exception:
        # Headers are gone: the server can only cut the connection, so say why in the log.
        logger.exception("%s stopped mid-stream", label)
        raise


def buffered(
    pieces: Iterable[str], *, label: str = "export", kind: str = "download"
) -> Iterator[bytes]:
    """UTF-8 bytes in writes of about ``FLUSH_BYTES``; an empty piece flushes (chunk ends)."""

    def joined() -> Iterator[str]:
        flush = encoders.FLUSH_BYTES
        buffer: list[str] = []
        size = 0
        for piece in pieces:
            if piece:
                buffer.append(piece)
                size += len(piece)
                if size < flush:
                    continue
            if buffer:
                yield "".join(buffer)
                buffer, size = [], 0
        if buffer:
            yield "".join(buffer)

    return _encoded(joined(), label=label, kind=kind)


def stream_export(
    *,
    fmt: str,
    columns: list[str],
    chunks: Iterable[list[dict]],
    filename: str,
    spreadsheet: bool = False,
    raw: bool = False,
    preview_only: bool = False,
) -> StreamingHttpResponse:
    """A download of ``chunks`` (lists of dicts keyed by ``columns``, or of sequences in
    ``columns`` order) as ``fmt``; ``preview_only`` marks the file as holding cut text."""
    if fmt not in FORMATS:
        raise BadRequest(f"Unknown export format {fmt!r}: use csv, json or jsonl.")
    try:
        held = export_slot()
    except host_slots.Busy:
        response = _plain(BUSY, status=429)
        response["Retry-After"] = str(host_slots.RETRY_SECONDS)
        return response
    iterator = iter(chunks)
    try:
        # Run the first query now: a bad filter or a timeout still gets a proper error page.
        first = next(iterator, None)
    except BaseException:
        held.release()
        raise
    rows = itertools.chain([first] if first is not None else [], iterator)
    name = safe_filename(filename)
    if preview_only and "-preview" not in name:
        stem, _, ext = name.rpartition(".")
        name = f"{stem}-preview.{ext}"
    style = spreadsheet_style() if spreadsheet else "raw" if raw else "safe"
    pieces = encoders.ENCODERS[fmt](list(columns), rows, style)
    response = StreamingHttpResponse(
        host_slots.Holding(_encoded(pieces, label=name, kind=fmt), held),
        content_type=FORMATS[fmt],
    )
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = "private, no-store"
    if preview_only:
        response["X-Export-Preview"] = f"text cut to {PREVIEW_CHARS} characters"
    return response


def stream_for(request, columns, chunks, fmt: str, filename: str, *, preview: bool = False):
    """:func:`stream_export` with the CSV style the request asks for (``_bom``, ``_raw``)."""
    return stream_export(
        fmt=fmt,
        columns=columns,
        chunks=chunks,
        filename=filename,
        spreadsheet=wants_spreadsheet(request),
        raw=wants_raw(request),
        preview_only=preview,
    )


def export_slot() -> host_slots.Held:
    """One of the host's ``HERMES_EXPORT_CONCURRENCY`` export slots, or :class:`Busy`."""
    return host_slots.take("export", settings.HERMES_EXPORT_CONCURRENCY)


BUSY = "Too many downloads are running on this server right now: try again in a moment."


def _plain(text: str, *, status: int) -> HttpResponse:
    """A plain-text answer (scripts read it too)."""
    response = HttpResponse(text + "\n", status=status, content_type="text/plain; charset=utf-8")
    response["X-Content-Type-Options"] = "nosniff"
    return response


def spreadsheet_style() -> str:
    """The spreadsheet CSV of the page's language (``;`` where it writes a decimal comma)."""
    from ..formatting import page_formats

    return SEMICOLON_STYLE if page_formats().decimal == "," else "spreadsheet"


def invalid_filters_response(form) -> HttpResponse:
    """A 400 that says which filters are wrong."""
    lines = [f"{field}: {error}" for field, errors in form.errors.items() for error in errors]
    head = "The export was not made: some filters are not valid."
    return _plain("\n".join([head, "", *lines]), status=400)
