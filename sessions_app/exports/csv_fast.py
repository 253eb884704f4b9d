"""The CSV writer of the exports: measured; change only with the benchmark.

``csv.writer`` copies each character into its own buffer (about 60 MB/s, measured); here a
chunk is written a column at a time, and a column of numbers or plain short text costs a few
scans instead of a call per cell.  The bytes are ``csv.writer``'s (``tests/test_exports.py``
compares).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# Cells a spreadsheet would run as a formula (OWASP "CSV injection"), defused with
# ``neutralise_formula`` in every CSV but ``raw`` (``_raw=1``, for scripts).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# A CSV's style: "safe" (formulas defused), "spreadsheet" (also a BOM, NULs dropped), "raw"
# (values as stored), or "spreadsheet_semicolon" (for a French page: ``;`` between fields and
# a decimal comma, which a French Excel splits into columns).
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
_PLAIN = frozenset({_NONE, str, int, float})
_TEXT = frozenset({_NONE, str})
_ONLY_NONE = frozenset({_NONE})
_EMPTY_FOR_NONE = {None: ""}
# Longer text columns (content) nearly always need quotes: checked value by value, no join.
_SCANNED_COLUMN = 64 * 1024
# A first character that makes a cell a formula, found in the first characters of a column.
_FORMULA_FIRST = re.compile("[=+\\-@\t\r]")


def csv_column(values: Sequence, *, style: str = "safe") -> Sequence[str]:
    """``csv_cell`` of each value of one column, cheaply for numbers and text: short text with
    nothing to quote is checked with four scans of the joined column, other text quoted in one
    expression; formulas are looked for in the column's first characters."""
    if style == "spreadsheet":
        return [csv_cell(neutralise_formula(v)) for v in values]
    kinds = set(map(type, values))
    if kinds <= _NUMBERS:
        return list(map(str, values))
    if kinds <= _TEXT:
        if kinds == _ONLY_NONE:
            return [""] * len(values)
        return _text_column(values, style, _NONE in kinds)
    if kinds <= _PLAIN:
        values = ["" if v is None else v for v in values]
        if kinds <= _NUMBERS | {_NONE}:
            return list(map(str, values))
    return list(map(csv_cell, _defused(values) if style == "safe" else values))


def _text_column(values: Sequence, style: str, empty: bool) -> Sequence[str]:
    """A column of strings (and None where ``empty``)."""
    if style == "safe" and _FORMULA_FIRST.search("".join([v[:1] for v in values if v])):
        starts = FORMULA_STARTS
        values = ["'" + v if v and v.startswith(starts) else v for v in values]
    if sum(map(len, filter(None, values))) <= _SCANNED_COLUMN:
        joined = "\x00".join(filter(None, values))
        if '"' not in joined and "," not in joined and "\n" not in joined and "\r" not in joined:
            return list(map(_EMPTY_FOR_NONE.get, values, values)) if empty else values
    q, qq = '"', '""'
    return [
        ""
        if v is None
        else f'"{v.replace(q, qq)}"'
        if q in v
        else f'"{v}"'
        if "," in v or "\n" in v or "\r" in v
        else v
        for v in values
    ]


def _defused(values: Sequence) -> list:
    starts = FORMULA_STARTS
    return ["'" + v if v.__class__ is str and v.startswith(starts) else v for v in values]


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
    """One field of the semicolon CSV: formulas defused, a decimal comma, quoted when needed."""
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
