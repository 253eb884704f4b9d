"""Server-rendered inline SVG charts: no JavaScript, no CDN, readable in light and dark themes.

Shapes carry classes (``bar``, ``k-input``, ``heat-3``…) that ``explorer.css`` paints with the
theme's variables; text uses ``currentColor``.  Every chart has a ``<title>`` and ``<desc>``
summarising it.  Text from the state.db is escaped here, as this module builds markup.
"""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext, ngettext

from sessions_app.formatting import (
    chart_day_label,
    compact,
    date_format,
    month_text,
)

_ids = itertools.count(1)

# Plot geometry, in SVG user units (the SVG scales to its container).
WIDTH = 720  # time series: full page width
BAR_WIDTH = 560  # horizontal bars: half a page
ROW_HEIGHT = 22
LABEL_WIDTH = 170
VALUE_WIDTH = 70


def _num(value: float) -> str:
    """A coordinate: short, and never in exponent notation."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _open_svg(uid: str, title: str, desc: str, width: float, height: float, role: str) -> str:
    return (
        f'<svg class="chart-svg" viewBox="0 0 {_num(width)} {_num(height)}" '
        f'width="{_num(width)}" height="{_num(height)}" role="{role}" '
        f'aria-labelledby="{uid}-t {uid}-d" preserveAspectRatio="xMinYMin meet" '
        f'xmlns="http://www.w3.org/2000/svg">'
        f'<title id="{uid}-t">{escape(title)}</title><desc id="{uid}-d">{escape(desc)}</desc>'
    )


def _link(href: str | None, label: str, inner: str) -> str:
    if not href:
        return f"<g>{inner}<title>{escape(label)}</title></g>"
    return (
        f'<a href="{escape(href)}" aria-label="{escape(label)}">'
        f"{inner}<title>{escape(label)}</title></a>"
    )


def _no_data(x: float, y: float) -> str:
    return (
        f'<text class="chart-empty" x="{x}" y="{y}" '
        f'text-anchor="middle">{escape(gettext("No data in this window"))}</text>'
    )


# --- Horizontal bars (models, tools, platforms) --------------------------------------------


@dataclass
class Bar:
    label: str
    value: float
    href: str | None = None
    # Stacked parts as (css class, value); empty means one plain bar.
    parts: Sequence[tuple[str, float]] = field(default_factory=tuple)
    note: str = ""  # extra words for the tooltip, e.g. "38% of calls"


def hbar_chart(
    bars: Sequence[Bar],
    *,
    title: str,
    desc: str,
    fmt: Callable[[float], str] = compact,
    unit: str = "",
) -> SafeString:
    """Horizontal bars, largest first as given; labels left, values right."""
    uid = f"hbar-{next(_ids)}"
    height = max(1, len(bars)) * ROW_HEIGHT + 8
    plot = BAR_WIDTH - LABEL_WIDTH - VALUE_WIDTH
    peak = max((b.value for b in bars), default=0) or 1
    out = [_open_svg(uid, title, desc, BAR_WIDTH, height, "group" if bars else "img")]
    for i, bar in enumerate(bars):
        y = 4 + i * ROW_HEIGHT
        text_y = y + ROW_HEIGHT * 0.68
        label = bar.label if len(bar.label) <= 26 else bar.label[:25] + "…"
        shapes = [
            f'<text class="chart-label" x="{LABEL_WIDTH - 8}" y="{_num(text_y)}" '
            f'text-anchor="end">{escape(label)}</text>'
        ]
        x = LABEL_WIDTH
        parts = [p for p in bar.parts if p[1] > 0] or [("bar", bar.value)]
        for css, value in parts:
            w = plot * max(value, 0) / peak
            if w <= 0:
                continue
            shapes.append(
                f'<rect class="{escape(css)}" x="{_num(x)}" y="{_num(y + 3)}" '
                f'width="{_num(max(w, 1))}" height="{ROW_HEIGHT - 6}" rx="2"/>'
            )
            x += w
        shapes.append(
            f'<text class="chart-value" x="{_num(BAR_WIDTH - 4)}" y="{_num(text_y)}" '
            f'text-anchor="end">{escape(fmt(bar.value))}</text>'
        )
        words = f"{bar.label}: {fmt(bar.value)}{(' ' + unit) if unit else ''}"
        if bar.note:
            words += f" ({bar.note})"
        out.append(_link(bar.href, words, "".join(shapes)))
    if not bars:
        out.append(_no_data(BAR_WIDTH / 2, height / 2 + 4))
    out.append("</svg>")
    return mark_safe("".join(out))  # noqa: S308 - every text and attribute above is escaped


# --- Vertical bars over time (sessions / tokens / cost per day) ----------------------------


@dataclass
class Column:
    label: str  # words for the tooltip ("Mar 3" or "week of Mar 3")
    tick: str  # short axis label
    value: float
    href: str | None = None
    # Stacked parts, bottom first, as (css class, value); empty means one plain bar.
    parts: Sequence[tuple[str, float]] = field(default_factory=tuple)


def column_chart(
    columns: Sequence[Column],
    *,
    title: str,
    desc: str,
    fmt: Callable[[float], str] = compact,
    unit: str = "",
    css: str = "bar",
) -> SafeString:
    """One bar per time bucket, oldest left; a handful of ticks so labels never collide."""
    uid = f"col-{next(_ids)}"
    top, bottom, left, height = 16, 22, 48, 150
    plot_w, plot_h = WIDTH - left - 8, height - top - bottom
    n = max(1, len(columns))
    step = plot_w / n
    gap = min(2.0, step * 0.2)
    peak = max((c.value for c in columns), default=0)
    scale = plot_h / peak if peak > 0 else 0
    out = [_open_svg(uid, title, desc, WIDTH, height, "group" if columns else "img")]
    # Axis: baseline and the peak value, so the reader knows what the tallest bar means.
    out.append(
        f'<line class="chart-axis" x1="{left}" y1="{top + plot_h}" '
        f'x2="{WIDTH - 8}" y2="{top + plot_h}"/>'
        f'<line class="chart-grid" x1="{left}" y1="{top}" x2="{WIDTH - 8}" y2="{top}"/>'
        f'<text class="chart-tick" x="{left - 4}" y="{top + 4}" text-anchor="end">'
        f"{escape(fmt(peak))}</text>"
        f'<text class="chart-tick" x="{left - 4}" y="{top + plot_h}" text-anchor="end">0</text>'
    )
    every = max(1, round(n / 8))
    for i, col in enumerate(columns):
        x = left + i * step
        bar = ""
        if col.value * scale > 0:
            base = top + plot_h
            for part_css, value in [p for p in col.parts if p[1] > 0] or [(css, col.value)]:
                ph = max(value * scale, 1)
                bar += (
                    f'<rect class="{escape(part_css)}" x="{_num(x + gap / 2)}" '
                    f'y="{_num(base - ph)}" width="{_num(max(step - gap, 0.5))}" '
                    f'height="{_num(ph)}"/>'
                )
                base -= ph
        # An invisible full-height target keeps empty days hoverable and clickable.
        target = (
            f'<rect class="chart-hit" x="{_num(x)}" y="{top}" width="{_num(step)}" '
            f'height="{plot_h}"/>'
        )
        words = f"{col.label}: {fmt(col.value)}{(' ' + unit) if unit else ''}"
        out.append(_link(col.href, words, target + bar))
        if i % every == 0:
            out.append(
                f'<text class="chart-tick" x="{_num(x + step / 2)}" y="{height - 6}" '
                f'text-anchor="middle">{escape(col.tick)}</text>'
            )
    if not columns:
        out.append(_no_data(WIDTH / 2, height / 2))
    out.append("</svg>")
    return mark_safe("".join(out))  # noqa: S308 - every text and attribute above is escaped


# --- Weekday × hour heatmap ----------------------------------------------------------------

HEAT_LEVELS = 5


def heat_level(value: int, peak: int) -> int:
    """0 for none, then 1..HEAT_LEVELS by share of the busiest cell."""
    if value <= 0 or peak <= 0:
        return 0
    return max(1, min(HEAT_LEVELS, -(-value * HEAT_LEVELS // peak)))


def heatmap(
    grid: Sequence[Sequence[int]], *, title: str, desc: str, weekdays: Sequence[str]
) -> SafeString:
    """7 rows (Monday first) × 24 hours; darker is busier (five steps, plus empty)."""
    uid = f"heat-{next(_ids)}"
    left, top, cell, gap = 40, 18, 26, 2
    width = left + 24 * cell + 4
    height = top + 7 * cell + 4
    peak = max((max(row) for row in grid), default=0)
    out = [_open_svg(uid, title, desc, width, height, "img")]
    for hour in range(0, 24, 3):
        out.append(
            f'<text class="chart-tick" x="{_num(left + hour * cell + cell / 2)}" y="12" '
            f'text-anchor="middle">{hour:02d}</text>'
        )
    for d, row in enumerate(grid):
        y = top + d * cell
        out.append(
            f'<text class="chart-tick" x="{left - 6}" y="{_num(y + cell * 0.65)}" '
            f'text-anchor="end">{escape(weekdays[d])}</text>'
        )
        for hour, value in enumerate(row):
            level = heat_level(value, peak)
            sessions = ngettext("%(n)s session", "%(n)s sessions", value) % {"n": value}
            out.append(
                f'<rect class="heat heat-{level}" x="{left + hour * cell}" y="{y}" '
                f'width="{cell - gap}" height="{cell - gap}" rx="3">'
                f"<title>{escape(weekdays[d])} {hour:02d}:00–{hour:02d}:59: "
                f"{escape(sessions)}</title></rect>"
            )
    out.append("</svg>")
    return mark_safe("".join(out))  # noqa: S308 - every text and attribute above is escaped


# --- Time buckets ----------------------------------------------------------------------------


@dataclass
class Bucket:
    first: dt.date
    last: dt.date
    label: str
    tick: str
    values: dict[str, float] = field(default_factory=dict)


def _bucket_start(day: dt.date, size: str) -> dt.date:
    if size == "week":
        return day - dt.timedelta(days=day.weekday())
    if size == "month":
        return day.replace(day=1)
    if size == "year":
        return day.replace(month=1, day=1)
    return day


# Days from a bucket's start that reach into the next bucket, never beyond it.
_LENGTH = {"day": 1, "week": 7, "month": 31, "year": 366}


def _next(start: dt.date, size: str) -> dt.date:
    return _bucket_start(start + dt.timedelta(days=_LENGTH[size]), size)


def buckets(
    rows: Sequence[tuple[dt.date, dict[str, float]]], first: dt.date, last: dt.date
) -> tuple[str, list[Bucket]]:
    """Every bucket from ``first`` to ``last`` (empty ones too), with ``rows`` summed in."""
    # Days while they fit; then weeks, months, years: at most ~200 bars.
    size = next((s for s, n in _LENGTH.items() if (last - first).days + 1 <= 200 * n), "year")
    index: dict[dt.date, Bucket] = {}  # by start, in order
    start = _bucket_start(first, size)
    while start <= last:
        end = min(_next(start, size) - dt.timedelta(days=1), last)
        shown = max(start, first)
        if size == "day":
            label, tick = chart_day_label(shown)
        elif size == "week":
            label = gettext("week of %(day)s") % {"day": date_format(shown, "WEEK_DATE_FORMAT")}
            tick = date_format(shown, "DAY_TICK_FORMAT")
        elif size == "month":
            label, tick = month_text(start), date_format(start, "MONTH_TICK_FORMAT")
        else:
            label, tick = str(start.year), str(start.year)
        index[start] = Bucket(first=shown, last=end, label=label, tick=tick)
        start = _next(start, size)
    for day, values in rows:
        bucket = index.get(_bucket_start(day, size))
        if bucket is None:
            continue
        for key, value in values.items():
            bucket.values[key] = bucket.values.get(key, 0) + value
    return size, list(index.values())
