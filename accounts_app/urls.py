"""The account pages of the app (sign-in itself is Django's, under the same prefix)."""

from django.urls import path

from . import views

app_name = "accounts"

urlpatterns = [
    path("tokens/", views.token_list, name="tokens"),
    path("tokens/<str:key_id>/revoke/", views.token_revoke, name="token_revoke"),
]
