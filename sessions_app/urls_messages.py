"""``/messages/``: the message table (``?q=`` hands over to search)."""

from django.urls import path

from .views import messages

app_name = "messages"

urlpatterns = [
    path("", messages.message_list, name="list"),
]
