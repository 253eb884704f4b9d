from django.urls import path

from .views import reveal, sessions, timeline, transcript_export

app_name = "sessions"

# The list (name "list") is mounted by the project's URLconf from annotations_app.urls_sessions.
urlpatterns = [
    path("<str:session_id>/", sessions.session_detail, name="detail"),
    path("<str:session_id>/timeline/", timeline.timeline, name="timeline"),
    path(
        "<str:session_id>/export.md",
        transcript_export.transcript_export,
        {"kind": "md"},
        name="export_md",
    ),
    path(
        "<str:session_id>/export.json",
        transcript_export.transcript_export,
        {"kind": "json"},
        name="export_json",
    ),
    path(
        "<str:session_id>/messages/<int:message_id>/",
        sessions.message_in_transcript,
        name="message",
    ),
    path(
        "<str:session_id>/messages/<int:message_id>.txt",
        sessions.message_text,
        name="message_text",
    ),
    # Staff only (accounts_app/roles.py); POST, logged.
    path(
        "<str:session_id>/messages/<int:message_id>/reveal",
        reveal.reveal_message,
        name="reveal",
    ),
]
