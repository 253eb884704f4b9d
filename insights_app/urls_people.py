from django.urls import path

from . import people

app_name = "people"

urlpatterns = [
    path("", people.people_list, name="list"),
    path("join", people.join, name="join"),
]
