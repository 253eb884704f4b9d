"""Admin for saved queries and the audit trail (read-only: an audit log is not edited)."""

from django.contrib import admin

from .models import AuditEvent, SavedQuery


@admin.register(SavedQuery)
class SavedQueryAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "created_by", "created_at")
    search_fields = ("name", "slug", "description", "sql")
    prepopulated_fields = {"slug": ("name",)}
    readonly_fields = ("created_by", "created_at")

    def save_model(self, request, obj, form, change):
        if not change and obj.created_by_id is None:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ("created_at", "username", "action", "session_id", "message_id", "ip")
    list_filter = ("action",)
    search_fields = ("username", "session_id", "detail")
    date_hierarchy = "created_at"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser
