from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _grant_staff_permissions(sender, using="default", **kwargs):
    from .roles import ensure_role_groups

    if using == "default":
        ensure_role_groups(app_configs=[sender])


class AccountsAppConfig(AppConfig):
    name = "accounts_app"
    verbose_name = "Accounts, roles and audit"

    def ready(self):
        # Sent per app after ``migrate``/``flush``, after auth's handler has made the
        # permissions the staff group is given.
        post_migrate.connect(_grant_staff_permissions, dispatch_uid="hermes_staff_permissions")
