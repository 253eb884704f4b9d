from django.apps import AppConfig


class ProfilesAppConfig(AppConfig):
    name = "profiles_app"
    verbose_name = "Hermes profiles"
