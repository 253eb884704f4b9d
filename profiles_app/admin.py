"""Staff restrict users and groups to some Hermes profiles here."""

from __future__ import annotations

from django.contrib import admin

from .models import ProfileRestriction


@admin.register(ProfileRestriction)
class ProfileRestrictionAdmin(admin.ModelAdmin):
    list_display = ("__str__", "user", "group", "profiles")
    search_fields = ("user__username", "group__name", "profiles")
    autocomplete_fields = ()
    raw_id_fields = ("user", "group")
