"""Chunks of rows as CSV, JSON or JSONL text, in pieces of about ``FLUSH_BYTES`` characters.

Each line is built in one join and lines are joined into pieces the response sends as one
write each; CSV records come from :mod:`.csv_fast`.  The piece sizes are measured: change them
only with the benchmark.
"""

from __future__ import annotations

import bisect
import itertools
import json
import math
import operator
from collections.abc import Iterator

from .csv_fast import SEMICOLON_STYLE, csv_column, csv_line, records, semicolon_lines

# Characters encoded and sent per write: as fast as 256 or 512 KiB (measured), with a lower RSS.
FLUSH_BYTES = 128 * 1024


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
        part = lines[start:stop]
        if start == 0 and lead:
            part[0] = lead + part[0]
        end = tail if stop == len(lines) else sep
        # The end written as one more (empty) line where it can be: no copy of the piece.
        if end == sep:
            part.append("")
            yield sep.join(part)
        else:
            yield sep.join(part) + end
        done, start = ends[stop - 1], stop


def _csv_pieces(columns, chunks, style: str) -> Iterator[str]:
    semicolon = style == SEMICOLON_STYLE
    head = semicolon_lines([columns])[0] if semicolon else csv_line(columns)
    yield ("\ufeff" if style in ("spreadsheet", SEMICOLON_STYLE) else "") + head + "\r\n"
    for chunk in chunks:
        # Each form of the chunk is dropped once the next is made: its text is held twice at most.
        if semicolon:
            lines = semicolon_lines(_as_values(chunk, columns))
            del chunk
        else:
            cells = [
                csv_column(c, style=style) for c in zip(*_as_values(chunk, columns), strict=True)
            ]
            del chunk
            lines = records(cells)
            del cells
        yield from _pieces(lines, "\r\n", tail="\r\n")


def _json_rows(columns, chunk) -> list[str]:
    return [json_text(dict(zip(columns, row, strict=True))) for row in _as_values(chunk, columns)]


def _json_pieces(columns, chunks, style: str) -> Iterator[str]:
    first = True
    for chunk in chunks:
        lines = _json_rows(columns, chunk)
        del chunk  # written out from ``lines`` (see _csv_pieces)
        if lines:
            yield from _pieces(lines, ",\n", lead="[\n" if first else ",\n")
            first = False
    yield "[]\n" if first else "\n]\n"


def _jsonl_pieces(columns, chunks, style: str) -> Iterator[str]:
    for chunk in chunks:
        lines = _json_rows(columns, chunk)
        del chunk
        yield from _pieces(lines, "\n", tail="\n")


# ``ENCODERS[fmt](columns, chunks, style)``: the text of a whole export, in pieces (``style``:
# how CSV cells are written, see ``csv_fast``).
ENCODERS = {"csv": _csv_pieces, "json": _json_pieces, "jsonl": _jsonl_pieces}
