"""``manage.py failures_warm``: for every profile, the failures page's per-block counts
(:mod:`live_app.failures`) of its longest window and the home page's figures, computed ahead;
``insights_warm`` runs it at its end."""

from __future__ import annotations

import sqlite3
import time

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import DatabaseError

from hermes_explorer import stores
from hermes_explorer.hermes_db.deadline import query_budget
from live_app import failures, home


class Command(BaseCommand):
    help = "Count the failures of every profile's messages ahead of the failures page."

    def handle(self, *args, **options):
        budget = settings.HERMES_INSIGHTS_TIMEOUT
        for one in stores.all_stores():
            started = time.monotonic()
            try:
                with stores.using(one), query_budget(budget):
                    # Every block the longest window covers is read and kept.
                    failures.build(failures.Filters(days=failures.MAX_DAYS), budget=budget)
                    home.warm(budget=budget)
            except (DatabaseError, sqlite3.Error) as exc:
                reason = stores.REGISTRY.failed(one, exc).reason
                self.stderr.write(f"Profile {one.name} is unavailable: {reason}")
                continue
            self.stdout.write(
                self.style.SUCCESS(
                    f"Failure counts of {one.name} ready in {time.monotonic() - started:.1f} s."
                )
            )
