"""``/messages/``, the message table (``?q=`` hands over to search), and ``/search/``."""

from django.urls import include, path

from .views import messages, search

urlpatterns = [
    path("messages/", include(([path("", messages.message_list, name="list")], "messages"))),
    path("search/", include(([path("", search.search_results, name="results")], "search"))),
]
