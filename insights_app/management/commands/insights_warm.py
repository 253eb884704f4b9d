"""``manage.py insights_warm``: store ahead of time what the first insights and failures pages
would otherwise compute: every session's summary, the report of each preset window and the
period before it, ``failures_warm``'s figures, each profile's store in turn, and the PostgreSQL
profiles' search indexes (``search_index``).

Run it after installing or upgrading (it can be interrupted: finished work is kept) and from
``deploy/hermes-explorer-warm.timer``: each run computes only what changed.
"""

from __future__ import annotations

import sqlite3
import time

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import DatabaseError

from hermes_explorer import stores
from hermes_explorer.hermes_db.deadline import QueryTimeout, query_budget
from insights_app import explorer, summary_build, summary_store
from insights_app.window import PRESET_DAYS, Window


class Command(BaseCommand):
    help = "Compute and store the per-session summaries the insights page needs."

    def add_arguments(self, parser):
        parser.add_argument(
            "--batch", type=int, default=5000, help="sessions between progress lines (at most)"
        )
        parser.add_argument(
            "--no-failures", action="store_true", help="only the insights summaries"
        )

    def handle(self, *args, batch: int = 5000, no_failures: bool = False, **options):
        served = stores.all_stores()
        for one in served:
            if len(served) > 1:
                self.stdout.write(f"Profile {one.name}:")
            try:
                with stores.using(one):
                    self._warm(batch)
            except (DatabaseError, sqlite3.Error) as exc:
                # One unreadable profile leaves the others to warm.
                reason = stores.REGISTRY.failed(one, exc).reason
                self.stderr.write(f"Profile {one.name} is unavailable: {reason}")
        if not no_failures:
            # live_app's command, by name (live_app is built on insights, not the reverse).
            call_command("failures_warm", stdout=self.stdout, stderr=self.stderr)
            # And the PostgreSQL profiles' search indexes (sessions_app's command).
            call_command("search_index", stdout=self.stdout, stderr=self.stderr)

    def _warm(self, batch: int) -> None:
        """Everything of the store read now."""
        started = time.monotonic()
        shown = [0]

        def progress(done: int, total: int) -> None:
            if done - shown[0] >= batch or done == total:
                shown[0] = done
                self.stdout.write(f"{done:,}/{total:,} sessions summarised")

        key = summary_store.store_key()
        computed = summary_build.build(key, progress=progress)
        self.stdout.write(
            self.style.SUCCESS(
                f"Insights summaries ready in {time.monotonic() - started:.1f} s"
                f" ({computed:,} computed, the rest already stored)."
            )
        )
        started = time.monotonic()
        try:
            with query_budget(settings.HERMES_INSIGHTS_TIMEOUT):
                for days in PRESET_DAYS:
                    explorer.report_and_previous(Window(days=days), fresh=True)
        except QueryTimeout:
            self.stderr.write("Insights reports not computed (out of time): pages compute them.")
        else:
            self.stdout.write(
                self.style.SUCCESS(
                    f"Insights reports of the last {', '.join(map(str, PRESET_DAYS))} days ready "
                    f"in {time.monotonic() - started:.1f} s."
                )
            )
