"""Accounts of each role for tests (the groups come from accounts_app's data migration)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

PASSWORD = "pw-role-test-123"


def make_user(role: str | None, username: str | None = None):
    """A user with ``role`` (viewer, analyst, staff) granted by ``manage.py roles``;
    ``None`` gives an account with no group at all."""
    User = get_user_model()
    user = User.objects.create_user(
        username=username or f"user-{role or 'none'}", password=PASSWORD
    )
    if role is not None:
        call_command("roles", "grant", user.username, role, stdout=_Null())
        user.refresh_from_db()
    return user


def client_for(role: str | None) -> Client:
    client = Client()
    client.force_login(make_user(role))
    return client


class _Null:
    def write(self, *_args) -> None:
        return None
