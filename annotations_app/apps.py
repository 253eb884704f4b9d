from django.apps import AppConfig


class AnnotationsAppConfig(AppConfig):
    name = "annotations_app"
    verbose_name = "Stars, tags, notes and saved views"
    # Given to the staff group: the tag vocabulary, and removing anyone's note.
    staff_permissions = (
        "add_tag",
        "change_tag",
        "delete_tag",
        "view_tag",
        "view_note",
        "delete_note",
        "view_savedview",
    )

    def ready(self):
        # The transcript exports' hook (sessions_app never imports this app).
        from sessions_app import extensions

        from .selectors import transcript_fields

        if transcript_fields not in extensions.TRANSCRIPT_METADATA:
            extensions.TRANSCRIPT_METADATA.append(transcript_fields)
