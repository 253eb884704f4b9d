"""What the explorer keeps for itself about a state.db, in its own database (never the
state.db): the per-session message summaries of the insights report, shared by every worker
and kept across restarts (see :mod:`insights_app.summary_store`)."""

from __future__ import annotations

from django.db import models


class StoredSummary(models.Model):
    """One session's message summary (roles, tools, skills) for one state.db file."""

    store_key = models.CharField(max_length=64)  # sha256 of the file's identity
    session_id = models.CharField(max_length=500)
    message_count = models.BigIntegerField(null=True)  # the session's counter when computed
    data = models.JSONField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["store_key", "session_id"], name="summary_per_session")
        ]

    def __str__(self) -> str:
        return f"{self.session_id} ({self.store_key[:8]})"


class SummaryMark(models.Model):
    """The highest ``messages.id`` the stored summaries of one state.db have seen."""

    store_key = models.CharField(max_length=64, unique=True)
    high_water = models.BigIntegerField(null=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.store_key[:8]} @ {self.high_water}"
