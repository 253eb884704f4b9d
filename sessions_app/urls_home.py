"""``/``: the overview."""

from django.urls import path

from .views import sessions

urlpatterns = [path("", sessions.overview, name="overview")]
