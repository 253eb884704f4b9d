"""Mounted under ``/sessions/``: the new messages of a followed session page."""

from django.urls import path

from . import views

app_name = "follow"

urlpatterns = [
    path("<str:session_id>/after/<int:message_id>/", views.messages_after, name="after"),
]
