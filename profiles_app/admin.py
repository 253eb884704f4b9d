"""Staff restrict users and groups to some Hermes profiles here.

A staff member who is not a superuser sees and changes only the restrictions of viewers and
analysts (and of groups with neither staff nor superusers in them): never their own, another
staff member's or a superuser's, so nobody frees themselves or locks a superuser out.
"""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db.models import Q

from accounts_app.roles import GROUP_OF_ROLE, STAFF

from .models import ProfileRestriction


def _senior(request):
    """Users a staff member may not restrict: staff, superusers and themselves."""
    staff_group = GROUP_OF_ROLE[STAFF]
    return get_user_model().objects.filter(
        Q(is_staff=True)
        | Q(is_superuser=True)
        | Q(groups__name=staff_group)
        | Q(pk=request.user.pk)
    )


def manageable_users(request):
    return get_user_model().objects.exclude(pk__in=_senior(request).values("pk"))


def manageable_groups(request):
    return Group.objects.exclude(
        Q(name=GROUP_OF_ROLE[STAFF]) | Q(user__in=_senior(request).values("pk"))
    ).distinct()


@admin.register(ProfileRestriction)
class ProfileRestrictionAdmin(admin.ModelAdmin):
    list_display = ("__str__", "user", "group", "profiles")
    search_fields = ("user__username", "group__name", "profiles")
    autocomplete_fields = ()
    raw_id_fields = ("user", "group")

    def get_queryset(self, request):
        found = super().get_queryset(request)
        if request.user.is_superuser:
            return found
        return found.filter(
            Q(user__in=manageable_users(request)) | Q(group__in=manageable_groups(request))
        )

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if not request.user.is_superuser:
            if db_field.name == "user":
                kwargs["queryset"] = manageable_users(request)
            elif db_field.name == "group":
                kwargs["queryset"] = manageable_groups(request)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)
