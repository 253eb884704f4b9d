from django.apps import AppConfig


class LiveAppConfig(AppConfig):
    name = "live_app"
    verbose_name = "Live activity and failures"
