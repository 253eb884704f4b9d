"""Admin for saved queries, under the console's own rule: a staff member changes or deletes
only the queries they saved (superusers any), see ``SavedQuery.manageable_by``."""

from django.contrib import admin

from .models import SavedQuery


@admin.register(SavedQuery)
class SavedQueryAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "created_by", "created_at")
    search_fields = ("name", "slug", "description", "sql")
    prepopulated_fields = {"slug": ("name",)}
    readonly_fields = ("created_by", "created_at")

    def has_change_permission(self, request, obj=None):
        allowed = super().has_change_permission(request, obj)
        return allowed and (obj is None or obj.manageable_by(request.user))

    def has_delete_permission(self, request, obj=None):
        allowed = super().has_delete_permission(request, obj)
        return allowed and (obj is None or obj.manageable_by(request.user))

    def save_model(self, request, obj, form, change):
        if not change and obj.created_by_id is None:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)
