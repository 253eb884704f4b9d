"""``manage.py restore DIR [--force]``: data written by ``manage.py backup`` brought back, after
``manage.py migrate`` (docs/deploying.md, "Backups").

Nothing is loaded unless the backup is exactly what ``backup`` wrote under this install's
secret key, and no option skips that check; ``--force`` only deletes the data held first.
Everything loads in one transaction checked against the manifest's row counts.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core import serializers, signing
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.core.management.color import no_style
from django.core.serializers.base import DeserializationError
from django.db import DatabaseError, connection, transaction

from .backup import FORMAT, MODELS, SALT, digest, file_of, model_of

# What a file that passed its digest may still raise when loaded into this install.
LOAD_ERRORS = (DeserializationError, DatabaseError, ValidationError, ObjectDoesNotExist, ValueError)

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
                for label in reversed(held):
                    model_of(label)._default_manager.all().delete()
            for label in MODELS:
                self._load(directory, label)
            try:  # now rather than at the commit: a row pointing at no row is refused clearly
                connection.check_constraints()
            except DatabaseError as exc:
                raise CommandError(f"The backup's rows do not fit together: {exc}") from None
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
            if manifest.get("format") != FORMAT:
                raise CommandError(
                    f"Backup format {manifest.get('format')!r}, not {FORMAT}: this version "
                    "restores only the signed backups it writes (restore this one with the "
                    "version that wrote it, then back up again with this one)."
                )
            signed = manifest.pop("signature")
        except (OSError, ValueError, AttributeError, KeyError) as exc:
            raise CommandError(f"{directory} holds no signed backup manifest: {exc}") from None
        text = json.dumps(manifest, sort_keys=True)
        try:
            signing.Signer(salt=SALT).unsign(f"{text}:{signed}")
        except signing.BadSignature:
            raise CommandError(
                "The backup's manifest does not carry this install's signature: it was edited, "
                "or written under another secret key (to restore a backup of yours made under "
                "another key, run restore with that key as DJANGO_SECRET_KEY)."
            ) from None
        self._check_files(directory, manifest)
        return manifest

    def _check_files(self, directory: Path, manifest: dict) -> None:
        """Every file is one the signed manifest names, with its digest, and none is missing."""
        named = manifest.get("files", {})
        if set(named) != set(MODELS) or set(manifest.get("models", {})) != set(MODELS):
            raise CommandError("The backup does not hold the models this version backs up.")
        expected = {file_of(directory, label).name for label in MODELS} | {"manifest.json"}
        present = {path.name for path in directory.iterdir()}
        if present != expected:
            missing, extra = sorted(expected - present), sorted(present - expected)
            raise CommandError(
                "The backup's files are not those its manifest names: "
                f"missing {', '.join(missing) or 'none'}; extra {', '.join(extra) or 'none'}."
            )
        for label in MODELS:
            try:
                same = digest(file_of(directory, label)) == named[label]
            except OSError as exc:
                raise CommandError(f"{label}: cannot be read: {exc}") from None
            if not same:
                raise CommandError(f"{label}: the file changed since the backup was signed.")

    def _load(self, directory: Path, label: str) -> None:
        try:
            with file_of(directory, label).open(encoding="utf-8") as rows:
                loaded = list(
                    serializers.deserialize("jsonl", rows, handle_forward_references=True)
                )
            for row in loaded:
                row.save()
            for row in loaded:
                if row.deferred_fields:
                    row.save_deferred_fields()
        except (OSError, *LOAD_ERRORS) as exc:
            raise CommandError(f"{label}: cannot be restored, nothing was: {exc}") from None
