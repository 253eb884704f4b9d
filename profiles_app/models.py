"""Staff-made restrictions of users and groups to some Hermes profiles."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q


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
        return f"{self.user or self.group}: {self.profiles}"

    def clean(self) -> None:
        if (self.user_id is None) == (self.group_id is None):
            raise ValidationError("Restrict either a user or a group.")

    @property
    def names(self) -> frozenset[str]:
        return profile_names(self.profiles)

    @classmethod
    def allowed_for(cls, user) -> frozenset[str] | None:
        """The union of the profiles named for ``user`` and for its groups; None if none is."""
        rows = cls.objects.filter(Q(user=user) | Q(group__user=user)).values_list(
            "profiles", flat=True
        )
        if not rows:
            return None
        return frozenset().union(*(profile_names(profiles) for profiles in rows))


def profile_names(text: str) -> frozenset[str]:
    return frozenset(p.strip() for p in text.split(",") if p.strip())
