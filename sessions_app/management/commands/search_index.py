"""``manage.py search_index``: every PostgreSQL profile's local word index brought up to date
(:mod:`sessions_app.search.local_index`); ``insights_warm`` runs it at its end."""

from __future__ import annotations

import sqlite3
import time

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import DatabaseError

from hermes_explorer import stores
from hermes_explorer.hermes_db.deadline import query_budget
from sessions_app.search import local_index


class Command(BaseCommand):
    help = "Index the words of every PostgreSQL profile's new messages, for its search."

    def add_arguments(self, parser):
        parser.add_argument(
            "--minutes",
            type=float,
            default=None,
            help="stop after this long (the next run goes on); default: until done",
        )

    def handle(self, *args, minutes: float | None = None, **options):
        budget = settings.HERMES_INSIGHTS_TIMEOUT
        until = None if minutes is None else time.monotonic() + 60 * minutes
        for one in stores.all_stores():
            if not one.postgres:
                continue  # a file's own FTS5 index serves its search
            started = time.monotonic()
            try:
                with stores.using(one), query_budget(budget):
                    done = local_index.refresh(budget, until=until)
            except (DatabaseError, sqlite3.Error, OSError) as exc:
                reason = (
                    stores.REGISTRY.failed(one, exc).reason
                    if isinstance(exc, DatabaseError)
                    else str(exc)
                )
                self.stderr.write(f"Profile {one.name}: no search index: {reason}")
                continue
            self.stdout.write(
                self.style.SUCCESS(
                    f"Search index of {one.name}: {done.added:,} messages added"
                    f"{' (rebuilt)' if done.rebuilt else ''}, up to id {done.high:,}, "
                    f"in {time.monotonic() - started:.1f} s."
                )
            )
