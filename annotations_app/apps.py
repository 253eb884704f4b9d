from django.apps import AppConfig


class AnnotationsAppConfig(AppConfig):
    name = "annotations_app"
    verbose_name = "Stars, tags, notes and saved views"
    # Given to the staff group (accounts_app.roles.ensure_role_groups): staff look after the
    # team's tag vocabulary and may remove anyone's note in the admin.
    staff_permissions = (
        "add_tag",
        "change_tag",
        "delete_tag",
        "view_tag",
        "view_note",
        "delete_note",
        "view_savedview",
    )
