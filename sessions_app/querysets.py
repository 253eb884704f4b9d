"""QuerySets for the state.db: every one starts with the columns the file lacks deferred
(``readable``), so the same code serves the doc, legacy and current shapes.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Case, Exists, OuterRef, Q, Subquery, When

from hermes_explorer import store

from .sqlfunctions import ContentHead

PREVIEW_CHARS = 240
# A preview is read this far, redacted, then cut, so a secret starting in it is seen whole.
PREVIEW_READ_CHARS = 1024


class HermesQuerySet(models.QuerySet):
    @property
    def shape(self):
        return store.shape(self.db)

    def has_column(self, column: str) -> bool:
        return self.shape.has_column(self.model._meta.db_table, column)

    def _present(self) -> frozenset[str]:
        return self.shape.columns.get(self.model._meta.db_table, frozenset())

    def readable(self):
        """Defer the model's columns that this file does not have."""
        present = self._present()
        missing = [
            f.name
            for f in self.model._meta.concrete_fields
            if f.column not in present and not f.primary_key
        ]
        return self.defer(*missing) if missing else self

    def only_readable(self, *names: str):
        """``only()`` restricted to the columns this file has."""
        present = self._present()
        return self.only(*[n for n in names if self.model._meta.get_field(n).column in present])


class HermesManager(models.Manager):
    """Every query starts from the columns this file has."""

    def get_queryset(self):
        return super().get_queryset().readable()


class SessionQuerySet(HermesQuerySet):
    LIST_COLUMNS = (
        "id",
        "source",
        "user_id",
        "model",
        "title",
        "started_at",
        "ended_at",
        "message_count",
        "tool_call_count",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "estimated_cost_usd",
        "actual_cost_usd",
        "cost_status",
        "parent_session_id",
        "end_reason",
        "last_activity_at",
    )

    def for_list(self):
        """What a session table shows, with the first user message of untitled sessions."""
        from .models import Message

        first_user = (
            Message.objects.filter(session_id=OuterRef("pk"), role="user")
            .order_by("id")
            .values_list(ContentHead("content", 120))[:1]
        )
        preview = Subquery(first_user)
        # Files before v3 have no titles: every row shows its preview.
        if self.has_column("title"):
            preview = Case(When(title__isnull=True, then=preview))
        return self.only_readable(*self.LIST_COLUMNS).annotate(first_user_preview=preview)


class MessageQuerySet(HermesQuerySet):
    def transcript_visible(
        self, *, compacted: bool = True, rewound: bool = False, hidden: bool = False
    ):
        """Columns an older file lacks mean "everything is live"."""
        qs = self
        if self.has_column("active"):
            keep = Q(active=1) | Q(active__isnull=True)
            # Without ``compacted`` an inactive row counts as rewound (hidden by default).
            if self.has_column("compacted"):
                archived = Q(active=0, compacted=1)
                undone = Q(active=0) & (Q(compacted=0) | Q(compacted__isnull=True))
            else:
                archived, undone = Q(pk__in=[]), Q(active=0)
            if compacted:
                keep |= archived
            if rewound:
                keep |= undone
            qs = qs.filter(keep)
        if not hidden and self.has_column("display_kind"):
            qs = qs.filter(Q(display_kind__isnull=True) | ~Q(display_kind="hidden"))
        return qs.without_superseded()

    def without_superseded(self):
        """Leave out the inactive copies a compaction carried forward (same session and
        ``message_uid`` as a live row): Hermes shows the message once."""
        if not (self.has_column("active") and self.has_column("message_uid")):
            return self
        live_copy = self.model.objects.filter(
            session_id=OuterRef("session_id"), message_uid=OuterRef("message_uid"), active=1
        )
        return self.exclude(Q(active=0) & Q(message_uid__isnull=False) & Exists(live_copy))
