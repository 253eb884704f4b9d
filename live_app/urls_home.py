"""``/``: the home page (mounted by the project's URLconf; its name is ``overview``)."""

from django.urls import path

from . import views_home

urlpatterns = [path("", views_home.overview, name="overview")]
