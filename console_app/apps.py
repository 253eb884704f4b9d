from django.apps import AppConfig


class ConsoleAppConfig(AppConfig):
    name = "console_app"
    verbose_name = "SQL console"
    # Given to the staff group (accounts_app.roles.ensure_role_groups): staff look after saved
    # queries in the admin (their own only, see admin.py).
    staff_permissions = ("view_savedquery", "change_savedquery", "delete_savedquery")
