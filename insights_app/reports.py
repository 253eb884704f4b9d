"""Whole reports, cached briefly while the state.db does not change.

A report over a window of a busy store takes a few hundred milliseconds even with warm
per-session summaries (see ``summaries.py``); the same page asked again, or exported as JSON
and CSV right after, should not pay that again.  A report is reused while

* the file's *signature* is unchanged: size and modification time of the state.db and of its
  ``-wal`` (every commit by Hermes appends to the WAL, or writes the file itself in rollback
  journal mode), and
* it is younger than ``REPORT_TTL`` seconds (a "last N days" window slides with the clock).

The page shows when its numbers were computed.
"""

from __future__ import annotations

import hashlib

from django.core.cache import caches

from hermes_explorer import store

from .stats import Report, Window, build_report

REPORT_TTL = 90


def report_cache():
    """Where finished reports are kept: the project's default cache (shared by every worker
    when the deployment configures a shared backend)."""
    return caches["default"]


def cache_key(signature: tuple, window: Window, variant) -> str:
    """The cache key of a report of ``window`` (``variant``: what else shapes it)."""
    raw = repr((signature, window, variant)).encode()
    return "insights-report:" + hashlib.sha256(raw).hexdigest()


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
    report = report_cache().get(key)
    if report is None:
        report = build()
        # A report cut short by the deadline is not kept: the next one completes it.
        if report.messages_complete:
            report_cache().set(key, report, REPORT_TTL)
    return report
