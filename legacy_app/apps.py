from django.apps import AppConfig


class LegacyAppConfig(AppConfig):
    name = "legacy_app"
    verbose_name = "The old Datasette URLs"
