"""Hermes stores times as epoch seconds (REAL); the explorer shows them in ``TIME_ZONE``."""

from __future__ import annotations

import datetime as dt

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
    start = dt.datetime.combine(day, dt.time.min)
    return timezone.make_aware(start, timezone.get_current_timezone()).timestamp()


def day_end_epoch(day: dt.date) -> float:
    """Epoch of local midnight at the end of ``day`` (exclusive bound)."""
    if day >= dt.date.max:
        # 9999-12-31 has no next day in Python: its end is 24 h after its start.
        return day_start_epoch(day) + 86_400.0
    return day_start_epoch(day + dt.timedelta(days=1))


def iso(value: float | None) -> str:
    """ISO 8601 in the configured zone, for exports."""
    moment = from_epoch(value)
    if moment is None:
        return ""
    return timezone.localtime(moment).isoformat(timespec="seconds")
