"""The public URL map (see shared/design.md): keep these stable."""

from django.contrib import admin
from django.contrib.auth.decorators import login_not_required
from django.urls import include, path

from sessions_app.views import sessions as session_views

from . import views

urlpatterns = [
    path("", session_views.overview, name="overview"),
    path("sessions/", include("sessions_app.urls")),
    path("messages/", include("sessions_app.urls_messages")),
    path("search/", include("sessions_app.urls_search")),
    path("insights/", include("insights_app.urls")),
    # The old Datasette URLs (/state, /state/sessions, /state/messages.csv, …).
    path("", include("legacy_app.urls")),
    path("sql/", include("console_app.urls")),
    path("healthz", login_not_required(views.healthz), name="healthz"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("admin/", admin.site.urls),
]
