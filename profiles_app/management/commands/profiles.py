"""``manage.py profiles list|restrict|unrestrict``: the Hermes profiles served, and who is
restricted to which (a user or, with ``--group``, a group).  A profile not served now may be
named (it may be created later).
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError

from hermes_explorer import stores as registry
from profiles_app.models import ProfileRestriction


class Command(BaseCommand):
    help = "List the Hermes profiles served; restrict a user or group to some of them."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        sub.add_parser("list", help="the profiles served and every restriction")
        restrict = sub.add_parser("restrict", help="let a user (or group) see only these")
        restrict.add_argument("who", help="a username, or a group name with --group")
        restrict.add_argument("profiles", nargs="+")
        restrict.add_argument("--group", action="store_true")
        unrestrict = sub.add_parser("unrestrict", help="let a user (or group) see every profile")
        unrestrict.add_argument("who")
        unrestrict.add_argument("--group", action="store_true")

    def handle(self, *args, **options):
        if options["action"] == "list":
            return self.list_all()
        key = self._owner(options["who"], options["group"])
        if options["action"] == "unrestrict":
            deleted, _ = ProfileRestriction.objects.filter(**key).delete()
            state = "every profile" if deleted else "not restricted"
            self.stdout.write(f"{options['who']}: {state}")
            return None
        names = sorted({p.strip() for p in options["profiles"] if p.strip()})
        served = {s.name for s in registry.all_stores()}
        unknown = [n for n in names if n not in served]
        if unknown:
            self.stderr.write(f"Not served now (kept anyway): {', '.join(unknown)}")
        ProfileRestriction.objects.update_or_create(**key, defaults={"profiles": ",".join(names)})
        self.stdout.write(f"{options['who']}: {', '.join(names)}")

    def _owner(self, who: str, group: bool) -> dict:
        User = get_user_model()
        key, model, field = (
            ("group", Group, "name") if group else ("user", User, User.USERNAME_FIELD)
        )
        try:
            return {key: model.objects.get(**{field: who})}
        except model.DoesNotExist as exc:
            raise CommandError(f"No {'group' if group else 'account'} called {who!r}.") from exc

    def list_all(self) -> None:
        for store in registry.all_stores():
            kind = "PostgreSQL schema" if store.postgres else "SQLite file"
            self.stdout.write(f"profile {store.name} ({kind}): {store.location}")
        for row in ProfileRestriction.objects.select_related("user", "group"):
            who = f"user {row.user.get_username()}" if row.user else f"group {row.group.name}"
            self.stdout.write(f"{who}: only {', '.join(sorted(row.names))}")
