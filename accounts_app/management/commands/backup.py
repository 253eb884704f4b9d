"""``manage.py backup DIR``: the team's own data (accounts, roles, tokens, audit trail, profile
restrictions, annotations, saved queries) written to ``DIR`` from SQLite or PostgreSQL alike.

One JSON-lines file per model in Django's serialization (users and groups by natural keys, so
a restore lines them up with the install it goes into), and a ``manifest.json`` with row
counts, migrations and time; ``manage.py restore DIR`` brings it back.  Summaries, cached
reports and sign-in attempts are not backed up: they are recomputed or expire.
"""

from __future__ import annotations

import json
from pathlib import Path

import django
from django.apps import apps
from django.core import serializers
from django.core.management.base import BaseCommand
from django.db.migrations.recorder import MigrationRecorder
from django.utils import timezone

FORMAT = 1
# In the order a restore loads them (what a row points at comes first).
MODELS = (
    "auth.group",
    "auth.user",
    "accounts_app.apitoken",
    "accounts_app.auditevent",
    "profiles_app.profilerestriction",
    "annotations_app.tag",
    "annotations_app.annotatedsession",
    "annotations_app.sessiontag",
    "annotations_app.star",
    "annotations_app.note",
    "annotations_app.savedview",
    "annotations_app.score",
    "annotations_app.sessionscore",
    "console_app.savedquery",
)
# Rows found by their natural key rather than their id.
NATURAL = frozenset({"auth.group", "auth.user"})


model_of = apps.get_model


def file_of(folder: Path, label: str) -> Path:
    return folder / f"{label}.jsonl"


class Command(BaseCommand):
    help = "Write the team's own data (accounts, annotations, saved views…) to a directory."

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path)

    def handle(self, *args, directory: Path, **options):
        directory.mkdir(parents=True, exist_ok=True)
        counts = {}
        for label in MODELS:
            rows = model_of(label)._default_manager.order_by("pk")
            with file_of(directory, label).open("w", encoding="utf-8") as out:
                serializers.serialize(
                    "jsonl",
                    rows.iterator(chunk_size=2000),
                    stream=out,
                    use_natural_foreign_keys=True,
                    use_natural_primary_keys=label in NATURAL,
                )
            counts[label] = rows.count()
        applied = {}
        for app, name in MigrationRecorder.Migration.objects.values_list("app", "name"):
            applied[app] = max(applied.get(app, ""), name)
        manifest = {
            "format": FORMAT,
            "created_at": timezone.now().isoformat(),
            "django": django.get_version(),
            "migrations": applied,
            "models": counts,
        }
        (directory / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        total = sum(counts.values())
        self.stdout.write(self.style.SUCCESS(f"Backed up {total:,} rows to {directory}."))
