"""Hermes values written for people: model names, counts, money and durations.

One definition each, used by the template filters (``sessions_app.templatetags.explorer``),
the insights charts and the insights report.  Times live in :mod:`sessions_app.timefmt`.
"""

from __future__ import annotations


def short_model(model: str | None, *, missing: str = "") -> str:
    """Hermes's display name for a model: the last ``/`` segment of its route
    (``anthropic/claude-sonnet-4.5`` → ``claude-sonnet-4.5``); ``missing`` when there is none.

    The model filters match the same way: the full route, or anything ending in ``/<name>``."""
    return (model or missing).split("/")[-1]


def compact(value):
    """1234567 → 1.2M; keeps small numbers exact; "—" when there is no value."""
    if value is None or value == "":
        return "—"
    try:
        n = float(value)
    except (TypeError, ValueError):
        return value
    for size, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if abs(n) >= size:
            return f"{n / size:.1f}{suffix}"
    return f"{int(n)}" if n == int(n) else f"{n:.1f}"


def usd(value, digits=4) -> str:
    """Dollars with ``digits`` decimals and thousands separators; "—" when there is no value."""
    if value is None or value == "":
        return "—"
    try:
        return f"${float(value):,.{int(digits)}f}"
    except (TypeError, ValueError):
        return "—"


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
    if hours:
        return f"{hours}h {minutes:02d}m"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


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
