from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _ensure_role_groups(sender, using="default", **kwargs):
    from hermes_explorer.roles import ensure_role_groups

    if using == "default":
        ensure_role_groups(using)


class ConsoleAppConfig(AppConfig):
    name = "console_app"
    verbose_name = "SQL console, roles and audit"

    def ready(self):
        # After auth's own post_migrate handler has created the permissions (auth is earlier
        # in INSTALLED_APPS), so the staff group can be given them.
        post_migrate.connect(_ensure_role_groups, sender=self, dispatch_uid="hermes_role_groups")
