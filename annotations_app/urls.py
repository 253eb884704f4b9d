from django.urls import path

from . import views

app_name = "annotations"

urlpatterns = [
    path("sessions/<str:session_id>/star", views.star, name="star"),
    path("sessions/<str:session_id>/tags", views.add_tag, name="add_tag"),
    path("sessions/<str:session_id>/tags/new", views.add_new_tag, name="add_new_tag"),
    path("sessions/<str:session_id>/tags/<int:tag_id>/remove", views.remove_tag, name="remove_tag"),
    path("sessions/<str:session_id>/notes", views.add_note, name="add_note"),
    path("bulk-tag", views.bulk_tag, name="bulk_tag"),
    path("notes/<int:note_id>/edit", views.edit_note, name="edit_note"),
    path("notes/<int:note_id>/delete", views.delete_note, name="delete_note"),
    path("tags/", views.tag_list, name="tags"),
    path("tags/<int:tag_id>/edit", views.tag_edit, name="tag_edit"),
    path("tags/<int:tag_id>/delete", views.tag_delete, name="tag_delete"),
    path("views/", views.view_list, name="views"),
    path("views/<int:view_id>/delete", views.view_delete, name="view_delete"),
    path("orphans/", views.orphans, name="orphans"),
]
