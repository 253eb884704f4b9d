"""Exports: any table view as CSV, JSON or JSONL, streamed in keyset-paged chunks.

A table URL plus ``?_export=csv|json|jsonl`` downloads the rows of the current filters and
sort, all pages, as a ``StreamingHttpResponse`` fed by one short query per chunk (``WHERE
<keyset> > <last row seen> ORDER BY <keyset> LIMIT n``): memory stays flat, and no read
transaction stays open across chunks (a long one would stop Hermes from recycling its WAL).
The ``hermes`` connection runs in autocommit and each chunk is fetched whole before the next
starts, so SQLite ends each statement's read transaction at once; ``tests/test_exports.py``
checkpoints the WAL between two chunks to prove it.  Chunks of megabyte rows shrink
(``EXPORT_CHUNK_BYTES``), so memory is bounded by bytes too.  The price: an export is not a
snapshot (a row added during a download appears if it sorts after the rows already sent).

Speed (at least 60 MB/s for a million messages, redaction on) comes from handling a chunk a
column at a time: the tuples of one ``values_list()`` statement, ISO times through a per-hour
cache, secrets redacted per column, CSV written per column with ``csv.writer``'s bytes; 1,000
rows a chunk measured as fast as 10,000, and reading the rows past the ORM's per-row
conversions less than 10% faster (not worth a hand-made reader).

Query-string options are read by :mod:`.request` (``_raw=1`` CSV as stored, ``_bom=1`` for
spreadsheets, ``_preview=1`` long text cut in SQL); CSV cells are otherwise defused against
formula injection.  Secrets are redacted as on the pages, and ``accounts_app.roles`` decides
who may export.

Modules: ``request`` (format, options, file name), ``chunks`` (keyset chunks), ``plans``
(columns and rows of a session or message export), ``isotime`` and ``csv_fast`` (measured:
change them with the benchmark), ``encoders`` (CSV/JSON/JSONL text), ``http`` (the streamed
response).  The names imported below are the API other views call.
"""

from .chunks import keyset_chunks
from .csv_fast import csv_lines, neutralise_formula
from .encoders import json_text
from .http import buffered, invalid_filters_response, stream_export
from .plans import (
    TablePlan,
    export_messages,
    export_session_list,
    message_rows,
    session_rows,
)
from .request import (
    export_filename,
    requested_format,
    wants_preview,
    wants_raw,
    wants_spreadsheet,
)

__all__ = [
    "TablePlan",
    "buffered",
    "csv_lines",
    "export_filename",
    "export_messages",
    "export_session_list",
    "invalid_filters_response",
    "json_text",
    "keyset_chunks",
    "message_rows",
    "neutralise_formula",
    "requested_format",
    "session_rows",
    "stream_export",
    "wants_preview",
    "wants_raw",
    "wants_spreadsheet",
]
