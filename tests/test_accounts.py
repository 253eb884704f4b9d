"""Accounts, roles and the audit trail as an app of their own: the audit table moved here
without losing a row, and the apps import each other in one direction only."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from accounts_app.models import AuditEvent

pytestmark = pytest.mark.appdb

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


# The admin: no way up ---------------------------------------------------------------------------
@pytest.fixture
def accounts(db, django_user_model):
    """A superuser, two staff members, a viewer and an analyst."""
    from tests.roles_helpers import make_user

    return {
        "root": django_user_model.objects.create_superuser("root", password="pw-root-123"),
        "staff": make_user("staff", username="stella"),
        "other_staff": make_user("staff", username="otto"),
        "viewer": make_user("viewer", username="vic"),
        "analyst": make_user("analyst", username="ana"),
    }


def _admin_client(user):
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client


def _user_form(user, **changes):
    """The admin change form's fields for ``user``, as a browser would post them back."""
    data = {
        "username": user.username,
        "first_name": user.first_name,
        "last_name": user.last_name,
        "email": user.email,
        "is_active": "on" if user.is_active else "",
        "date_joined_0": "2026-01-01",
        "date_joined_1": "10:00:00",
        "groups": [str(g.pk) for g in user.groups.all()],
    }
    data.update(changes)
    return {k: v for k, v in data.items() if v not in ("", None)}


def test_staff_manage_viewers_and_analysts(accounts):
    client = _admin_client(accounts["staff"])
    analysts = Group.objects.get(name="analysts")
    viewer = accounts["viewer"]
    response = client.post(
        f"/admin/auth/user/{viewer.pk}/change/",
        _user_form(viewer, groups=[str(analysts.pk)], first_name="Vic"),
    )
    assert response.status_code == 302
    viewer.refresh_from_db()
    assert viewer.first_name == "Vic"
    assert list(viewer.groups.values_list("name", flat=True)) == ["analysts"]


@pytest.mark.parametrize("target", ["root", "other_staff"])
def test_staff_cannot_change_staff_or_superusers(accounts, target):
    client = _admin_client(accounts["staff"])
    account = accounts[target]
    url = f"/admin/auth/user/{account.pk}/change/"
    page = client.get(url)
    assert page.status_code == 200  # they may look
    assert 'name="username"' not in page.content.decode()  # read-only
    response = client.post(url, _user_form(account, first_name="Pwned"))
    assert response.status_code == 403
    account.refresh_from_db()
    assert account.first_name != "Pwned"


@pytest.mark.parametrize("target", ["root", "other_staff", "staff"])
def test_only_a_superuser_sets_a_staff_member_s_password(accounts, target):
    account = accounts[target]
    url = f"/admin/auth/user/{account.pk}/password/"
    form = {"password1": "New-pass-4567!", "password2": "New-pass-4567!", "usable_password": "true"}
    response = _admin_client(accounts["staff"]).post(url, form)
    assert response.status_code == 403
    account.refresh_from_db()
    assert not account.check_password("New-pass-4567!")
    if target != "root":
        assert _admin_client(accounts["root"]).post(url, form).status_code == 302
        account.refresh_from_db()
        assert account.check_password("New-pass-4567!")


def test_staff_set_a_viewer_s_password(accounts):
    viewer = accounts["viewer"]
    form = {"password1": "New-pass-4567!", "password2": "New-pass-4567!", "usable_password": "true"}
    response = _admin_client(accounts["staff"]).post(
        f"/admin/auth/user/{viewer.pk}/password/", form
    )
    assert response.status_code == 302
    viewer.refresh_from_db()
    assert viewer.check_password("New-pass-4567!")


def test_staff_cannot_make_anyone_staff_or_superuser(accounts):
    client = _admin_client(accounts["staff"])
    viewer = accounts["viewer"]
    staff_group = Group.objects.get(name="staff")
    change_user = Permission.objects.get(codename="change_user")
    client.post(
        f"/admin/auth/user/{viewer.pk}/change/",
        _user_form(
            viewer, is_staff="on", is_superuser="on", user_permissions=[str(change_user.pk)]
        ),
    )
    viewer.refresh_from_db()
    assert not viewer.is_staff and not viewer.is_superuser
    assert not viewer.user_permissions.exists()
    response = client.post(
        f"/admin/auth/user/{viewer.pk}/change/", _user_form(viewer, groups=[str(staff_group.pk)])
    )
    assert response.status_code == 200  # the form refuses the choice
    assert not viewer.groups.filter(name="staff").exists()
    # A new account cannot be born staff either.
    client.post(
        "/admin/auth/user/add/",
        {
            "username": "newbie",
            "password1": "New-pass-4567!",
            "password2": "New-pass-4567!",
            "usable_password": "true",
            "is_staff": "on",
            "is_superuser": "on",
        },
    )
    newbie = get_user_model().objects.get(username="newbie")
    assert not newbie.is_staff and not newbie.is_superuser


def test_groups_beyond_a_staff_member_s_reach_stay_as_they_were(accounts):
    ops = Group.objects.create(name="ops")
    analyst = accounts["analyst"]
    analyst.groups.add(ops)
    viewers = Group.objects.get(name="viewers")
    response = _admin_client(accounts["staff"]).post(
        f"/admin/auth/user/{analyst.pk}/change/", _user_form(analyst, groups=[str(viewers.pk)])
    )
    assert response.status_code == 302
    assert set(analyst.groups.values_list("name", flat=True)) == {"viewers", "ops"}


def test_staff_cannot_delete_staff_or_superusers_even_in_bulk(accounts):
    client = _admin_client(accounts["staff"])
    targets = [accounts["root"], accounts["other_staff"]]
    for account in targets:
        assert (
            client.post(f"/admin/auth/user/{account.pk}/delete/", {"post": "yes"}).status_code
            == 403
        )
    client.post(
        "/admin/auth/user/",
        {
            "action": "delete_selected",
            "_selected_action": [str(a.pk) for a in targets],
            "post": "yes",
        },
    )
    assert get_user_model().objects.filter(pk__in=[a.pk for a in targets]).count() == 2


def test_a_superuser_can_still_do_everything(accounts):
    client = _admin_client(accounts["root"])
    account = accounts["other_staff"]
    response = client.post(
        f"/admin/auth/user/{account.pk}/change/",
        _user_form(account, is_staff="on", is_superuser="on"),
    )
    assert response.status_code == 302
    account.refresh_from_db()
    assert account.is_superuser


@pytest.fixture
def audit_event(accounts):
    return AuditEvent.objects.create(username="stella", action=AuditEvent.REVEAL, message_id=1)


@pytest.mark.parametrize("who", ["root", "staff"])
def test_nobody_adds_changes_or_deletes_audit_events_in_the_admin(accounts, audit_event, who):
    client = _admin_client(accounts[who])
    base = "/admin/accounts_app/auditevent/"
    assert client.get(base).status_code == 200
    assert client.get(f"{base}{audit_event.pk}/change/").status_code == 200  # view only
    assert client.post(f"{base}{audit_event.pk}/change/", {"username": "x"}).status_code == 403
    assert client.post(f"{base}{audit_event.pk}/delete/", {"post": "yes"}).status_code == 403
    assert client.get(f"{base}add/").status_code == 403
    client.post(
        base,
        {"action": "delete_selected", "_selected_action": [str(audit_event.pk)], "post": "yes"},
    )
    audit_event.refresh_from_db()
    assert audit_event.username == "stella"


def test_saved_queries_in_the_admin_follow_the_console_s_ownership_rule(accounts):
    from console_app.models import SavedQuery

    mine = SavedQuery.objects.create(
        name="Mine", slug="mine", sql="SELECT 1", created_by=accounts["other_staff"]
    )
    client = _admin_client(accounts["staff"])
    base = "/admin/console_app/savedquery/"
    change = {"name": "Hijacked", "slug": "mine", "sql": "SELECT 2", "description": ""}
    assert client.post(f"{base}{mine.pk}/change/", change).status_code == 403
    assert client.post(f"{base}{mine.pk}/delete/", {"post": "yes"}).status_code == 403
    client.post(
        base, {"action": "delete_selected", "_selected_action": [str(mine.pk)], "post": "yes"}
    )
    mine.refresh_from_db()
    assert (mine.name, mine.sql) == ("Mine", "SELECT 1")
    owner = _admin_client(accounts["other_staff"])
    assert owner.post(f"{base}{mine.pk}/change/", change).status_code == 302
    assert owner.post(f"{base}{mine.pk}/delete/", {"post": "yes"}).status_code == 302
    assert not SavedQuery.objects.filter(pk=mine.pk).exists()
