"""Exports: any table view as CSV, JSON or JSONL (``?_export=``), streamed in keyset-paged
chunks (:mod:`.chunks`); secrets redacted as on the pages, CSV formulas defused unless
``_raw=1``.  Speed and how it was measured: ``docs/performance.md``.
"""

from .chunks import keyset_chunks
from .csv_fast import csv_lines, neutralise_formula
from .encoders import json_text
from .http import buffered, invalid_filters_response, stream_export
from .plans import (
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
