"""The team's own data survives: ``manage.py backup`` then ``restore`` into an install that
holds none of it gives every row back (run again on PostgreSQL by ``make test``)."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from accounts_app import tokens
from accounts_app.management.commands.backup import MODELS, model_of
from accounts_app.models import ApiToken, AuditEvent
from annotations_app.models import AnnotatedSession, Note, SavedView, SessionTag, Star, Tag
from console_app.models import SavedQuery
from profiles_app.models import ProfileRestriction
from tests.roles_helpers import make_user

pytestmark = pytest.mark.django_db


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
    assert manifest["models"] == before and manifest["format"] == 1
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
    with pytest.raises(CommandError, match="no backup manifest"):
        call_command("restore", str(tmp_path))
