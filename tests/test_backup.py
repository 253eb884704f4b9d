"""The team's own data survives: ``manage.py backup`` then ``restore`` into an install that
holds none of it gives every row back (run again on PostgreSQL by ``make test``).  A backup is
readable by its owner only, and a restore takes back only what this install's key signed: no
edited, missing, extra or unreadable file, and never a traceback."""

from __future__ import annotations

import configparser
import getpass
import json
import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from accounts_app import tokens
from accounts_app.management.commands.backup import FORMAT, MODELS, digest, model_of, signature
from accounts_app.models import ApiToken, AuditEvent
from annotations_app.models import AnnotatedSession, Note, SavedView, SessionTag, Star, Tag
from console_app.models import SavedQuery
from profiles_app.models import ProfileRestriction
from tests.roles_helpers import make_user

pytestmark = [pytest.mark.django_db, pytest.mark.appdb]


def _team_data():
    alice = make_user("analyst", "alice")
    bob = make_user("staff", "bob")
    token, text = tokens.create(alice, name="cron")
    ProfileRestriction.objects.create(user=alice, profiles="default,coder")
    target = AnnotatedSession.objects.create(
        store="coder", session_id="20260101_000000_aaaaaa", title="deploy", notes_count=1
    )
    tag = Tag.objects.create(name="incident", colour="red", description="look here")
    tagged = SessionTag(target=target, tag=tag, added_by=bob)
    tagged.copy_keys(target)
    tagged.save()
    star = Star(target=target, user=alice)
    star.copy_keys(target)
    star.save()
    Note.objects.create(target=target, author=alice, author_name="alice", text="é ✓ <b>x</b>")
    SavedView.objects.create(name="telegram", url="/sessions/?source=telegram", owner=alice)
    SavedQuery.objects.create(name="Top", slug="top", sql="select 1", created_by=bob)
    AuditEvent.objects.create(user=bob, username="bob", action="reveal", profile="coder")
    return text


def _counts() -> dict[str, int]:
    return {label: model_of(label)._default_manager.count() for label in MODELS}


def _wipe():
    for label in reversed(MODELS):
        if label != "auth.group":
            model_of(label)._default_manager.all().delete()


def test_backup_then_restore_into_an_empty_install_gives_every_row_back(tmp_path):
    text = _team_data()
    before = _counts()
    call_command("backup", str(tmp_path))
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["models"] == before and manifest["format"] == FORMAT
    assert "accounts_app" in manifest["migrations"]
    _wipe()
    assert not get_user_model().objects.exists()
    call_command("restore", str(tmp_path))
    assert _counts() == before
    # A restored token still signs in, as its user with their role.
    user = tokens.user_for(text)
    assert user is not None and user.username == "alice"
    assert user.groups.filter(name__icontains="analyst").exists()
    # A restored note is still on its session, in its profile; the star is alice's.
    note = Note.objects.get()
    assert (note.target.store, note.target.session_id) == ("coder", "20260101_000000_aaaaaa")
    assert note.text == "é ✓ <b>x</b>" and note.author.username == "alice"
    assert Star.objects.get().user.username == "alice"
    assert SessionTag.objects.get().tag.name == "incident"
    assert ProfileRestriction.objects.get().user.username == "alice"
    assert ApiToken.objects.get().name == "cron"


def test_restore_refuses_to_overwrite_without_force(tmp_path):
    _team_data()
    call_command("backup", str(tmp_path))
    with pytest.raises(CommandError, match="already holds data"):
        call_command("restore", str(tmp_path))
    Tag.objects.create(name="made-after", colour="blue")
    call_command("restore", str(tmp_path), force=True)
    assert not Tag.objects.filter(name="made-after").exists()
    assert Tag.objects.get().name == "incident"


def test_a_directory_without_a_backup_is_refused(tmp_path):
    with pytest.raises(CommandError, match="no signed backup manifest"):
        call_command("restore", str(tmp_path))


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_backup_is_readable_by_its_owner_only_whatever_the_umask(tmp_path):
    _team_data()
    folder = tmp_path / "backup"
    folder.mkdir(mode=0o755)
    (folder / "manifest.json").write_text("{}")  # an earlier run's file, world-readable
    (folder / "manifest.json").chmod(0o644)
    old = os.umask(0o022)
    try:
        call_command("backup", str(folder))
        call_command("backup", str(tmp_path / "fresh" / "day"))
    finally:
        os.umask(old)
    for made in (folder, tmp_path / "fresh" / "day"):
        assert _mode(made) == 0o700
        files = list(made.iterdir())
        assert len(files) == len(MODELS) + 1
        assert {_mode(path) for path in files} == {0o600}


@pytest.fixture
def backup(tmp_path):
    """A backup of the team's data (and a viewer, carol), the install emptied afterwards."""
    _team_data()
    make_user("viewer", "carol")
    before = _counts()
    call_command("backup", str(tmp_path))
    _wipe()
    return tmp_path, before


def _refused(folder, match: str) -> None:
    for force in (False, True):
        with pytest.raises(CommandError, match=match):
            call_command("restore", str(folder), force=force)
    assert not get_user_model().objects.exists()


def _resign(folder, **changes) -> None:
    """What only a holder of the secret key can do: a manifest signed again after changes."""
    path = folder / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest.pop("signature")
    manifest.update(changes)
    manifest["signature"] = signature(manifest)
    path.write_text(json.dumps(manifest))


def test_restore_refuses_an_edited_file(backup):
    folder, _ = backup
    users = folder / "auth.user.jsonl"
    users.write_text(users.read_text().replace('"is_superuser": false', '"is_superuser": true'))
    _refused(folder, "auth.user: the file changed since the backup was signed")


def test_restore_refuses_an_edited_manifest(backup):
    folder, _ = backup
    users = folder / "auth.user.jsonl"
    users.write_text(users.read_text().replace('"is_superuser": false', '"is_superuser": true'))
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"]["auth.user"] = digest(users)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    _refused(folder, "does not carry this install's signature")
    # Dropping a file's label does not drop its check either.
    del manifest["files"]["auth.user"], manifest["models"]["auth.user"]
    (folder / "manifest.json").write_text(json.dumps(manifest))
    _refused(folder, "does not carry this install's signature")


def test_restore_refuses_a_missing_or_an_extra_file(backup):
    folder, _ = backup
    (folder / "notes.txt").write_text("hello")
    _refused(folder, "missing none; extra notes.txt")
    (folder / "notes.txt").unlink()
    (folder / "annotations_app.note.jsonl").unlink()
    _refused(folder, "missing annotations_app.note.jsonl; extra none")
    # Even a manifest signed without that model is not a whole backup.
    _resign(
        folder,
        files={k: v for k, v in _manifest(folder)["files"].items() if k != "annotations_app.note"},
    )
    _refused(folder, "does not hold the models this version backs up")


def _manifest(folder) -> dict:
    return json.loads((folder / "manifest.json").read_text())


def test_a_backup_made_under_another_secret_key_is_refused_and_says_so(backup, settings):
    folder, before = backup
    key = settings.SECRET_KEY
    settings.SECRET_KEY = "another-install-s-secret-key-0123456789"
    _refused(folder, "written under another secret key")
    # With the key it was made under, it restores.
    settings.SECRET_KEY = key
    call_command("restore", str(folder))
    assert _counts() == before


def test_an_unreadable_or_corrupt_file_is_a_clear_error_and_restores_nothing(backup):
    folder, _ = backup
    notes = folder / "annotations_app.note.jsonl"
    kept = notes.read_text()
    notes.unlink()
    notes.mkdir()
    _refused(folder, "annotations_app.note: cannot be read")
    notes.rmdir()
    # Corrupt when it was written (its digest signed as it is): refused when loaded, and the
    # rows loaded before it are rolled back.
    notes.write_text(kept[: len(kept) // 2] + "\n{not json\n")
    _resign(folder, files={**_manifest(folder)["files"], "annotations_app.note": digest(notes)})
    _refused(folder, "annotations_app.note: cannot be restored")
    notes.write_text('{"model": "annotations_app.note", "pk": 1, "fields": {"target": 999}}\n')
    _resign(folder, files={**_manifest(folder)["files"], "annotations_app.note": digest(notes)})
    _refused(folder, "annotations_app.note: cannot be restored")
    # A row pointing at a row the backup lacks.
    row = json.loads(kept.splitlines()[0])
    row["fields"]["target"] = 999
    notes.write_text(json.dumps(row) + "\n")
    _resign(folder, files={**_manifest(folder)["files"], "annotations_app.note": digest(notes)})
    _refused(folder, "rows do not fit together")


def test_a_backup_of_the_unsigned_format_is_refused_clearly(backup):
    folder, _ = backup
    manifest = _manifest(folder)
    del manifest["signature"]
    manifest["format"] = 1
    (folder / "manifest.json").write_text(json.dumps(manifest))
    _refused(folder, "Backup format 1, not 2: this version restores only the signed backups")
    manifest["format"] = 2
    (folder / "manifest.json").write_text(json.dumps(manifest))
    _refused(folder, "holds no signed backup manifest")


UNIT = Path(__file__).resolve().parent.parent / "deploy" / "hermes-explorer-backup.service"


def test_the_backup_unit_is_valid_and_writes_where_systemd_lets_it(tmp_path):
    service = configparser.ConfigParser(interpolation=None, strict=False)
    service.optionxform = str
    service.read_string(UNIT.read_text())
    options = service["Service"]
    assert options.get("UMask") == "0077" and options.get("StateDirectoryMode") == "0700"
    # The backups go to a directory systemd makes (and lets the sandbox write), owner-only.
    target = re.search(r'backup "(/var/lib/[^/"]+)/', options["ExecStart"]).group(1)
    assert target.removeprefix("/var/lib/") in options["StateDirectory"].split()
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    copy = tmp_path / UNIT.name
    copy.write_text(UNIT.read_text().replace("<hermes-user>", getpass.getuser()))
    found = subprocess.run(
        ["systemd-analyze", "verify", str(copy)], capture_output=True, text=True, timeout=60
    )
    assert "Unknown key" not in found.stderr and "Unknown" not in found.stdout, found.stderr
