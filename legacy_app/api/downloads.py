"""Datasette's CSV: ``/state/<table>.csv`` (one page) and ``?_stream=on`` (every row, in
chunks that resume after the last row sent, not with ``_next``, as in Datasette), the stored
values as Python's ``csv`` writes them.
"""

from __future__ import annotations

import itertools

from django.http import StreamingHttpResponse

from hermes_explorer import host_slots, store
from sessions_app.exports import buffered, csv_lines, wants_raw, wants_spreadsheet
from sessions_app.exports.csv_fast import csv_column, csv_line, records
from sessions_app.exports.http import BUSY, export_slot

from . import tables
from .errors import ApiError
from .params import first, parse
from .tokens import key_path


def _with_labels(columns, values, expanded):
    """Each ``_labels`` column as two: the value and its label (empty when it has none)."""
    out = []
    for name, column in zip(columns, values, strict=True):
        if name in expanded:
            out.append([v["value"] if isinstance(v, dict) else v for v in column])
            out.append([v["label"] if isinstance(v, dict) else "" for v in column])
        else:
            out.append(column)
    return out


def _style(request) -> str:
    """Formulas defused unless ``_raw=1`` (Datasette's bytes); ``_bom=1`` adds a BOM."""
    return "spreadsheet" if wants_spreadsheet(request) else "raw" if wants_raw(request) else "safe"


def _blobs(columns, values, key, blob_url):
    """A blob cell becomes the URL Datasette gave for it (checked a column at a time)."""
    for i, column in enumerate(values):
        if bytes in set(map(type, column)):
            keys = [values[columns.index(k)] for k in key]
            values[i] = [
                blob_url([k[n] for k in keys], columns[i]) if isinstance(v, bytes) else v
                for n, v in enumerate(column)
            ]
    return values


def csv_response(request, info, *, user):
    """The CSV of a table URL (one page, or every row with ``_stream=on``)."""
    req = parse(info, request.GET)
    if req.stream and req.next:
        raise ApiError("_next not allowed for CSV streaming")
    style = _style(request)
    lookup = tables.labels_for(store.shape().catalog, info, user)

    def blob_url(key_values, column):
        path = f"/state/{info.name}/{key_path(key_values)}.blob"
        return request.build_absolute_uri(f"{path}?_blob_column={column}")

    if req.stream:
        # A long download, bounded with the other exports of the host.
        try:
            held = export_slot()
        except host_slots.Busy:
            raise ApiError(BUSY, status=429, title="Busy") from None
        chunks = tables.stream(request, info, user=user)
    else:  # one page: the first chunk of a page's size
        held = None
        chunks = itertools.islice(tables.stream(request, info, user=user, chunk_size=req.size), 1)
    try:
        # The first chunk is read now: a refusal or a timeout is still a proper error answer.
        columns, values = next(chunks)
    except BaseException:
        if held is not None:
            held.release()
        raise
    chunks = itertools.chain([(columns, values)], chunks)
    wanted = req.labels or []
    expanded = tables.expand_labels(columns, values, wanted, lookup)
    header = [n for c in columns for n in ([c, f"{c}_label"] if c in expanded else [c])]

    def pieces():
        lead = "\ufeff" if style == "spreadsheet" else ""
        yield lead + (csv_line(header) + "\r\n" if req.header else "")  # (empty: not written)
        for n, (names, chunk) in enumerate(chunks):
            if n:  # the first chunk was expanded above
                tables.expand_labels(names, chunk, wanted, lookup)
            if not chunk or not chunk[0]:
                continue
            chunk = _with_labels(names, _blobs(names, chunk, req.key, blob_url), expanded)
            lines = records([csv_column(column, style=style) for column in chunk])
            lines.append("")  # the last line end, without copying the chunk's text again
            yield "\r\n".join(lines)
            del chunk
            yield ""  # flush a chunk as soon as it is written

    return _response(pieces(), f"{info.name}.csv", download=req.download, held=held)


def _response(pieces, filename: str, *, download: bool, held=None) -> StreamingHttpResponse:
    """``text/csv`` as an attachment with ``_dl=1``, else ``text/plain``; a stream keeps
    ``held`` (its export slot) until it ends or is closed."""
    body = buffered(pieces, label=filename, kind="old-api-csv")
    response = StreamingHttpResponse(host_slots.Holding(body, held) if held else body)
    response["Content-Type"] = f"text/{'csv' if download else 'plain'}; charset=utf-8"
    if download:
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = "private, no-store"
    return response


def sql_csv_response(request, data: dict):
    """``/state.csv?sql=…``: the query's columns and rows (blobs arrive as hex)."""
    header = first(request.GET, "_header") != "off"
    style = _style(request)

    def pieces():
        if header:
            lead = "\ufeff" if style == "spreadsheet" else ""
            yield lead + csv_line(data["columns"]) + "\r\n"
        if data["rows"]:
            yield "\r\n".join(csv_lines(data["rows"], style=style)) + "\r\n"

    return _response(pieces(), "state.csv", download=bool(first(request.GET, "_dl")))
