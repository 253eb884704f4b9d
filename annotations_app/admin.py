"""The admin of the tag vocabulary (staff) and a read-and-remove view of notes."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Q

from accounts_app.admin import ReadOnlyAdmin
from hermes_explorer import stores
from profiles_app.access import restricted_to

from . import permissions, services
from .forms import ScoreForm, TagForm
from .models import Note, SavedView, Score, Tag


class AuditedAdmin(admin.ModelAdmin):
    """Saves and deletes go through ``services.save_<kind>``/``delete_<kind>`` (audited)."""

    kind = ""

    def save_model(self, request, obj, form, change):
        getattr(services, f"save_{self.kind}")(request, obj, created=not change)

    def delete_model(self, request, obj):
        getattr(services, f"delete_{self.kind}")(request, obj)

    def delete_queryset(self, request, queryset):
        for obj in queryset:
            self.delete_model(request, obj)


@admin.register(Tag)
class TagAdmin(AuditedAdmin):
    kind = "tag"
    form = TagForm
    list_display = ("name", "colour", "description", "created_at")
    search_fields = ("name", "description")


@admin.register(Note)
class NoteAdmin(AuditedAdmin, ReadOnlyAdmin):
    """Notes are written on the session page; here staff read them and remove any."""

    kind = "note"

    list_display = ("author_name", "created_at", "target")
    search_fields = ("text", "author_name", "target__session_id")
    readonly_fields = ("target", "author", "author_name", "text", "created_at", "updated_at")

    def get_queryset(self, request):
        found = super().get_queryset(request)
        names = restricted_to(request)
        if names is None or not stores.multi():
            return found
        # Annotations are keyed by profile name when several profiles are served.
        return found.filter(target__store__in=names)

    def delete_queryset(self, request, queryset):
        super().delete_queryset(request, queryset.select_related("target"))


@admin.register(SavedView)
class SavedViewAdmin(ReadOnlyAdmin):
    list_display = ("name", "owner", "shared", "url")
    readonly_fields = ("name", "owner", "shared", "url", "created_at")

    def get_queryset(self, request):
        """Shared views and one's own; a restricted member sees none of a hidden profile's."""
        found = super().get_queryset(request).filter(Q(shared=True) | Q(owner=request.user))
        names = restricted_to(request)
        if names is None:
            return found
        hidden = {one.name for one in stores.all_stores()} - names
        for name in hidden:
            found = found.exclude(url__startswith=f"/p/{name}/")
        return found


@admin.register(Score)
class ScoreAdmin(AuditedAdmin):
    kind = "score"
    form = ScoreForm
    list_display = ("name", "values", "created_at")
    search_fields = ("name",)

    def has_delete_permission(self, request, obj=None):
        allowed = super().has_delete_permission(request, obj)
        return allowed and (obj is None or permissions.can_delete_score(request, obj))
