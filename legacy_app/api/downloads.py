"""Datasette's CSV: ``/state/<table>.csv`` (one page) and ``?_stream=on`` (every row).

The header is the page's columns in the table's order (``rowid`` first for a table without a
primary key, ``<column>_label`` after each ``_labels`` column); values are the stored ones —
epochs stay numbers — written as Python's ``csv`` module writes them (minimal quoting, CRLF).
``_stream=on`` sends every matching row, read in chunks of 1,000 that each resume after the
last row sent, so memory stays flat whatever the table's size (``_next`` cannot be combined
with it, as in Datasette).  ``_dl=1`` makes it an attachment (``text/csv``), otherwise it is
``text/plain`` as Datasette served it; ``_header=off`` drops the header line.

For scripts the cells are raw.  ``_bom=1`` (the explorer's spreadsheet option, as on its own
exports) adds a UTF-8 BOM and defuses cells a spreadsheet would run as formulas.
"""

from __future__ import annotations

import itertools

from django.http import StreamingHttpResponse

from sessions_app.exports import buffered, csv_line, csv_lines

from . import tables
from .errors import ApiError
from .params import first, parse
from .tokens import key_path


def _cells(columns, rows, expanded, blob_url):
    """Rows ready for the CSV writer: labels split in two cells, blobs as their URL."""
    if not expanded and not any(isinstance(v, bytes | dict) for r in rows for v in r):
        return rows
    out = []
    for row in rows:
        cells = []
        for column, value in zip(columns, row, strict=True):
            if isinstance(value, bytes):
                value = blob_url(row, column)
            if column in expanded:
                if value is None:
                    cells += ["", ""]
                elif isinstance(value, dict):
                    cells += [value["value"], value["label"]]
                else:
                    cells += [value, ""]
            else:
                cells.append(value["value"] if isinstance(value, dict) else value)
        out.append(cells)
    return out


def _header(columns, expanded):
    out = []
    for column in columns:
        out.append(column)
        if column in expanded:
            out.append(f"{column}_label")
    return out


def csv_response(request, info, *, user):
    """The CSV of a table URL (one page, or every row with ``_stream=on``)."""
    req = parse(info, request.GET)
    if req.stream and req.next:
        raise ApiError("_next not allowed for CSV streaming")
    spreadsheet = first(request.GET, "_bom", "") in ("1", "on", "true", "yes")
    if req.stream:
        pages = tables.chunks(request, info, user=user)
        columns, rows = next(pages)
        expanded = []
        if req.labels:
            expanded = [
                c
                for c in req.labels
                if c in columns and any(c == fk.column for fk in info.foreign_keys)
            ]
        batches = itertools.chain([rows], (r for _c, r in pages))
    else:
        page = tables.table_page(request, info, user=user, with_extras=False)
        columns, expanded = page.columns, page.data["expanded_columns"]
        batches = iter([page.rows])
    key = ["rowid"] if info.use_rowid else list(info.pks)

    def blob_url(row, column):
        values = dict(zip(columns, row, strict=True))
        path = f"/state/{info.name}/{key_path([values.get(k) for k in key])}.blob"
        return request.build_absolute_uri(f"{path}?_blob_column={column}")

    def pieces():
        lead = "\ufeff" if spreadsheet else ""
        if req.header:
            yield lead + csv_line(_header(columns, expanded)) + "\r\n"
        elif lead:
            yield lead
        for batch in batches:
            if batch:
                lines = csv_lines(
                    _cells(columns, batch, expanded, blob_url), spreadsheet=spreadsheet
                )
                yield "\r\n".join(lines) + "\r\n"
            yield ""  # flush a chunk as soon as it is written

    content_type = "text/plain; charset=utf-8"
    response = StreamingHttpResponse(buffered(pieces(), label=f"{info.name}.csv"))
    if req.download:
        content_type = "text/csv; charset=utf-8"
        response["Content-Disposition"] = f'attachment; filename="{info.name}.csv"'
    response["Content-Type"] = content_type
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = "private, no-store"
    return response


def sql_csv_response(request, data: dict):
    """``/state.csv?sql=…``: the query's columns and rows."""
    download = bool(first(request.GET, "_dl"))
    header = first(request.GET, "_header") != "off"
    spreadsheet = first(request.GET, "_bom", "") in ("1", "on", "true", "yes")
    rows = [[v.hex() if isinstance(v, bytes) else v for v in r] for r in data["rows"]]

    def pieces():
        if header:
            yield ("\ufeff" if spreadsheet else "") + csv_line(data["columns"]) + "\r\n"
        if rows:
            yield "\r\n".join(csv_lines(rows, spreadsheet=spreadsheet)) + "\r\n"

    response = StreamingHttpResponse(buffered(pieces(), label="state.csv"))
    response["Content-Type"] = (
        "text/csv; charset=utf-8" if download else "text/plain; charset=utf-8"
    )
    if download:
        response["Content-Disposition"] = 'attachment; filename="state.csv"'
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = "private, no-store"
    return response
