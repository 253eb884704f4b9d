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

Speed (at least 60 MB/s for a million messages, redaction on): the per-row Python work is
what costs, so a chunk is handled a column at a time.  Rows are fetched as tuples with one
``fetchall`` (:func:`.chunks.fetched_rows`: the ORM's own iteration reads 100 rows a call and
converts row by row; its conversions, the redacted metadata, are made a column at a time),
times become ISO 8601 through a per-hour cache (:func:`iso_converter`), secrets are looked for
a column at a time (:func:`redaction.redact_many`, the gates scanned once over
a whole column), CSV is written a column at a time with the same bytes as
``csv.writer`` (:func:`csv_lines`; formulas are found from a column's first characters), and
lines are encoded and sent in pieces of about ``FLUSH_BYTES``.  1,000 rows a chunk measured as
fast as 2,000, 5,000 or 10,000 (more rows only hold more memory: a chunk's text is held about
twice while it is written out).

Options in the query string, read by :mod:`.request`:

``_export=csv|json|jsonl``  the format (anything else shows the page with a note);
(CSV, always)               cells that start with ``= + - @`` (or a tab/CR) prefixed
                            with ``'`` against formula injection;
``_raw=1``                  CSV cells exactly as stored (for scripts; JSON/JSONL are
                            always raw);
``_bom=1``                  CSV for spreadsheets: also a UTF-8 BOM, NUL characters
                            dropped;
``_preview=1``              long text (content, reasoning, tool calls) cut in SQL to
                            ``PREVIEW_CHARS`` instead of the full value.

Secrets in message text are redacted as on the transcript page (``redaction``,
``HERMES_REDACT_SECRETS``): a download never shows what the page hides.  Who may download at
all is decided by ``accounts_app.roles`` (``_export`` needs the export capability).

The modules, one role each:

``request``   the format and options asked for, and the file's name;
``chunks``    rows of a queryset in keyset order, one short statement per chunk;
``plans``     which columns a session or message export has and how its rows are made;
``isotime``   epoch to ISO 8601 for a column of times (measured: change with the benchmark);
``csv_fast``  the CSV writer (measured: change with the benchmark);
``encoders``  chunks of rows as CSV, JSON or JSONL text, in pieces of about ``FLUSH_BYTES``;
``http``      the streamed response and the 400 for invalid filters.

The API other views call (keep these names; this package exports them):

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

from .chunks import keyset_chunks
from .csv_fast import FORMULA_STARTS, csv_lines, neutralise_formula
from .encoders import json_text
from .http import buffered, invalid_filters_response, stream_export
from .isotime import iso_converter
from .plans import (
    TablePlan,
    export_messages,
    export_session_list,
    export_sessions,
    message_rows,
    session_rows,
    table_plan,
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
    "export_sessions",
    "invalid_filters_response",
    "iso_converter",
    "json_text",
    "keyset_chunks",
    "message_rows",
    "neutralise_formula",
    "FORMULA_STARTS",
    "requested_format",
    "session_rows",
    "stream_export",
    "table_plan",
    "wants_preview",
    "wants_raw",
    "wants_spreadsheet",
]
