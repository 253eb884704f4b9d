from django.apps import AppConfig


class InsightsAppConfig(AppConfig):
    name = "insights_app"
    verbose_name = "Hermes insights"
