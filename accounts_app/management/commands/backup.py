"""``manage.py backup DIR``: the team's own data, one JSON-lines file per model (users and
groups by natural keys, so a restore lines them up with the install it goes into) and a
``manifest.json`` signed with the app's secret key; see docs/deploying.md, "Backups".  Files
are 0600 in a 0700 directory whatever the umask: they hold password hashes and the audit trail.
Summaries, cached reports and sign-in attempts are left out: they are recomputed or expire.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import django
from django.apps import apps
from django.core import serializers, signing
from django.core.management.base import BaseCommand
from django.db.migrations.recorder import MigrationRecorder
from django.db.models import Max
from django.utils import timezone

# 2: the manifest is signed and names every file's digest (1 was neither, and is refused).
FORMAT = 2
SALT = "hermes-explorer.backup"
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
    "insights_app.person",
    "insights_app.personid",
    "console_app.savedquery",
)
# Rows found by their natural key rather than their id.
NATURAL = frozenset({"auth.group", "auth.user"})


model_of = apps.get_model


def file_of(folder: Path, label: str) -> Path:
    return folder / f"{label}.jsonl"


def digest(path: Path) -> str:
    with path.open("rb") as stream:
        return hashlib.file_digest(stream, "sha256").hexdigest()


def signature(manifest: dict) -> str:
    """The signature of ``manifest`` (without its own) under this install's secret key."""
    text = json.dumps(manifest, sort_keys=True)
    return signing.Signer(salt=SALT).sign(text)[len(text) + 1 :]


def private(path: Path):
    """``path`` opened for writing, readable by its owner only (0600, whatever the umask)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(descriptor, 0o600)
    return open(descriptor, "w", encoding="utf-8")


class Command(BaseCommand):
    help = "Write the team's own data (accounts, annotations, saved views…) to a directory."

    def add_arguments(self, parser):
        parser.add_argument("directory", type=Path)

    def handle(self, *args, directory: Path, **options):
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        directory.chmod(0o700)
        counts, files = {}, {}
        for label in MODELS:
            rows = model_of(label)._default_manager.order_by("pk")
            with private(file_of(directory, label)) as out:
                serializers.serialize(
                    "jsonl",
                    rows.iterator(chunk_size=2000),
                    stream=out,
                    use_natural_foreign_keys=True,
                    use_natural_primary_keys=label in NATURAL,
                )
            counts[label] = rows.count()
            files[label] = digest(file_of(directory, label))
        applied = MigrationRecorder.Migration.objects.values_list("app").annotate(Max("name"))
        manifest = {
            "format": FORMAT,
            "created_at": timezone.now().isoformat(),
            "django": django.get_version(),
            "migrations": dict(applied),
            "models": counts,
            "files": files,
        }
        manifest["signature"] = signature(manifest)
        with private(directory / "manifest.json") as out:
            out.write(json.dumps(manifest, indent=2) + "\n")
        total = sum(counts.values())
        self.stdout.write(self.style.SUCCESS(f"Backed up {total:,} rows to {directory}."))
