"""``manage.py restore DIR [--force]``: data written by ``manage.py backup`` brought back (after
``manage.py migrate``: it loads into the current schema).

It refuses to overwrite accounts, annotations, saved views or queries unless ``--force`` (which
deletes them first).  Everything loads in one transaction, checked against the manifest's row
counts; on PostgreSQL the id sequences are moved past the restored ids.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core import serializers
from django.core.management.base import BaseCommand, CommandError
from django.core.management.color import no_style
from django.db import connection, transaction

from .backup import FORMAT, MODELS, file_of, model_of

# Made by the migrations of every install (the role groups): matched, never refused.
PRESET = frozenset({"auth.group"})


class Command(BaseCommand):
    help = "Bring back the team's own data written by `manage.py backup`."

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path)
        parser.add_argument(
            "--force", action="store_true", help="delete the data this install holds first"
        )

    def handle(self, *args, directory: Path, force: bool = False, **options):
        manifest = self._manifest(directory)
        held = {
            label: model_of(label)._default_manager.count()
            for label in MODELS
            if label not in PRESET
        }
        if any(held.values()) and not force:
            found = ", ".join(f"{n} {label}" for label, n in held.items() if n)
            raise CommandError(
                f"This install already holds data ({found}): nothing restored. "
                "Restore into a fresh install, or add --force to replace it."
            )
        with transaction.atomic():
            if force:
                for label in reversed(MODELS):
                    if label not in PRESET:
                        model_of(label)._default_manager.all().delete()
            for label in MODELS:
                self._load(directory, label)
            for label, expected in manifest["models"].items():
                found = model_of(label)._default_manager.count()
                if label not in PRESET and found != expected:
                    raise CommandError(
                        f"{label}: {found} rows after the restore, {expected} in the backup."
                    )
            models = [model_of(label) for label in MODELS]
            with connection.cursor() as cursor:
                for statement in connection.ops.sequence_reset_sql(no_style(), models):
                    cursor.execute(statement)
        total = sum(manifest["models"].values())
        self.stdout.write(self.style.SUCCESS(f"Restored {total:,} rows from {directory}."))

    def _manifest(self, directory: Path) -> dict:
        try:
            manifest = json.loads((directory / "manifest.json").read_text())
        except (OSError, ValueError) as exc:
            raise CommandError(f"{directory} holds no backup manifest: {exc}") from None
        if manifest.get("format") != FORMAT:
            raise CommandError(f"Unknown backup format {manifest.get('format')!r}.")
        return manifest

    def _load(self, directory: Path, label: str) -> None:
        path = file_of(directory, label)
        if not path.exists():
            return
        with path.open(encoding="utf-8") as rows:
            loaded = list(serializers.deserialize("jsonl", rows, handle_forward_references=True))
        for row in loaded:
            row.save()
        for row in loaded:
            if row.deferred_fields:
                row.save_deferred_fields()
