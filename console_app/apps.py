from django.apps import AppConfig


class ConsoleAppConfig(AppConfig):
    name = "console_app"
    verbose_name = "SQL console, roles and audit"
