"""``/sql/``: the read-only SQL console (staff)."""

from django.urls import path

from . import views

app_name = "sql"

urlpatterns = [
    path("", views.console, name="console"),
    path("saved/", views.saved, name="saved"),
    path("saved/new", views.save, name="save"),
    path("saved/<slug:slug>/delete", views.delete, name="delete"),
]
