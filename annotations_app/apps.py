from django.apps import AppConfig


class AnnotationsAppConfig(AppConfig):
    name = "annotations_app"
    verbose_name = "Stars, tags, notes, scores and saved views"
    # Given to the staff group (accounts_app.roles.ensure_role_groups): staff look after the
    # team's tag vocabulary and scores and may remove anyone's note in the admin.
    staff_permissions = ("view_note", "delete_note", "view_savedview") + tuple(
        f"{action}_{model}"
        for model in ("tag", "score")
        for action in ("add", "change", "delete", "view")
    )

    def ready(self):
        # The transcript exports' hook (sessions_app never imports this app).
        from sessions_app import extensions

        from .selectors import transcript_fields

        if transcript_fields not in extensions.TRANSCRIPT_METADATA:
            extensions.TRANSCRIPT_METADATA.append(transcript_fields)
