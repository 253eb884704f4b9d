"""``manage.py api_token create|revoke|list``: personal API tokens from the command line."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from accounts_app import tokens
from accounts_app.models import ApiToken


class Command(BaseCommand):
    help = "Make, revoke or list personal API tokens (a token is shown once, when made)."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        create = sub.add_parser("create", help="make a token for a user and print it")
        create.add_argument("username")
        create.add_argument("--name", default="", help="what the token is for")
        create.add_argument("--expires-days", type=int, default=None)
        revoke = sub.add_parser("revoke", help="revoke a token by its id")
        revoke.add_argument("token_id")
        listing = sub.add_parser("list", help="tokens (of one user)")
        listing.add_argument("username", nargs="?")

    def handle(self, *args, action, **options):
        if action == "create":
            user = get_user_model().objects.filter(username=options["username"]).first()
            if user is None:
                raise CommandError(f"No account called {options['username']!r}.")
            days = options["expires_days"]
            if days is not None and days <= 0:
                raise CommandError("--expires-days must be a positive number of days.")
            token, text = tokens.create(user, name=options["name"], expires_in_days=days)
            self.stderr.write(f"Token {token.key_id} for {user.get_username()} (shown once):")
            self.stdout.write(text)
        elif action == "revoke":
            token = ApiToken.objects.filter(key_id=options["token_id"]).first()
            if token is None:
                raise CommandError(f"No token with id {options['token_id']!r}.")
            tokens.revoke(token)
            self.stdout.write(f"Revoked {token.key_id} ({token.user.get_username()}).")
        else:
            qs = ApiToken.objects.select_related("user")
            if options.get("username"):
                qs = qs.filter(user__username=options["username"])
            for t in qs:
                used = t.last_used_at.isoformat(timespec="seconds") if t.last_used_at else "never"
                self.stdout.write(
                    f"{t.key_id}  {t.user.get_username():20s} {t.status:8s} last used {used}  {t.name}"
                )
