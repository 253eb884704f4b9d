"""Unmanaged mirrors of Hermes's ``state.db`` tables, v1 to v31: the current shape's fields,
those an older file lacks deferred (read as ``None``).  Times are epoch seconds (floats).
Nothing is ever saved: the router refuses.
"""

from __future__ import annotations

import functools
import json

from django.apps import apps
from django.db import models

from hermes_explorer import store
from redaction import redact, redaction_enabled

from . import content as content_format
from .formatting import short_model
from .querysets import HermesManager, HermesQuerySet, MessageQuerySet, SessionQuerySet
from .visibility import kind_of


class HermesModel(models.Model):
    """Base for state.db tables: reading a column the file lacks gives None."""

    class Meta:
        abstract = True

    def refresh_from_db(self, using=None, fields=None, from_queryset=None):
        # The shape of the store this row came from (several stores may be served).
        shape = store.shape(using or self._state.db)
        wanted = set(fields) if fields is not None else self.get_deferred_fields()
        missing = shape.missing_columns(self._meta.db_table, wanted)
        for name in missing:
            setattr(self, self._meta.get_field(name).attname, None)
        rest = [name for name in wanted if name not in missing]
        if rest:
            super().refresh_from_db(using=using, fields=rest, from_queryset=from_queryset)


_redacted_metadata = functools.lru_cache(maxsize=8192)(redact)


class MetadataText(models.TextField):
    """Free text in a metadata column (a title, a name, a model route): shown to every role, so
    redacted as soon as it is read (filters compare both values: ``SeenCharFilter``)."""

    def from_db_value(self, value, expression, connection):
        if value.__class__ is str and value and redaction_enabled():
            return _redacted_metadata(value)
        return value


class Session(HermesModel):
    id = models.TextField(primary_key=True)
    source = models.TextField()
    user_id = MetadataText(null=True)
    model = MetadataText(null=True)
    title = MetadataText(null=True)
    started_at = models.FloatField()
    ended_at = models.FloatField(null=True)
    message_count = models.IntegerField(null=True)
    input_tokens = models.IntegerField(null=True)
    output_tokens = models.IntegerField(null=True)
    estimated_cost_usd = models.FloatField(null=True)
    # Legacy and current shapes.
    tool_call_count = models.IntegerField(null=True)
    api_call_count = models.IntegerField(null=True)
    cache_read_tokens = models.IntegerField(null=True)
    cache_write_tokens = models.IntegerField(null=True)
    reasoning_tokens = models.IntegerField(null=True)
    billing_provider = MetadataText(null=True)
    billing_base_url = MetadataText(null=True)
    billing_mode = models.TextField(null=True)
    actual_cost_usd = models.FloatField(null=True)
    cost_status = models.TextField(null=True)
    cost_source = models.TextField(null=True)
    pricing_version = models.TextField(null=True)
    # A plain column, not a ForeignKey: a pruned parent must read as an id, not raise.
    parent_session_id = models.TextField(null=True)
    end_reason = MetadataText(null=True)
    model_config = models.TextField(null=True)
    system_prompt = models.TextField(null=True)
    # Current shape.
    system_prompt_hash = models.TextField(null=True)
    session_key = models.TextField(null=True)
    chat_id = models.TextField(null=True)
    chat_type = models.TextField(null=True)
    thread_id = models.TextField(null=True)
    display_name = MetadataText(null=True)
    origin_json = models.TextField(null=True)
    cwd = MetadataText(null=True)
    git_branch = MetadataText(null=True)
    git_repo_root = models.TextField(null=True)
    title_source = models.TextField(null=True)
    last_activity_at = models.FloatField(null=True)
    archived = models.IntegerField(null=True)
    auto_archived = models.IntegerField(null=True)
    pinned = models.IntegerField(null=True)
    hidden = models.IntegerField(null=True)
    profile_name = models.TextField(null=True)
    created_source = models.TextField(null=True)

    objects = HermesManager.from_queryset(SessionQuerySet)()

    class Meta:
        managed = False
        db_table = "sessions"
        ordering = ["-started_at", "-id"]

    def __str__(self) -> str:
        return self.title or self.id

    @property
    def duration_seconds(self) -> float | None:
        """None when never closed, or when clock drift made it negative."""
        if self.ended_at is None or self.started_at is None:
            return None
        seconds = self.ended_at - self.started_at
        return seconds if seconds >= 0 else None

    @property
    def model_short(self) -> str:
        return short_model(self.model)

    @property
    def total_tokens(self) -> int:
        return (self.input_tokens or 0) + (self.output_tokens or 0)

    @property
    def model_config_data(self) -> dict:
        try:
            data = json.loads(self.model_config or "{}")
        except (TypeError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}


class Message(HermesModel):
    id = models.AutoField(primary_key=True)
    session = models.ForeignKey(
        Session,
        on_delete=models.DO_NOTHING,
        db_column="session_id",
        db_constraint=False,
        related_name="messages",
    )
    role = models.TextField(null=True)
    content = models.TextField(null=True)
    tool_name = MetadataText(null=True)
    tool_calls = models.TextField(null=True)
    timestamp = models.FloatField(null=True)
    token_count = models.IntegerField(null=True)
    reasoning = models.TextField(null=True)
    # Legacy and current shapes.
    tool_call_id = models.TextField(null=True)
    finish_reason = models.TextField(null=True)
    # Current shape.
    reasoning_content = models.TextField(null=True)
    reasoning_details = models.TextField(null=True)
    active = models.IntegerField(null=True)
    compacted = models.IntegerField(null=True)
    compressed_summary = models.IntegerField(null=True, db_column="_compressed_summary")
    display_kind = models.TextField(null=True)
    api_content = models.TextField(null=True)
    display_metadata = models.TextField(null=True)
    message_uid = models.TextField(null=True)

    objects = HermesManager.from_queryset(MessageQuerySet)()

    class Meta:
        managed = False
        db_table = "messages"
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.role} #{self.id} in {self.session_id}"

    @property
    def visibility(self) -> str:
        """live, compacted (archived by compaction), rewound, or hidden scaffolding."""
        return kind_of(self.active, self.compacted, self.display_kind)

    @property
    def text(self) -> str:
        return content_format.as_text(self.content)


# Columns that can hold secrets: viewers never see them, every output path redacts them.
SECRET_MESSAGE_COLUMNS = (
    "content",
    "tool_calls",
    "reasoning",
    "reasoning_content",
    "reasoning_details",
    "codex_reasoning_items",
    "api_content",
    "display_metadata",
)
SECRET_SESSION_COLUMNS = ("system_prompt", "model_config", "origin_json")


# Hermes's token counters, on sessions and on usage rows; a "total" is the first four.
TOKEN_COUNTERS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
USAGE_COUNTERS = (*TOKEN_COUNTERS, "reasoning_tokens")


class SessionModelUsage(HermesModel):
    """Per-session, per-route usage (v20+). ``task = ''`` is the main loop."""

    api_call_count = models.IntegerField(null=True)
    input_tokens = models.IntegerField(null=True)
    output_tokens = models.IntegerField(null=True)
    cache_read_tokens = models.IntegerField(null=True)
    cache_write_tokens = models.IntegerField(null=True)
    reasoning_tokens = models.IntegerField(null=True)
    estimated_cost_usd = models.FloatField(null=True)
    actual_cost_usd = models.FloatField(null=True)
    pk = models.CompositePrimaryKey(
        "session_id", "model", "billing_provider", "billing_base_url", "billing_mode", "task"
    )
    session = models.ForeignKey(
        Session,
        on_delete=models.DO_NOTHING,
        db_column="session_id",
        db_constraint=False,
        related_name="model_usage",
    )
    model = MetadataText()
    # Part of the composite key, so NOT NULL for Django; Hermes writes '' for "none".
    billing_provider = MetadataText()
    billing_base_url = MetadataText()
    billing_mode = models.TextField()
    task = MetadataText(default="")
    cost_status = models.TextField(null=True)
    cost_source = models.TextField(null=True)
    first_seen = models.FloatField(null=True)
    last_seen = models.FloatField(null=True)

    objects = HermesManager.from_queryset(HermesQuerySet)()
    # True on the row the session page adds for counters no per-model row covers.
    residual = False

    class Meta:
        managed = False
        db_table = "session_model_usage"

    def __str__(self) -> str:
        return f"{self.model} ({self.task or 'main'}) in {self.session_id}"

    @property
    def model_short(self) -> str:
        return short_model(self.model)


@functools.cache
def metadata_columns(table: str) -> frozenset[str]:
    """The :class:`MetadataText` columns of a table: redacted free text shown to every role."""
    return frozenset(
        f.column
        for model in apps.get_app_config("sessions_app").get_models()
        if model._meta.db_table == table
        for f in model._meta.concrete_fields
        if isinstance(f, MetadataText)
    )
