"""The admin of accounts and of the audit trail, without a way up: staff manage viewers and
analysts only, never the fields or groups that elevate; staff restricted to some profiles reach
no further through it.  Nobody adds, changes or deletes an audit event.
"""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db.models import Q

from profiles_app.access import allowed_names, restricted_to
from profiles_app.models import ProfileRestriction, profile_names

from . import tokens
from .models import ApiToken, AuditEvent
from .roles import ANALYST, GROUP_OF_ROLE, STAFF, VIEWER, role_of

# The groups a staff member may give or take away.
REACHABLE_GROUPS = (GROUP_OF_ROLE[VIEWER], GROUP_OF_ROLE[ANALYST])
ELEVATING_FIELDS = ("is_staff", "is_superuser", "user_permissions")


def reach_of(actor) -> frozenset[str] | None:
    """The profiles a restricted staff member may hand out; None when they are not limited."""
    return None if actor.is_superuser else allowed_names(actor)


def beyond_reach(actor) -> list[ProfileRestriction]:
    """The restrictions naming a profile ``actor`` cannot see (not theirs to read or use)."""
    reach = reach_of(actor)
    if reach is None:
        return []
    return [row for row in ProfileRestriction.objects.all() if not row.names <= reach]


def can_manage_account(actor, account) -> bool:
    """Whether ``actor`` may change or delete ``account`` (its password included): restricted
    staff only accounts that see no profile they do not (else a new password is a way in)."""
    if actor.is_superuser:
        return True
    if account.is_superuser or account.is_staff:
        return False
    reach, seen = reach_of(actor), ProfileRestriction.allowed_for(account)
    if reach is not None and (seen is None or not seen <= reach):
        return False
    account._hermes_role = None  # judge the groups as they are now
    return role_of(account) != STAFF


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows listed and shown, never added or changed in the admin."""

    def has_change_permission(self, request, obj=None):
        return False

    has_add_permission = has_change_permission


User = get_user_model()
if admin.site.is_registered(User):
    admin.site.unregister(User)


@admin.register(User)
class AccountAdmin(UserAdmin):
    list_display = ("username", "email", "first_name", "last_name", "role", "is_active")
    list_filter = ("is_staff", "is_superuser", "is_active", "groups")

    @admin.display(description="role")
    def role(self, obj) -> str:
        return "superuser" if obj.is_superuser else role_of(obj) or ""

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if not request.user.is_superuser:
            fields += [f for f in ELEVATING_FIELDS if f not in fields]
        return fields

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if db_field.name == "groups" and not request.user.is_superuser:
            beyond = [row.group_id for row in beyond_reach(request.user) if row.group_id]
            reachable = Group.objects.filter(name__in=REACHABLE_GROUPS).exclude(pk__in=beyond)
            kwargs["queryset"] = reachable
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def has_change_permission(self, request, obj=None):
        allowed = super().has_change_permission(request, obj)
        return allowed and (obj is None or can_manage_account(request.user, obj))

    def has_delete_permission(self, request, obj=None):
        allowed = super().has_delete_permission(request, obj)
        return allowed and (obj is None or can_manage_account(request.user, obj))

    def save_related(self, request, form, formsets, change):
        """Keep the groups the editor could not give (they are not theirs to drop); restricted
        staff pin the account to what it saw before (a new one: to their own profiles), so
        that no group change and no new account sees a profile they cannot."""
        account, reach = form.instance, reach_of(request.user)
        kept = []
        if change and not request.user.is_superuser:
            kept = list(account.groups.exclude(pk__in=form.fields["groups"].queryset))
        pinned = ProfileRestriction.allowed_for(account) if change else reach
        super().save_related(request, form, formsets, change)
        if kept:
            account.groups.add(*kept)
        if reach is not None:
            names = ",".join(sorted(pinned))
            ProfileRestriction.objects.get_or_create(user=account, defaults={"profiles": names})


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = (
        "created_at",
        "username",
        "action",
        "profile",
        "session_id",
        "message_id",
        "ip",
    )
    list_filter = ("action",)
    search_fields = ("username", "session_id", "detail")
    date_hierarchy = "created_at"

    def get_queryset(self, request):
        """A member restricted to some profiles sees their events, and those of no session."""
        found = super().get_queryset(request)
        names = restricted_to(request)
        if names is None:
            return found
        return found.filter(Q(profile__in=names) | Q(profile="", session_id=""))

    has_delete_permission = ReadOnlyAdmin.has_change_permission


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens are made by their owner; the admin lists and revokes them, never shows a secret."""

    list_display = (
        "key_id",
        "user",
        "name",
        "created_at",
        "last_used_at",
        "expires_at",
        "revoked_at",
    )
    list_filter = ("revoked_at",)
    search_fields = ("key_id", "user__username", "name")
    readonly_fields = ("user", "key_id", "name", "created_at", "last_used_at", "expires_at")
    exclude = ("secret_hash",)
    actions = ["revoke"]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return request.user.is_superuser

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        for token in queryset:
            tokens.revoke(token)


# Profile restrictions: staff who are not superusers change only those of viewers and analysts
# (and of groups without staff or superusers), so nobody frees themselves or locks one out.
def _senior(request):
    """Users a staff member may not restrict: staff, superusers and themselves."""
    return get_user_model().objects.filter(
        Q(is_staff=True)
        | Q(is_superuser=True)
        | Q(groups__name=GROUP_OF_ROLE[STAFF])
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
    """Restricted staff see only restrictions within their profiles, grant only those and never
    lift one (no delete, no moving it to someone else)."""

    list_display = ("__str__", "user", "group", "profiles")
    search_fields = ("user__username", "group__name", "profiles")
    raw_id_fields = ("user", "group")

    def get_queryset(self, request):
        found = super().get_queryset(request)
        if request.user.is_superuser:
            return found
        return found.filter(
            Q(user__in=manageable_users(request)) | Q(group__in=manageable_groups(request))
        ).exclude(pk__in=[row.pk for row in beyond_reach(request.user)])

    def get_form(self, request, obj=None, **kwargs):
        form, reach = super().get_form(request, obj, **kwargs), reach_of(request.user)

        def within_reach(value):
            if not profile_names(value) <= reach:
                raise ValidationError("Name only profiles you can see yourself.")

        if reach is not None:
            form.base_fields["profiles"].validators.append(within_reach)
        return form

    def get_readonly_fields(self, request, obj=None):
        if obj is not None and reach_of(request.user) is not None:
            return ("user", "group")
        return super().get_readonly_fields(request, obj)

    def has_delete_permission(self, request, obj=None):
        allowed = super().has_delete_permission(request, obj)
        return allowed and reach_of(request.user) is None

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if not request.user.is_superuser:
            if db_field.name == "user":
                kwargs["queryset"] = manageable_users(request)
            elif db_field.name == "group":
                kwargs["queryset"] = manageable_groups(request)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)
