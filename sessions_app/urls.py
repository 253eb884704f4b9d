from django.urls import path

from .views import reveal, sessions, timeline, transcript_export

app_name = "sessions"
MESSAGE = "<str:session_id>/messages/<int:message_id>"

# The list (name "list") is mounted by the project's URLconf from annotations_app.urls_sessions.
urlpatterns = [
    path("<str:session_id>/", sessions.session_detail, name="detail"),
    path("<str:session_id>/timeline/", timeline.timeline, name="timeline"),
    *(
        path(
            f"<str:session_id>/export.{kind}",
            transcript_export.transcript_export,
            {"kind": kind},
            name=f"export_{kind}",
        )
        for kind in ("md", "json")
    ),
    path(f"{MESSAGE}/", sessions.message_in_transcript, name="message"),
    path(f"{MESSAGE}.txt", sessions.message_text, name="message_text"),
    # Staff only (accounts_app/roles.py); POST, logged.
    path(f"{MESSAGE}/reveal", reveal.reveal_message, name="reveal"),
]
