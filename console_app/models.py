"""SQL that staff saved from the console (in the ``default`` database, never in the state.db)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class SavedQuery(models.Model):
    name = models.CharField(max_length=120)
    slug = models.SlugField(max_length=80, unique=True)
    sql = models.TextField()
    description = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="saved_queries",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "saved queries"

    def __str__(self) -> str:
        return self.name

    def manageable_by(self, user) -> bool:
        """Who may change or delete it: the staff member who saved it, and superusers."""
        return user.is_superuser or (user.pk is not None and self.created_by_id == user.pk)
