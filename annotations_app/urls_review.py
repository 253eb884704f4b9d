"""``/review/``: scores and review queues (any session list's query string is a queue)."""

from django.urls import path

from . import views

app_name = "review"

urlpatterns = [
    path("scores/", views.score_list, name="scores"),
    path("scores/<int:score_id>/delete", views.score_delete, name="score_delete"),
    path("next/", views.review_next, name="next"),
    path("sessions/<str:session_id>/", views.review_session, name="session"),
    path("sessions/<str:session_id>/score", views.score_session, name="score"),
]
