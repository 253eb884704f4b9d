"""The CSV writer of the exports: measured; change only with the benchmark.

CSV is written here rather than by ``csv.writer``, which copies each character into its own
buffer (about 60 MB/s, measured): a chunk is written a column at a time, and a column of
numbers or of short text with nothing to quote costs a few scans instead of a call per cell.
The output is the same as ``csv.writer``'s, byte for byte (``tests/test_exports.py``
compares); time any change on a full export of a large store before and after.
"""

from __future__ import annotations

from collections.abc import Sequence

# Cells a spreadsheet would run as a formula (OWASP "CSV injection"). Every CSV a spreadsheet
# may open defuses its cells with ``neutralise_formula``; ``raw`` CSV (asked for with
# ``_raw=1``, for scripts) keeps them as stored.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# How a CSV is written: "safe" (formulas defused), "spreadsheet" (also a BOM, and NULs
# dropped), "raw" (every value as stored), and "spreadsheet_semicolon": the spreadsheet file
# for a French page, with ``;`` between fields and a decimal comma, which is what a French
# Excel splits into columns on a double-click.
CSV_STYLES = ("safe", "spreadsheet", "raw", "spreadsheet_semicolon")
SEMICOLON_STYLE = "spreadsheet_semicolon"


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


_NONE = type(None)
_NUMBERS = frozenset({int, float})
# Longer text columns (content) nearly always need quotes: checked value by value, no join.
_SCANNED_COLUMN = 64 * 1024


def csv_column(values: Sequence, *, style: str = "safe") -> Sequence[str]:
    """``csv_cell`` of each value of one column, cheaply for the common columns: numbers
    (``str``), and short text with nothing to quote (four scans of the joined column, then
    returned as it is)."""
    if style == "spreadsheet":
        return [csv_cell(neutralise_formula(v)) for v in values]
    kinds = set(map(type, values))
    if style == "safe" and str in kinds:
        # One C-level test per text cell; only a column that holds a formula is rewritten.
        starts = FORMULA_STARTS
        if any(v.startswith(starts) for v in values if v.__class__ is str):
            values = ["'" + v if v.__class__ is str and v.startswith(starts) else v for v in values]
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


def csv_lines(rows: list[Sequence], *, style: str = "safe") -> list[str]:
    """The CSV records of ``rows`` (without line ends), encoded a column at a time."""
    return records([csv_column(c, style=style) for c in zip(*rows, strict=True)])


def records(cells: list[Sequence[str]]) -> list[str]:
    """Records (without line ends) from the encoded cells of each column."""
    if not cells:
        return []
    if len(cells) == 1:
        return [c or '""' for c in cells[0]]  # a lone empty field, as csv.writer has it
    return list(map(",".join, zip(*cells, strict=True)))


def semicolon_cell(value) -> str:
    """One field of the semicolon spreadsheet CSV: formulas defused, a decimal comma in
    floats, quoted when it holds ``;``, a quote or a line break."""
    if value is None:
        return ""
    if value.__class__ is float:
        return repr(value).replace(".", ",")
    if value.__class__ is not str:
        return str(value)
    value = neutralise_formula(value)
    if '"' in value:
        return '"' + value.replace('"', '""') + '"'
    if ";" in value or "\n" in value or "\r" in value:
        return '"' + value + '"'
    return value


def semicolon_lines(rows: list[Sequence]) -> list[str]:
    """The records (without line ends) of the semicolon spreadsheet CSV."""
    lines = [";".join(map(semicolon_cell, row)) for row in rows]
    return [line or '""' for line in lines] if rows and len(rows[0]) == 1 else lines
