"""An upgrade keeps the team's data: the app database as the previous release's migrations left
it, holding accounts, tokens, a signed-in session, annotations and saved views, is migrated to
this release's and read back whole (run again on PostgreSQL by ``make test``)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.appdb]

# The leaf migrations of the previous release.
PREVIOUS = [
    ("accounts_app", "0006_signed_in_sessions"),
    ("annotations_app", "0001_initial"),
    ("insights_app", "0004_pass_blocks"),
    ("profiles_app", "0001_initial"),
]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def _latest():
    executor = MigrationExecutor(connection)
    return executor.loader.graph.leaf_nodes()


def test_an_upgrade_keeps_accounts_tokens_sessions_annotations_and_views():
    from django.utils import timezone

    old = _migrate(PREVIOUS)
    try:
        User = old.get_model("auth", "User")
        alice = User.objects.create(username="alice", password="x")
        old.get_model("accounts_app", "ApiToken").objects.create(
            user=alice, key_id="abc123", secret_hash="h" * 64, name="cron"
        )
        old.get_model("accounts_app", "SignedInSession").objects.create(
            session_key="k" * 32,
            session_data="e30:1:sig",
            expire_date=timezone.now() + timezone.timedelta(hours=1),
            user_id=alice.pk,
        )
        target = old.get_model("annotations_app", "AnnotatedSession").objects.create(
            store="coder", session_id="s1", title="token ghp_" + "A1b2C3d4" * 5
        )
        old.get_model("annotations_app", "Note").objects.create(
            target=target, author=alice, author_name="alice", text="kept"
        )
        old.get_model("annotations_app", "SavedView").objects.create(
            name="mine", url="/sessions/", owner=alice
        )
        old.get_model("accounts_app", "AuditEvent").objects.create(
            user=alice, username="alice", action="reveal", session_id="s1"
        )
        _migrate(_latest())
    finally:
        _migrate(_latest())
    from django.contrib.auth import get_user_model
    from django.contrib.sessions.models import Session

    from accounts_app.models import ApiToken, AuditEvent
    from annotations_app.models import AnnotatedSession, Note, SavedView

    assert get_user_model().objects.get(username="alice")
    assert ApiToken.objects.get().name == "cron"
    assert Session.objects.filter(session_key="k" * 32).exists()  # nobody signed out
    anchor = AnnotatedSession.objects.get()
    assert "ghp_" not in anchor.title and "redacted" in anchor.title
    assert Note.objects.get().text == "kept" and SavedView.objects.get().name == "mine"
    assert AuditEvent.objects.get().profile == ""
