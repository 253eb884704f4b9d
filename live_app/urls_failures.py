from django.urls import path

from . import views_failures

app_name = "failures"

urlpatterns = [
    path("", views_failures.index, name="index"),
]
