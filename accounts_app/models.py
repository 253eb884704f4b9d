"""The audit trail (written by :func:`accounts_app.audit.record`) and personal API tokens, in
the app's own ``default`` database (never in the state.db).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import pgettext


class AuditEvent(models.Model):
    REVEAL = "reveal"
    SQL = "sql"
    FILTER = "filter"
    ACTIONS = [
        (REVEAL, "revealed a redacted message"),
        (SQL, "ran SQL on the state.db"),
        (FILTER, "compared secret columns in the old API"),
        # The team's annotations (annotations_app.services writes them).
        ("star", "starred a session"),
        ("unstar", "removed a star"),
        ("tag", "tagged a session"),
        ("untag", "removed a tag"),
        ("note", "wrote a note"),
        ("note_edit", "edited a note"),
        ("note_delete", "deleted a note"),
        ("tag_vocabulary", "changed the tag vocabulary"),
        ("view_save", "saved a view"),
        ("view_delete", "deleted a saved view"),
        ("score", "scored a session"),
        ("unscore", "cleared a score"),
        ("score_definition", "changed the scores"),
    ]

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="audit_events",
    )
    # Kept as text too: the trail must survive the account's deletion.
    username = models.CharField(max_length=150)
    action = models.CharField(max_length=16, choices=ACTIONS)
    # The profile the request read ("" for what reads none, and for events before it was kept).
    profile = models.CharField(max_length=200, blank=True, default="")
    session_id = models.CharField(max_length=200, blank=True)
    message_id = models.BigIntegerField(null=True, blank=True)
    detail = models.TextField(blank=True)
    ip = models.GenericIPAddressField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        # The table keeps the console app's name, so existing installs keep their rows.
        db_table = "console_app_auditevent"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        target = f" message {self.message_id}" if self.message_id else ""
        return f"{self.username} {self.action}{target} at {self.created_at:%Y-%m-%d %H:%M}"


class ApiToken(models.Model):
    """A personal token a script sends as ``Authorization: Bearer …`` (see ``tokens.py``),
    shown once when made; ``key_id`` is its public name."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, blank=True)
    key_id = models.CharField(max_length=16, unique=True)
    secret_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.key_id} ({self.user}{', ' + self.name if self.name else ''})"

    @property
    def status(self) -> str:
        if self.revoked_at:
            return "revoked"
        if self.expires_at and self.expires_at <= timezone.now():
            return "expired"
        return "active"

    @property
    def status_label(self) -> str:
        """The status in the page's language."""
        return {
            "revoked": pgettext("token status", "revoked"),
            "expired": pgettext("token status", "expired"),
            "active": pgettext("token status", "active"),
        }[self.status]
