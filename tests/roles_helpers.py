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


def script_client_for(role: str | None) -> Client:
    """A client that signs in the way scripts do: HTTP Basic on every request, no cookie."""
    import base64

    user = make_user(role, f"script-{role or 'none'}")
    credentials = base64.b64encode(f"{user.username}:{PASSWORD}".encode()).decode()
    return Client(headers={"Authorization": f"Basic {credentials}"})


class _Null:
    def write(self, *_args) -> None:
        return None
