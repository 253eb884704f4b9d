"""Hermes values written for people: model names, counts, money, durations and times.

One definition each, for the template filters, tables and insights.  Each follows the active
language (``1,234.5`` and ``$12.34``; ``1 234,5`` and ``12,34 $US``) with plain string
operations: the list pages call these for every row, where Django's generic formatting costs
several times more.
"""

from __future__ import annotations

import datetime as dt
import functools

from django.utils import translation
from django.utils.dates import MONTHS, MONTHS_AP, WEEKDAYS_ABBR
from django.utils.text import Truncator

# A non-breaking space groups digits and joins a number to its unit in French.
NBSP = "\xa0"


def language() -> str:
    """The language the page is written in (``en``, ``fr``)."""
    return translation.get_language() or "en"


def french() -> bool:
    """Whether the page writes numbers and times the French way."""
    return language().startswith("fr")


# The session list asks the catalog for the same few words ~1,300 times a page; kept per
# language, its server time went from 25 to 15 ms (bench/benchmark.py, the 1M-message store).
def per_language(build):
    """``build(*args)`` (which translates a few words, or a phrase with a count), once per
    language and arguments."""

    @functools.lru_cache(maxsize=1024)
    def built(lang: str, *args):
        with translation.override(lang):
            return build(*args)

    return functools.wraps(build)(lambda *args: built(language(), *args))


def truncate_chars(text, length: int) -> str:
    """At most ``length`` characters, the last one "…" (Django's ``Truncator``)."""
    return Truncator(text).chars(length)


def _frenchify(text: str) -> str:
    """``1,234.5`` → ``1 234,5``."""
    return text.replace(",", NBSP).replace(".", ",")


def number(value, digits: int | None = None) -> str:
    """An integer with grouped thousands, or a float with ``digits`` decimals."""
    text = f"{value:,}" if digits is None else f"{value:,.{digits}f}"
    return _frenchify(text) if french() else text


def decimal(value, digits: int = 1) -> str:
    """A number with ``digits`` decimals and no grouping (percentages, rates)."""
    text = f"{value:.{digits}f}"
    return text.replace(".", ",") if french() else text


def plain(value) -> str:
    """A number as short as it goes (``2.5``, ``3``): seconds of a deadline."""
    text = f"{value:g}"
    return text.replace(".", ",") if french() else text


def datetime_text(moment: dt.datetime, *, seconds: bool = False) -> str:
    """``2026-11-30 14:05`` in English, ``30/11/2026 14:05`` in French (already local)."""
    pattern = "%d/%m/%Y %H:%M" if french() else "%Y-%m-%d %H:%M"
    return moment.strftime(pattern + (":%S" if seconds else ""))


def date_text(day: dt.date) -> str:
    """``2026-11-30`` in English, ``30/11/2026`` in French."""
    return day.strftime("%d/%m/%Y") if french() else day.isoformat()


def short_model(model: str | None, *, missing: str = "") -> str:
    """Hermes's display name for a model: the last ``/`` segment of its route
    (``anthropic/claude-sonnet-4.5`` → ``claude-sonnet-4.5``); ``missing`` when there is none."""
    return (model or missing).split("/")[-1]


def compact(value):
    """1234567 → 1.2M; keeps small numbers exact; "—" when there is no value."""
    if value is None or value == "":
        return "—"
    try:
        n = float(value)
    except (TypeError, ValueError):
        return value
    suffixes = (NBSP + "Md", NBSP + "M", NBSP + "k") if french() else ("B", "M", "k")
    for size, suffix in zip((1e9, 1e6, 1e3), suffixes, strict=True):
        if abs(n) >= size:
            return decimal(n / size) + suffix
    return f"{int(n)}" if n == int(n) else decimal(n)


def usd(value, digits=4) -> str:
    """Dollars with ``digits`` decimals and thousands separators; "—" when there is no value."""
    if value is None or value == "":
        return "—"
    try:
        text = f"{float(value):,.{int(digits)}f}"
    except (TypeError, ValueError):
        return "—"
    if french():
        return _frenchify(text) + NBSP + "$US"
    return "$" + text


def money(value: float) -> str:
    """Dollars to the cent, or to a hundredth of a cent below one dollar (chart labels)."""
    return usd(value, 2 if value >= 1 or value == 0 else 4)


def duration(seconds) -> str:
    """``1h 05m``, ``3m 07s``, ``45s``; "—" when unknown or negative (clock drift)."""
    if seconds is None or seconds == "":
        return "—"
    try:
        seconds = int(float(seconds))
    except (TypeError, ValueError):
        return "—"
    if seconds < 0:
        return "—"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    h, m, s = (NBSP + "h", NBSP + "min", NBSP + "s") if french() else ("h", "m", "s")
    if hours:
        return f"{hours}{h} {minutes:02d}{m}"
    if minutes:
        return f"{minutes}{m} {secs:02d}{s}"
    return f"{secs}{s}"


def seconds_text(value: float | None, comma: bool | None = None) -> str:
    """``4.2 s`` under a minute (``4,2 s`` in French), else ``3m 07s``; "—" when unknown.
    ``comma``: whether the page is French, when the caller knows it (a table of many)."""
    if value is None:
        return "—"
    if abs(value) >= 60:
        return duration(value)
    text = f"{value:.1f}\xa0s"
    return text.replace(".", ",") if (french() if comma is None else comma) else text


def duration_compact(seconds: float) -> str:
    """Hermes's compact duration, as its insights report writes it: 45s, 12m, 3h 5m, 1.5d."""
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes = seconds / 60
    if minutes < 60:
        return f"{minutes:.0f}m"
    hours = minutes / 60
    if hours < 24:
        rest = int(minutes % 60)
        return f"{int(hours)}h {rest}m" if rest else f"{int(hours)}h"
    return f"{hours / 24:.1f}d"


# Day and month names from Django's catalog; English keeps the C-locale ``strftime`` names.
def long_date_text(day: dt.date) -> str:
    """``Nov 30, 2026`` / ``30 nov. 2026``."""
    if not french():
        return f"{day:%b} {day.day}, {day.year}"
    return f"{day.day}{NBSP}{MONTHS_AP[day.month]}{NBSP}{day.year}"


def month_text(day: dt.date) -> str:
    """``November 2026`` / ``novembre 2026``."""
    if not french():
        return day.strftime("%B %Y")
    return f"{MONTHS[day.month]} {day.year}"


def chart_day_label(day: dt.date) -> tuple[str, str]:
    """A day's full label and axis tick: ``Mon Nov 30, 2026`` and ``Nov 30``."""
    if not french():
        return day.strftime("%a %b %d, %Y"), day.strftime("%b %d")
    return f"{WEEKDAYS_ABBR[day.weekday()]} {long_date_text(day)}", short_day_text(day)


def short_day_text(day: dt.date) -> str:
    """``Nov 30`` / ``30 nov.`` (an axis tick)."""
    if not french():
        return day.strftime("%b %d")
    return f"{day.day}{NBSP}{MONTHS_AP[day.month]}"


def short_month_text(day: dt.date) -> str:
    """``Nov 26`` / ``nov. 26`` (an axis tick)."""
    if not french():
        return day.strftime("%b %y")
    return f"{MONTHS_AP[day.month]} {day:%y}"
