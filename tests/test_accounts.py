"""Accounts, roles and the audit trail as an app of their own: the audit table moved here
without losing a row, and the apps import each other in one direction only."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from accounts_app.models import AuditEvent

ROOT = Path(__file__).resolve().parent.parent
APPS = ("accounts_app", "console_app", "insights_app", "sessions_app")


def _imported_apps(app: str) -> set[str]:
    """The other apps that ``app``'s modules import (at any depth in the module)."""
    found = set()
    for path in (ROOT / app).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            found |= {name.split(".")[0] for name in names} & set(APPS)
    return found - {app}


def test_accounts_app_imports_no_other_app():
    assert _imported_apps("accounts_app") == set()


def test_sessions_and_console_do_not_import_each_other():
    assert "console_app" not in _imported_apps("sessions_app")
    assert "console_app" not in _imported_apps("insights_app")


def test_the_staff_group_gets_every_app_s_staff_permissions_after_migrate(db):
    staff = Group.objects.get(name="staff")
    granted = set(staff.permissions.values_list("content_type__app_label", "codename"))
    assert {
        ("auth", "change_user"),
        ("accounts_app", "view_auditevent"),
        ("console_app", "view_savedquery"),
        ("console_app", "delete_savedquery"),
    } <= granted
    assert not {codename for _, codename in granted} & {
        "add_auditevent",
        "change_auditevent",
        "delete_auditevent",
        "change_group",
        "add_group",
    }


@pytest.mark.django_db(transaction=True)
def test_audit_rows_and_their_permission_survive_the_move_from_the_console_app():
    """An install made before the move: the trail in ``console_app_auditevent`` owned by the
    console app. Migrating keeps every row and the staff group's permission to read them."""
    executor = MigrationExecutor(connection)
    executor.migrate([("accounts_app", None)])  # back to the console app owning the table
    ContentType.objects.clear_cache()
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO console_app_auditevent "
            "(username, action, session_id, message_id, detail, ip, created_at, user_id) "
            "VALUES ('olga', 'reveal', 's1', 7, '', '10.0.0.1', '2026-01-01 10:00:00', NULL), "
            "('olga', 'sql', '', NULL, 'SELECT 1', NULL, '2026-01-01 11:00:00', NULL)"
        )
    # What the console app's own migrations and post_migrate had made of the rest.
    old_type = ContentType.objects.get_or_create(app_label="console_app", model="auditevent")[0]
    permission = Permission.objects.get_or_create(
        content_type=old_type, codename="view_auditevent", defaults={"name": "Can view"}
    )[0]
    Group.objects.get_or_create(name="staff")[0].permissions.set([permission])

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    ContentType.objects.clear_cache()

    rows = list(AuditEvent.objects.order_by("created_at").values_list("action", "message_id"))
    assert rows == [("reveal", 7), ("sql", None)]
    moved = ContentType.objects.get(pk=old_type.pk)
    assert (moved.app_label, moved.model) == ("accounts_app", "auditevent")
    assert Group.objects.get(name="staff").permissions.filter(pk=permission.pk).exists()
