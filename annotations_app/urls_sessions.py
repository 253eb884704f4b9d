"""``/sessions/``: the session pages, with the annotated session list."""

from django.urls import path

from sessions_app.urls import app_name
from sessions_app.urls import urlpatterns as session_urlpatterns

from .listing import session_list

__all__ = ["app_name", "urlpatterns"]

urlpatterns = [path("", session_list, name="list"), *session_urlpatterns]
