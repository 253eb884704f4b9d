"""Staff-made restrictions of users and groups to some Hermes profiles."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import connection, models
from django.db.models import Exists, Subquery


class ProfileRestriction(models.Model):
    """A user or a group may see only ``profiles`` (comma-separated profile names)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="profile_restriction",
    )
    group = models.OneToOneField(
        Group,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="profile_restriction",
    )
    profiles = models.TextField(
        help_text="Profile names this user or group may see, comma-separated (e.g. default,support)."
    )

    class Meta:
        verbose_name = "profile restriction"

    def __str__(self) -> str:
        who = self.user or self.group
        return f"{who}: {self.profiles}"

    def clean(self) -> None:
        if (self.user_id is None) == (self.group_id is None):
            raise ValidationError("Restrict either a user or a group.")

    @property
    def names(self) -> frozenset[str]:
        return profile_names(self.profiles)

    # Attributes of a user read with the session (settings.SESSION_USER_READS): the profiles
    # of the user's own restriction (None: none), and whether any group of theirs has one.
    OWN = "own_profile_restriction"
    BY_GROUP = "profile_restricted_by_group"

    @classmethod
    def allowed_for(cls, user) -> frozenset[str] | None:
        """The union of the profiles named for ``user`` and for its groups; None if none is."""
        if getattr(user, cls.BY_GROUP, None) is False and hasattr(user, cls.OWN):
            # Read with the session, and no group of the user's is restricted.
            own = getattr(user, cls.OWN)
            return None if own is None else profile_names(own)
        # Asked on every request: one plain statement (the ORM's compiling of the same query
        # cost more than the query).
        table = connection.ops.quote_name(cls._meta.db_table)
        groups = connection.ops.quote_name(user.groups.through._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT profiles FROM {table} WHERE user_id = %s OR group_id IN "
                f"(SELECT group_id FROM {groups} WHERE user_id = %s)",
                [user.pk, user.pk],
            )
            rows = [row[0] for row in cursor.fetchall()]
        if not rows:
            return None
        return frozenset().union(*(profile_names(profiles) for profiles in rows))


def profile_names(text: str) -> frozenset[str]:
    """The profile names of a restriction's comma-separated list."""
    return frozenset(p.strip() for p in text.split(",") if p.strip())


def own_restriction(user_id) -> Subquery:
    """The profiles of the user's own restriction (NULL when none), as a query expression."""
    return Subquery(ProfileRestriction.objects.filter(user_id=user_id).values("profiles")[:1])


def restricted_by_group(user_id) -> Exists:
    """Whether any group of the user's is restricted, as a query expression."""
    return Exists(ProfileRestriction.objects.filter(group__user=user_id))
