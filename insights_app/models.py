"""The per-session message summaries of the insights report, in the app's own database.

Plain rows, so that a report adds them up in SQL over its window.  Each row carries the
session's start time, source and model, the columns an insights window filters on, so that a
window is chosen in the app database alone, with the same comparisons as on the state.db.
"""

from __future__ import annotations

from django.db import models

# A summary's rows by role (``stored``: every row, any role), as StoredSummary's columns.
ROLES = ("user", "assistant", "tool", "stored")


class _SessionRow(models.Model):
    """The columns every summary row has: the file, the session, and what windows filter on."""

    # The file: 63 bits of a hash of its identity (a number: ~60 bytes less per row and index).
    store_key = models.BigIntegerField()
    session_id = models.CharField(max_length=500)
    started_at = models.FloatField(null=True)
    source = models.TextField(null=True)
    model = models.TextField(null=True)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{self.session_id} ({self.store_key:x})"


# Covering indexes: a window's sums read the index alone, in GROUP BY order.


class StoredSummary(_SessionRow):
    """One session's message summary: its rows by role, for one state.db file."""

    message_count = models.BigIntegerField(null=True)  # the session's counter when computed
    user = models.BigIntegerField(default=0)
    assistant = models.BigIntegerField(default=0)
    tool = models.BigIntegerField(default=0)
    stored = models.BigIntegerField(default=0)  # every row, any role
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["store_key", "session_id"], name="summary_per_session")
        ]
        indexes = [
            models.Index(
                fields=["store_key", "started_at", "message_count", *ROLES],
                name="summary_window",
            )
        ]


class SummaryTool(_SessionRow):
    """Per session and tool name: the larger of its tool rows and its calls (Hermes's count)."""

    tool_name = models.TextField()
    count = models.BigIntegerField()
    result_rows = models.BigIntegerField(default=0)  # its ``tool`` rows: what a drill-down lists

    class Meta:
        indexes = [
            models.Index(
                fields=["store_key", "tool_name", "started_at", "count", "result_rows"],
                name="summary_tool_window",
            ),
            models.Index(fields=["store_key", "session_id"], name="summary_tool_session"),
        ]


class SummaryCall(_SessionRow):
    """Per tool result paired with its call: the tool and the seconds from the call to it."""

    tool_name = models.TextField()
    seconds = models.FloatField()
    message_id = models.BigIntegerField()  # the result's row

    class Meta:
        indexes = [
            models.Index(
                fields=["store_key", "started_at", "tool_name", "seconds", "message_id"],
                name="summary_call_window",
            ),
            models.Index(fields=["store_key", "session_id"], name="summary_call_session"),
        ]


class SummarySkill(_SessionRow):
    """Per session and skill: loads (``skill_view``), edits (``skill_manage``), last use."""

    skill = models.TextField()
    loads = models.BigIntegerField()
    edits = models.BigIntegerField()
    last_used = models.FloatField(null=True)

    class Meta:
        indexes = [
            models.Index(
                fields=["store_key", "skill", "started_at", "loads", "edits", "last_used"],
                name="summary_skill_window",
            ),
            models.Index(fields=["store_key", "session_id"], name="summary_skill_session"),
        ]


class SummaryMark(models.Model):
    """Per state.db: the highest ``messages.id`` the summaries have seen, and the progress of
    a background build (its heartbeat says whether one still runs)."""

    store_key = models.BigIntegerField(unique=True)
    high_water = models.BigIntegerField(null=True)
    updated_at = models.DateTimeField(auto_now=True)
    build_total = models.BigIntegerField(default=0)  # sessions the running build computes
    build_done = models.BigIntegerField(default=0)
    build_heartbeat = models.FloatField(null=True)  # epoch of its last progress, None: idle

    def __str__(self) -> str:
        return f"{self.store_key:x} @ {self.high_water}"


class Person(models.Model):
    """One person behind several user ids (a Telegram id, a workspace login, a Slack id),
    joined by staff so that ``/people/`` and the session list count them once."""

    name = models.CharField(max_length=100, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class PersonId(models.Model):
    """One user id of a person: its profile (named as annotations name it), platform
    (``sessions.source``) and the id as the pages show it (redacted)."""

    person = models.ForeignKey(Person, on_delete=models.CASCADE, related_name="ids")
    store = models.CharField(max_length=500)
    source = models.CharField(max_length=200)
    user_id = models.CharField(max_length=500)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["store", "source", "user_id"], name="person_id_once")
        ]

    def __str__(self) -> str:
        return f"{self.user_id} ({self.source}, {self.store}) = {self.person}"
