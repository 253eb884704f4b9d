"""Hermes values written for people, one definition each: the active language's format module
(``hermes_explorer/formats``) read once per language, then plain string operations, as the
list pages call these for every row where Django's generic formatting costs several times more.
"""

from __future__ import annotations

import collections
import datetime as dt
import functools
import operator

from django.utils import dateformat, translation
from django.utils.formats import get_format


def language() -> str:
    """The language the page is written in (``en``, ``fr``)."""
    return translation.get_language() or "en"


def hermes_words() -> bool:
    """Whether the page is in English, the language of the figures Hermes writes itself."""
    return language().startswith("en")


# Django's date format letters that ``strftime`` writes the same, several times faster.
_STRFTIME = {"d": "%d", "m": "%m", "Y": "%Y", "y": "%y", "H": "%H", "i": "%M", "s": "%S", "%": "%%"}
Formats = collections.namedtuple(
    "Formats", "decimal thousands money compact units date minutes seconds"
)


def _date_writer(pattern: str):
    """``write(date)`` for a Django date format: ``strftime`` when it has its letters only."""
    if "\\" in pattern or any(c.isalpha() and c not in _STRFTIME for c in pattern):
        return functools.partial(dateformat.format, format_string=pattern)
    return operator.methodcaller("strftime", "".join(_STRFTIME.get(c, c) for c in pattern))


@functools.lru_cache(maxsize=64)
def _formats(lang: str) -> Formats:
    get = functools.partial(get_format, lang=lang)
    minutes = get("SHORT_DATETIME_FORMAT")
    return Formats(
        *map(get, ("DECIMAL_SEPARATOR", "THOUSAND_SEPARATOR", "MONEY_FORMAT")),
        tuple(zip((1e9, 1e6, 1e3), reversed(get("COMPACT_SUFFIXES")), strict=True)),
        tuple(get("DURATION_UNITS")),
        *map(_date_writer, (get("SHORT_DATE_FORMAT"), minutes, minutes + ":s")),
    )


def page_formats() -> Formats:
    return _formats(language())


def date_format(value: dt.date, name: str) -> str:
    return dateformat.format(value, get_format(name))


# The session list asks the catalog for the same few words ~1,300 times a page; kept per
# language, its server time went from 25 to 15 ms (bench/benchmark.py, the 1M-message store).
def per_language(build):
    """``build(*args)`` (which translates a few words), once per language and arguments."""

    @functools.lru_cache(maxsize=1024)
    def built(lang: str, *args):
        with translation.override(lang):
            return build(*args)

    return functools.wraps(build)(lambda *args: built(language(), *args))


def number(value, digits: int | None = None) -> str:
    """An integer with grouped thousands, or a float with ``digits`` decimals."""
    text, formats = f"{value:_}" if digits is None else f"{value:_.{digits}f}", page_formats()
    return text.replace(".", formats.decimal).replace("_", formats.thousands)


def decimal(value, digits: int = 1) -> str:
    """A number with ``digits`` decimals and no grouping (percentages, rates)."""
    return f"{value:.{digits}f}".replace(".", page_formats().decimal)


def plain(value) -> str:
    """A number as short as it goes (``2.5``, ``3``): seconds of a deadline."""
    return f"{value:g}".replace(".", page_formats().decimal)


def datetime_text(moment: dt.datetime, *, seconds: bool = False) -> str:
    """``2026-11-30 14:05`` in English, ``30/11/2026 14:05`` in French (already local)."""
    formats = page_formats()
    return (formats.seconds if seconds else formats.minutes)(moment)


def iso_text(iso: str) -> str:
    """A local ISO 8601 time as :func:`datetime_text` writes it, to the second."""
    return page_formats().seconds(dt.datetime.fromisoformat(iso[:19]))


def date_text(day: dt.date) -> str:
    """``2026-11-30`` in English, ``30/11/2026`` in French."""
    return page_formats().date(day)


def short_model(model: str | None, *, missing: str = "") -> str:
    """Hermes's display name for a model: the last ``/`` segment of its route (or ``missing``)."""
    return (model or missing).split("/")[-1]


def compact(value):
    """1234567 → 1.2M; keeps small numbers exact; "—" when there is no value."""
    if value is None or value == "":
        return "—"
    try:
        n = float(value)
    except (TypeError, ValueError):
        return value
    for size, suffix in page_formats().compact:
        if abs(n) >= size:
            return decimal(n / size) + suffix
    return f"{int(n)}" if n == int(n) else decimal(n)


def usd(value, digits=4) -> str:
    """Dollars with ``digits`` decimals and thousands separators; "—" when there is no value."""
    try:
        text = f"{float(value):_.{int(digits)}f}"
    except (TypeError, ValueError):
        return "—"
    formats = page_formats()
    return formats.money % text.replace(".", formats.decimal).replace("_", formats.thousands)


def money(value: float) -> str:
    """Dollars to the cent, or to a hundredth of a cent below one dollar (chart labels)."""
    return usd(value, 2 if value >= 1 or value == 0 else 4)


def duration(seconds) -> str:
    """``1h 05m``, ``3m 07s``, ``45s``; "—" when unknown or negative (clock drift)."""
    try:
        seconds = int(float(seconds))
    except (TypeError, ValueError):
        return "—"
    if seconds < 0:
        return "—"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    h, m, s = page_formats().units
    if hours:
        return f"{hours}{h} {minutes:02d}{m}"
    if minutes:
        return f"{minutes}{m} {secs:02d}{s}"
    return f"{secs}{s}"


def seconds_text(value: float | None, formats: Formats | None = None) -> str:
    """``4.2 s`` under a minute, else ``3m 07s``; "—" when unknown (``formats``: if at hand)."""
    if value is None:
        return "—"
    if abs(value) >= 60:
        return duration(value)
    return f"{value:.1f}\xa0s".replace(".", (formats or page_formats()).decimal)


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


def long_date_text(day: dt.date) -> str:
    """``Nov 30, 2026`` / ``30 nov. 2026``."""
    return date_format(day, "LONG_DATE_FORMAT")


def month_text(day: dt.date) -> str:
    """``November 2026`` / ``novembre 2026``."""
    return date_format(day, "YEAR_MONTH_FORMAT")


def chart_day_label(day: dt.date) -> tuple[str, str]:
    """A day's full label and axis tick: ``Mon Nov 30, 2026`` and ``Nov 30``."""
    return date_format(day, "CHART_DAY_FORMAT"), date_format(day, "DAY_TICK_FORMAT")
