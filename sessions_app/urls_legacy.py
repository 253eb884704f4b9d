"""The old Datasette addresses on the database ``state`` (see ``views/legacy.py``).

Datasette wrote ``/state``, ``/state/<table>`` and ``/state/<table>/<pk>``, each with an
optional ``.csv`` / ``.json`` suffix and without a trailing slash; a trailing slash is
tolerated here too.
"""

from django.urls import re_path

from .views import legacy

app_name = "legacy"

urlpatterns = [
    re_path(r"^state(?:\.(?P<fmt>csv|json))?/?$", legacy.database, name="database"),
    re_path(
        r"^state/(?P<table>[A-Za-z0-9_]+)(?:\.(?P<fmt>csv|json))?/?$", legacy.table, name="table"
    ),
    re_path(
        r"^state/(?P<table>[A-Za-z0-9_]+)/(?P<pk>[^/]+?)(?:\.(?P<fmt>json))?/?$",
        legacy.row,
        name="row",
    ),
]
