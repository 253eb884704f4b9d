from django.apps import AppConfig


class ProfilesAppConfig(AppConfig):
    name = "profiles_app"
    verbose_name = "Hermes profiles"
    # The staff group restricts users and groups to profiles in the admin.
    staff_permissions = (
        "add_profilerestriction",
        "change_profilerestriction",
        "delete_profilerestriction",
        "view_profilerestriction",
    )
