from django.urls import path

from .views import sessions

app_name = "sessions"

urlpatterns = [
    path("", sessions.session_list, name="list"),
    path("<str:session_id>/", sessions.session_detail, name="detail"),
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
]
