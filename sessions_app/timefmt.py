"""Hermes stores times as epoch seconds (REAL); the explorer shows them in ``TIME_ZONE``."""

from __future__ import annotations

import datetime as dt
import functools

from django.utils import timezone


def from_epoch(value: float | int | None) -> dt.datetime | None:
    """An aware UTC datetime (templates render it in the current zone), or None."""
    if value is None:
        return None
    try:
        return dt.datetime.fromtimestamp(float(value), tz=dt.UTC)
    except (OverflowError, OSError, ValueError, TypeError):
        return None


def day_start_epoch(day: dt.date) -> float:
    """Epoch of local midnight at the start of ``day`` (in ``TIME_ZONE``)."""
    return _day_start(day, timezone.get_current_timezone())


@functools.lru_cache(maxsize=4096)
def _day_start(day: dt.date, zone: dt.tzinfo) -> float:
    # A year of insights links asks for the same few hundred days several times.
    return timezone.make_aware(dt.datetime.combine(day, dt.time.min), zone).timestamp()


def day_end_epoch(day: dt.date) -> float:
    """Epoch of local midnight at the end of ``day`` (exclusive bound)."""
    if day >= dt.date.max:
        # 9999-12-31 has no next day in Python: its end is 24 h after its start.
        return day_start_epoch(day) + 86_400.0
    return day_start_epoch(day + dt.timedelta(days=1))


def iso_in(value, zone: dt.tzinfo) -> str | None:
    """ISO 8601 of an epoch in ``zone``, to the second; None for NULL or an out-of-range value
    (exports use :mod:`sessions_app.exports.isotime`, faster)."""
    if value is None:
        return None
    try:
        return dt.datetime.fromtimestamp(float(value), zone).isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError, TypeError):
        return None


def iso(value: float | None) -> str:
    """ISO 8601 in ``TIME_ZONE`` (``2026-01-01T09:30:00+01:00``); "" when there is no time."""
    return iso_in(value, timezone.get_current_timezone()) or ""


def local_date(epoch: float) -> dt.date:
    """The day of ``epoch`` in ``TIME_ZONE``."""
    return dt.datetime.fromtimestamp(epoch, timezone.get_current_timezone()).date()
