"""``manage.py insights_warm``: compute and store every session's insights summary ahead of
time, so that the first insights page after a start or deploy, in every worker, reads them
instead of the messages.

Run it once after installing or upgrading (it may take minutes on a big state.db; it can be
interrupted and run again: finished sessions are kept), and, if you like, from a timer: each
run only computes the sessions that changed since the last.
"""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand

from hermes_explorer import store
from insights_app import summaries

BATCH = 5000


class Command(BaseCommand):
    help = "Compute and store the per-session summaries the insights page needs."

    def add_arguments(self, parser):
        parser.add_argument("--batch", type=int, default=BATCH, help="sessions per progress line")

    def handle(self, *args, batch: int, **options):
        started = time.monotonic()
        sessions = list(store.rows("SELECT id, message_count FROM sessions ORDER BY id", []))
        computed = 0
        for start in range(0, len(sessions), max(1, batch)):
            part = sessions[start : start + batch]
            collected = summaries.collect(part, use_cache=True)
            computed += collected.computed
            self.stdout.write(
                f"{min(start + batch, len(sessions)):,}/{len(sessions):,} sessions"
                f" ({computed:,} computed, the rest already stored)"
            )
        self.stdout.write(
            self.style.SUCCESS(
                f"Insights summaries ready for {len(sessions):,} sessions"
                f" in {time.monotonic() - started:.1f} s ({computed:,} computed)."
            )
        )
