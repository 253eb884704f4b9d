"""The team's own layer over Hermes's sessions, in the app's ``default`` database.

A session is named by its store and id (:class:`AnnotatedSession`), never by a foreign key into
the state.db: Hermes may prune a session, and its annotations must then stay listed.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models.functions import Lower

TAG_NAME_CHARS = 40
NOTE_CHARS = 5_000
COLOURS = [(colour, colour) for colour in ("grey", "blue", "green", "amber", "red", "purple")]


class Tag(models.Model):
    """A label of the team's vocabulary (managed by staff), unique whatever its case."""

    name = models.CharField(max_length=TAG_NAME_CHARS)
    colour = models.CharField(max_length=12, choices=COLOURS, default="grey")
    description = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = [Lower("name")]
        constraints = [
            models.UniqueConstraint(Lower("name"), name="annotations_tag_name_ci_unique"),
        ]

    def __str__(self) -> str:
        return self.name


class SortKeys(models.Model):
    """A session's store, id and sort keys: the anchor's own, copied onto a tag, star or score
    so a list filtered by it walks one index in the list's order instead of sorting every
    match."""

    store = models.CharField(max_length=500)
    session_id = models.CharField(max_length=200)
    started_at = models.FloatField(null=True)
    source = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        abstract = True

    def copy_keys(self, target: AnnotatedSession) -> None:
        for name in ("store", "session_id", "started_at", "source"):
            setattr(self, name, getattr(target, name))


class AnnotatedSession(SortKeys):
    """One session of one store that carries at least one star, tag or note (or did).

    ``started_at`` and ``source`` copy the session's (written once by Hermes, so they stay
    true) to order these rows like the session list; ``title`` serves sessions that left the
    store; ``notes_count`` is kept as notes are written or removed, so nothing counts them."""

    title = models.CharField(max_length=300, blank=True, default="")
    notes_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["store", "session_id"], name="annotations_session_unique"
            ),
        ]
        indexes = [
            models.Index(fields=["store", "started_at", "session_id"], name="annotations_by_start"),
            models.Index(fields=["store", "source", "session_id"], name="annotations_by_source"),
        ]

    def __str__(self) -> str:
        return f"{self.session_id} ({self.store})"


class SessionTag(SortKeys):
    target = models.ForeignKey(AnnotatedSession, on_delete=models.CASCADE, related_name="tags")
    tag = models.ForeignKey(Tag, on_delete=models.CASCADE, related_name="session_tags")
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tag", "target"], name="annotations_tag_once"),
        ]
        indexes = [
            models.Index(
                fields=["tag", "store", "started_at", "session_id"], name="tagged_by_start"
            ),
            models.Index(fields=["tag", "store", "source", "session_id"], name="tagged_by_source"),
            models.Index(fields=["target", "tag"], name="tags_of_target"),
        ]

    def __str__(self) -> str:
        return f"{self.tag} on {self.target}"


class Star(SortKeys):
    """A personal bookmark: each user sees only their own."""

    target = models.ForeignKey(AnnotatedSession, on_delete=models.CASCADE, related_name="stars")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "target"], name="annotations_star_once"),
        ]
        indexes = [
            models.Index(
                fields=["user", "store", "started_at", "session_id"], name="starred_by_start"
            ),
            models.Index(
                fields=["user", "store", "source", "session_id"], name="starred_by_source"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} starred {self.target}"


class Note(models.Model):
    """Plain text by one author, read by the whole team (shown escaped, never as HTML)."""

    target = models.ForeignKey(AnnotatedSession, on_delete=models.CASCADE, related_name="notes")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True
    )
    # Kept as text too: a note outlives its author's account.
    author_name = models.CharField(max_length=150)
    text = models.TextField(max_length=NOTE_CHARS)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"note by {self.author_name} on {self.target}"


class SavedView(models.Model):
    """A page of the explorer (path and query string) saved under a name."""

    name = models.CharField(max_length=80)
    url = models.CharField(max_length=2_000)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saved_views"
    )
    shared = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = [Lower("name"), "id"]
        constraints = [
            models.UniqueConstraint(
                "owner", Lower("name"), name="annotations_view_name_unique_per_owner"
            ),
        ]

    def __str__(self) -> str:
        return self.name


SCORE_NAME_CHARS = 40
SCORE_VALUE_CHARS = 40
SCORE_MAX_VALUES = 10


class Score(models.Model):
    """A judgement the team gives sessions (managed by staff): a name and its short list of
    values, in the order the buttons show them (``quality``: ``good``, ``bad``)."""

    name = models.CharField(max_length=SCORE_NAME_CHARS)
    values = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = [Lower("name")]
        constraints = [
            models.UniqueConstraint(Lower("name"), name="annotations_score_name_ci_unique"),
        ]

    def __str__(self) -> str:
        return self.name


class SessionScore(SortKeys):
    """One person's value of one score for one session (pressing it again removes it)."""

    target = models.ForeignKey(AnnotatedSession, on_delete=models.CASCADE, related_name="scores")
    score = models.ForeignKey(Score, on_delete=models.CASCADE, related_name="session_scores")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    value = models.CharField(max_length=SCORE_VALUE_CHARS)
    created_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["score", "target", "user"], name="annotations_score_once_per_user"
            ),
        ]
        indexes = [
            models.Index(
                fields=["score", "value", "store", "started_at", "session_id"],
                name="scored_value_by_start",
            ),
            models.Index(
                fields=["score", "store", "started_at", "session_id"], name="scored_by_start"
            ),
            models.Index(fields=["user", "store", "session_id"], name="scored_by_user"),
            models.Index(fields=["target", "score"], name="scores_of_target"),
        ]

    def __str__(self) -> str:
        return f"{self.score}={self.value} by {self.user} on {self.target}"
