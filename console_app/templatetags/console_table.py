"""The console's result rows as HTML, built in Python with ``html.escape`` (measured: the template
engine took about 0.17 ms a cell, five seconds for 1,000 rows of 30 columns).
"""

from __future__ import annotations

from html import escape

from django import template
from django.utils.safestring import SafeString, mark_safe

register = template.Library()


def _cell(cell: dict) -> str:
    if cell.get("null"):
        return '<td><span class="muted">NULL</span></td>'
    if "blob" in cell:
        return f'<td><span class="muted">‹blob, {cell["blob"]:,} bytes›</span></td>'
    text = escape(cell["text"])
    if cell.get("number"):
        return f'<td class="num">{text}</td>'
    if cell.get("cut"):
        note = f"{cell['cut']:,} characters; the download has them all"
        return f'<td>{text}<span class="muted"> … ({note})</span></td>'
    return f"<td>{text}</td>"


@register.filter
def result_rows(rows: list[list[dict]]) -> SafeString:
    """``<tr>`` elements of the display cells made by ``services.display_cell``."""
    return mark_safe(  # noqa: S308 - every value above is escaped
        "\n".join("<tr>" + "".join(map(_cell, row)) + "</tr>" for row in rows)
    )
