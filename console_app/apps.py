from django.apps import AppConfig


class ConsoleAppConfig(AppConfig):
    name = "console_app"
    verbose_name = "SQL console"
    # Given to the staff group: their own saved queries in the admin.
    staff_permissions = ("view_savedquery", "change_savedquery", "delete_savedquery")
