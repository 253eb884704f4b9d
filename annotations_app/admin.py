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


@admin.register(Tag)
class TagAdmin(admin.ModelAdmin):
    form = TagForm
    list_display = ("name", "colour", "description", "created_at")
    search_fields = ("name", "description")

    def save_model(self, request, obj, form, change):
        services.save_tag(request, obj, created=not change)

    def delete_model(self, request, obj):
        services.delete_tag(request, obj)

    def delete_queryset(self, request, queryset):
        for tag in queryset:
            services.delete_tag(request, tag)


@admin.register(Note)
class NoteAdmin(ReadOnlyAdmin):
    """Notes are written on the session page; here staff read them and remove any."""

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

    def delete_model(self, request, obj):
        services.delete_note(request, obj)

    def delete_queryset(self, request, queryset):
        for note in queryset.select_related("target"):
            services.delete_note(request, note)


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
class ScoreAdmin(admin.ModelAdmin):
    form = ScoreForm
    list_display = ("name", "values", "created_at")
    search_fields = ("name",)

    def save_model(self, request, obj, form, change):
        services.save_score(request, obj, created=not change)

    def has_delete_permission(self, request, obj=None):
        allowed = super().has_delete_permission(request, obj)
        return allowed and (obj is None or permissions.can_delete_score(request, obj))

    def delete_model(self, request, obj):
        services.delete_score(request, obj)

    def delete_queryset(self, request, queryset):
        for score in queryset:
            services.delete_score(request, score)
