"""``/search/``: full-text search over messages."""

from django.urls import path

from .views import search

app_name = "search"

urlpatterns = [
    path("", search.search_results, name="results"),
]
