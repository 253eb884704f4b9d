"""Whole reports (a few hundred milliseconds on a busy store, even with warm summaries),
reused while the state.db is unchanged, for ``REPORT_TTL`` seconds at most (a "last N days"
window slides)."""

from __future__ import annotations

import hashlib
import time

from django.conf import settings
from django.core.cache import cache, caches

from hermes_explorer import store

from .stats import Report, Window, build_report, with_messages

REPORT_TTL = 90
# How long the latest report of a window is kept whatever the file's version.
LATEST_TTL = 86_400


def cache_key(signature, window: Window, variant, kind: str = "insights-report") -> str:
    """The cache key of a report of ``window`` (``variant``: what else shapes it)."""
    raw = repr((signature, window, variant)).encode()
    return f"{kind}:" + hashlib.sha256(raw).hexdigest()


def _latest_key(window: Window, variant) -> str:
    """The key of the latest complete report of ``window`` for this store, any version."""
    return cache_key(store.name(), window, variant, "insights-latest")


def recent_report(window: Window, variant) -> Report | None:
    """The latest complete report of ``window`` of an earlier version of the file, if recent."""
    found = caches["reports"].get(_latest_key(window, variant))
    if found is None or time.time() - found.generated_at > settings.HERMES_INSIGHTS_STALE_SECONDS:
        return None
    return found


def keep_latest(window: Window, variant, report: Report) -> None:
    caches["reports"].set(_latest_key(window, variant), report, LATEST_TTL)


def report_for(
    window: Window,
    *,
    activity_days: bool = False,
    collect_seconds: float | None = None,
    now: float | None = None,
) -> Report:
    """The report for ``window``, reused while the file is unchanged and the report fresh, or
    while the latest is recent (``HERMES_INSIGHTS_STALE_SECONDS``); else computed here.
    ``now`` fixes the clock (a previous period uses its report's)."""

    def build() -> Report:
        return build_report(
            window, now=now, activity_days=activity_days, collect_seconds=collect_seconds
        )

    signature = store.file_signature()
    if signature is None:
        return build()
    key = cache_key(signature, window, activity_days)
    report = cache.get(key)
    if report is None:
        # Message figures cut short: kept apart, the next view reads only those again.
        partial = cache.get(key + ":partial")
        if partial is not None:
            report = with_messages(partial, collect_seconds=collect_seconds)
        else:
            recent = recent_report(window, activity_days) if now is None else None
            if recent is not None:
                return recent
            report = build()
        cache.set(key if report.messages_complete else key + ":partial", report, REPORT_TTL)
        if report.messages_complete:
            keep_latest(window, activity_days, report)
    return report
