"""Whole reports, cached briefly while the state.db does not change.

A report over a window of a busy store takes a few hundred milliseconds even with warm
per-session summaries (see ``summaries.py``); the same page asked again, or exported as JSON
and CSV right after, should not pay that again.  A report is reused while

* the file's *signature* is unchanged: size and modification time of the state.db and of its
  ``-wal`` (every commit by Hermes appends to the WAL, or writes the file itself in rollback
  journal mode), and
* it is younger than ``REPORT_TTL`` seconds (a "last N days" window slides with the clock).

The page shows when its numbers were computed.  A report whose message figures are not
complete yet (their per-session summaries are being built) is kept apart, and the next view
reads only those figures again (:func:`insights_app.stats.with_messages`).
"""

from __future__ import annotations

import hashlib

from django.core.cache import cache

from hermes_explorer import store

from .stats import Report, Window, build_report, with_messages

REPORT_TTL = 90


def cached_report(key: str) -> Report | None:
    """The report kept under ``key`` in the shared cache."""
    return cache.get(key)


def keep_report(key: str, report: Report) -> None:
    cache.set(key, report, REPORT_TTL)


def cached_fragment(key: str):
    """What was made of one report (its extras, its page's body): the key names the report's
    ``generated_at``, so the value never changes for the key."""
    return cache.get(key)


def keep_fragment(key: str, value) -> None:
    cache.set(key, value, REPORT_TTL)


def cache_key(signature: tuple, window: Window, variant) -> str:
    """The cache key of a report of ``window`` (``variant``: what else shapes it)."""
    raw = repr((signature, window, variant)).encode()
    return "insights-report:" + hashlib.sha256(raw).hexdigest()


def kept_report(window: Window, activity_days: bool = False) -> Report | None:
    """The kept report :func:`report_for` would start from now (whole, or one whose message
    figures are read again), if there is one."""
    signature = store.file_signature()
    if signature is None:
        return None
    key = cache_key(signature, window, activity_days)
    return cached_report(key) or cached_report(key + ":partial")


def report_for(
    window: Window,
    *,
    activity_days: bool = False,
    collect_seconds: float | None = None,
    now: float | None = None,
) -> Report:
    """The report for ``window``, reused while the file is unchanged and the report fresh.

    ``now`` fixes the clock (a previous period measured from its report's own clock); a
    window with exact epoch bounds does not depend on it."""

    def build() -> Report:
        return build_report(
            window, now=now, activity_days=activity_days, collect_seconds=collect_seconds
        )

    signature = store.file_signature()
    if signature is None:
        return build()
    key = cache_key(signature, window, activity_days)
    report = cached_report(key)
    if report is None:
        # A report whose message figures were cut short (summaries being built) is kept
        # apart: the next view reads only those figures again, not the whole pass.
        partial = cached_report(key + ":partial")
        if partial is not None:
            report = with_messages(partial, collect_seconds=collect_seconds)
        else:
            report = build()
        keep_report(key if report.messages_complete else key + ":partial", report)
    return report
