"""``manage.py roles list|grant|revoke``: list accounts with their role, grant or revoke one.

Granting replaces the user's role group; ``staff`` also sets ``is_staff`` (the admin needs it)
and any other role clears it; revoking is back to viewer.  Superusers keep every power.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from accounts_app.roles import (
    GROUP_OF_ROLE,
    ROLE_OF_GROUP,
    ROLES,
    STAFF,
    VIEWER,
    ensure_role_groups,
    role_of,
)

# A role by its name or its group's.
ROLE_ALIASES = {**{role: role for role in ROLES}, **ROLE_OF_GROUP}


class Command(BaseCommand):
    help = "List accounts and their roles; grant or revoke viewer, analyst or staff."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        sub.add_parser("list", help="every account with its role")
        grant = sub.add_parser("grant", help="give a user a role")
        grant.add_argument("username")
        grant.add_argument("role", help="viewer, analyst or staff")
        revoke = sub.add_parser("revoke", help="take a user back to viewer")
        revoke.add_argument("username")

    def handle(self, *args, **options):
        action = options["action"]
        if action == "list":
            return self.list_roles()
        user = self._user(options["username"])
        role = VIEWER
        if action == "grant":
            role = ROLE_ALIASES.get(options["role"].strip().lower())
            if role is None:
                raise CommandError(f"Unknown role {options['role']!r}: use {', '.join(ROLES)}.")
        self.set_role(user, role)
        self.stdout.write(f"{user.get_username()}: {role_of(user)}")

    def _user(self, username: str):
        User = get_user_model()
        try:
            return User.objects.get(**{User.USERNAME_FIELD: username})
        except User.DoesNotExist as exc:
            raise CommandError(f"No account called {username!r}.") from exc

    @transaction.atomic
    def set_role(self, user, role: str) -> None:
        ensure_role_groups()
        groups = {g.name: g for g in Group.objects.filter(name__in=GROUP_OF_ROLE.values())}
        user.groups.remove(*groups.values())
        user.groups.add(groups[GROUP_OF_ROLE[role]])
        user.is_staff = role == STAFF
        user.save(update_fields=["is_staff"])
        user._hermes_role = None  # forget the cached role

    def list_roles(self) -> None:
        User = get_user_model()
        users = User.objects.order_by(User.USERNAME_FIELD).prefetch_related("groups")
        rows = []
        for user in users:
            flags = [
                f
                for f, on in (("superuser", user.is_superuser), ("inactive", not user.is_active))
                if on
            ]
            rows.append((user.get_username(), role_of(user), ", ".join(flags)))
        if not rows:
            self.stdout.write("No accounts yet: manage.py createsuperuser")
            return
        width = max(len(r[0]) for r in rows)
        for name, role, flags in rows:
            self.stdout.write(f"{name:<{width}}  {role:<8}  {flags}".rstrip())
