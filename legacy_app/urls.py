"""The old Datasette addresses, with an optional ``.csv`` / ``.json`` suffix."""

from django.urls import re_path

from . import views
from .api import views as api_views

app_name = "legacy"

urlpatterns = [
    re_path(r"^state(?:\.(?P<fmt>csv|json))?/?$", views.database, name="database"),
    re_path(
        r"^state/(?P<table>[A-Za-z0-9_]+)(?:\.(?P<fmt>csv|json))?/?$", views.table, name="table"
    ),
    re_path(
        r"^state/(?P<table>[A-Za-z0-9_]+)/(?P<pk>[^/]+?)(?:\.(?P<fmt>json))?/?$",
        views.row,
        name="row",
    ),
    re_path(r"^-/versions\.json$", api_views.versions, name="versions"),
]
