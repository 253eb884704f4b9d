"""Create (or reset) the demo sign-in. Refuses to run outside demo mode."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "hermes-demo"


class Command(BaseCommand):
    help = "Create the demo sign-in (demo mode only) and print it."

    def handle(self, *args, **options):
        if not settings.HERMES_DEMO:
            raise CommandError("Not in demo mode (a Hermes store is configured): no demo user.")
        User = get_user_model()
        user, _ = User.objects.get_or_create(username=DEMO_USERNAME)
        user.is_staff = True
        user.is_superuser = True
        user.set_password(DEMO_PASSWORD)
        user.save()
        self.stdout.write(
            f"Demo sign-in: user “{DEMO_USERNAME}”, password “{DEMO_PASSWORD}” (demo mode only)"
        )
