"""The public URL map: keep these stable (bookmarks, scripts and tests depend on them)."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.urls import include, path
from django.views.i18n import set_language

from . import metrics, views

urlpatterns = [
    path("", include("live_app.urls_home")),
    # Before the session pages: /sessions/<id>/after/<message id>/ feeds a followed session.
    path("sessions/", include("live_app.urls_follow")),
    # The session pages, with the list the annotations extend (stars, tags, notes).
    path("sessions/", include("annotations_app.urls_sessions")),
    path("", include("sessions_app.urls_messages")),
    path("insights/", include("insights_app.urls")),
    path("people/", include("insights_app.urls_people")),
    path("live/", include("live_app.urls")),
    path("failures/", include("live_app.urls_failures")),
    # The old Datasette URLs (/state, /state/sessions, /state/messages.csv, …).
    path("", include("legacy_app.urls")),
    path("sql/", include("console_app.urls")),
    path("annotations/", include("annotations_app.urls")),
    path("review/", include("annotations_app.urls_review")),
    path("healthz", login_not_required(views.healthz), name="healthz"),
    # Prometheus's scrape: staff, or the loopback address (hermes_explorer/metrics.py).
    path("metrics", login_not_required(metrics.metrics_view), name="metrics"),
    # The language switch (a POST that sets the language cookie): the sign-in page has it too.
    path("i18n/setlang/", login_not_required(set_language), name="set_language"),
    # Sign-in, sign-out and one's own password.  No reset pages: there is no mail, and the form
    # would only tell who has an account; staff reset passwords in the admin.
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path(
        "accounts/password_change/",
        auth_views.PasswordChangeView.as_view(),
        name="password_change",
    ),
    path(
        "accounts/password_change/done/",
        auth_views.PasswordChangeDoneView.as_view(),
        name="password_change_done",
    ),
    path("accounts/", include("accounts_app.urls")),
    path("admin/", admin.site.urls),
]
