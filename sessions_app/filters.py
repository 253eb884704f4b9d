"""django-filter FilterSets for the session and message tables: filters on columns an older
file lacks are removed, so the form never offers what the file cannot answer.
"""

from __future__ import annotations

import django_filters
from django import forms
from django.core.exceptions import FieldDoesNotExist
from django.db import connections
from django.db.models import Exists, OuterRef, Q
from django.db.models.expressions import RawSQL
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy
from django_filters.constants import EMPTY_VALUES

from redaction import redact

from .facets import distinct_values, source_counts
from .model_usage import used_model_sql
from .models import Message, MetadataText, Session
from .skill_calls import SKILL_CALLS_SQL, calls_skill
from .sqlfunctions import NoIndex, Redacted
from .templatetags.explorer import role_label
from .timefmt import day_end_epoch, day_start_epoch

COST_STATUSES = [
    ("estimated", pgettext_lazy("cost status", "estimated")),
    ("actual", pgettext_lazy("cost status", "actual")),
    ("included", _("included (subscription)")),
    ("unknown", _("unknown (no price)")),
    ("none", _("not recorded")),
]
HUGE = 10**12
SESSION_FLAGS = [
    ("all", _("all sessions")),
    ("archived_or_hidden", _("archived or hidden only")),
    ("archived", _("archived by a user")),
    ("hidden", pgettext_lazy("session flag", "hidden")),
    ("pinned", pgettext_lazy("session flag", "pinned")),
]


class OpenChoices:
    """Accepts values that are not (yet) among the choices: a bookmarked source with no
    sessions in this file is an empty result, not an error; roles are an open set."""

    def valid_value(self, value):
        return isinstance(value, str) and 0 < len(value) <= 200


class OpenMultipleChoiceField(OpenChoices, forms.MultipleChoiceField):
    pass


class OpenMultipleChoiceFilter(django_filters.MultipleChoiceFilter):
    field_class = OpenMultipleChoiceField


class SchemaAwareFilterSet(django_filters.FilterSet):
    # filter name → column it needs, where its ``field_name`` is not a column of the model
    needs_column: dict[str, str] = {}

    def __init__(self, data=None, queryset=None, *, request=None, prefix=None):
        super().__init__(data, queryset, request=request, prefix=prefix)
        shape = self.queryset.shape
        meta = self._meta.model._meta
        for name, found in list(self.filters.items()):
            try:
                column = self.needs_column.get(name) or meta.get_field(found.field_name).column
            except FieldDoesNotExist:
                continue
            if not shape.has_column(meta.db_table, column):
                del self.filters[name]
        self.filters["source"].extra["choices"] = [(s, s) for s in distinct_values("source")]


def bound(lookup: str, to_epoch):
    def method(queryset, name, value):
        return queryset.filter(**{f"{name}__{lookup}": to_epoch(value)})

    return method


def epoch_filter(field_name: str, method, label: str) -> django_filters.NumberFilter:
    """A bound in exact epoch seconds (a report's window), carried by links in a hidden field."""
    return django_filters.NumberFilter(
        field_name=field_name,
        method=method,
        label=label,
        min_value=-HUGE,
        max_value=HUGE,
        widget=forms.HiddenInput,
    )


def day_filter(field_name: str, lookup: str, label: str) -> django_filters.DateFilter:
    return django_filters.DateFilter(
        field_name=field_name,
        method=bound(lookup, day_start_epoch if lookup == "gte" else day_end_epoch),
        label=label,
        widget=forms.DateInput(attrs={"type": "date"}),
    )


def at_least(field_name: str, label: str, lookup_expr: str = "gte") -> django_filters.NumberFilter:
    return django_filters.NumberFilter(
        field_name=field_name, lookup_expr=lookup_expr, label=label, min_value=0, max_value=HUGE
    )


class SeenCharFilter(django_filters.CharFilter):
    """On a :class:`MetadataText` column (shown redacted), also compares the redacted value, so
    a guess at a key pasted into a title matches nothing (no oracle); only the rows the plain
    test keeps are redacted."""

    def filter(self, qs, value):
        qs = super().filter(qs, value)
        field = qs.model._meta.get_field(self.field_name)
        if value in EMPTY_VALUES or not isinstance(field, MetadataText):
            return qs
        if connections[qs.db].vendor == "postgresql":
            # No SQL function redacts there: the rows the plain test kept are redacted here.
            exact = self.lookup_expr == "exact"
            kept = [
                pk
                for pk, text in qs.values_list("pk", self.field_name)
                if (redact(text) == value if exact else value.casefold() in redact(text).casefold())
            ]
            # (Never an empty IN list: the capped count compiles the query's SQL itself.)
            return qs.filter(pk__in=kept) if kept else qs.filter(pk__isnull=True)
        seen = f"_{self.field_name}_seen"
        return qs.alias(**{seen: Redacted(self.field_name)}).filter(
            **{f"{seen}__{self.lookup_expr}": value}
        )


def model_named(value: str) -> Q:
    """The full route (vendor/model) or the short name people see."""
    return Q(model=value) | Q(model__endswith="/" + value)


class SessionFilter(SchemaAwareFilterSet):
    # Chosen sessions (``?id=a&id=b``): the page and every export of it hold exactly those.
    id = OpenMultipleChoiceFilter(label=_("Sessions"), widget=forms.MultipleHiddenInput)
    source = OpenMultipleChoiceFilter(
        label=_("Source"),
        widget=forms.CheckboxSelectMultiple,
        method="filter_source",
    )
    model = django_filters.CharFilter(method="filter_model", label=_("Model"))
    started_after = day_filter("started_at", "gte", _("Started from"))
    started_before = day_filter("started_at", "lt", _("Started to"))
    started_from_epoch = epoch_filter(
        "started_at", bound("gte", float), _("Started at or after (epoch s)")
    )
    started_to_epoch = epoch_filter("started_at", bound("lt", float), _("Started before (epoch s)"))
    used_model = django_filters.CharFilter(
        method="filter_used_model", label=_("Used model"), widget=forms.HiddenInput
    )
    title = SeenCharFilter("title", "icontains", label=_("Title"))
    user_id = SeenCharFilter("user_id", label=_("User id"))
    end_reason = SeenCharFilter("end_reason", label=_("End reason"))
    cost_status = django_filters.ChoiceFilter(
        choices=COST_STATUSES,
        method="filter_cost_status",
        label=_("Cost status"),
        empty_label=pgettext_lazy("filter", "any"),
    )
    min_cost = at_least("estimated_cost_usd", _("Min cost $"))
    max_cost = at_least("estimated_cost_usd", _("Max cost $"), "lte")
    min_messages = at_least("message_count", _("Min messages"))
    has_parent = django_filters.BooleanFilter(
        field_name="parent_session_id",
        lookup_expr="isnull",
        exclude=True,
        label=_("Part of a chain"),
        widget=forms.Select(
            choices=[
                ("", pgettext_lazy("filter", "any")),
                ("true", _("yes")),
                ("false", _("no")),
            ]
        ),
    )

    cwd = SeenCharFilter("cwd", "icontains", label=_("Working directory"))
    git_branch = SeenCharFilter("git_branch", label=_("Git branch"))
    git_repo_root = SeenCharFilter("git_repo_root", label=_("Git repository"))
    chat_type = SeenCharFilter("chat_type", label=_("Chat type"))
    flags = django_filters.ChoiceFilter(
        choices=SESSION_FLAGS,
        method="filter_flags",
        label=_("Archived / hidden"),
        empty_label=_("hide archived and hidden"),
    )

    needs_column = {"flags": "archived"}

    class Meta:
        model = Session
        fields: list[str] = []

    def filter_queryset(self, queryset):
        # As Hermes's own session list: archived and hidden sessions stay out unless asked for.
        if "flags" in self.filters and not self.form.cleaned_data.get("flags"):
            queryset = queryset.exclude(self._flagged(queryset))
        return super().filter_queryset(queryset)

    @staticmethod
    def _flagged(queryset) -> Q:
        flagged = Q()
        for column in ("archived", "auto_archived", "hidden"):
            if queryset.has_column(column):
                flagged |= Q(**{column: 1})
        return flagged

    def filter_flags(self, queryset, name, value):
        if value == "all":
            return queryset
        if value == "archived_or_hidden":
            return queryset.filter(self._flagged(queryset))
        if value in ("archived", "pinned", "hidden") and queryset.has_column(value):
            return queryset.filter(**{value: 1})
        return queryset.none()

    # When the page walks the started_at index (time sorts), a common source is cheaper to
    # check row by row along that index than to collect and sort through the source index.
    time_ordered = True
    COMMON_SHARE = 0.02

    def filter_source(self, queryset, name, value):
        values = list(value)
        if self.time_ordered:
            counts = source_counts()
            total = sum(counts.values()) or 1
            if sum(counts.get(v, 0) for v in values) / total >= self.COMMON_SHARE:
                return queryset.alias(_source_unindexed=NoIndex("source")).filter(
                    _source_unindexed__in=values
                )
        return queryset.filter(source__in=values)

    def filter_model(self, queryset, name, value):
        return queryset.filter(model_named(value))

    def filter_used_model(self, queryset, name, value):
        # The sessions an insights models row counts: see model_usage.used_model_sql.
        sql, params = used_model_sql(queryset.shape, value)
        return queryset.filter(id__in=RawSQL(sql, params))

    def filter_cost_status(self, queryset, name, value):
        if value == "none":
            return queryset.filter(cost_status__isnull=True)
        return queryset.filter(cost_status=value)


# Messages ---------------------------------------------------------------------------------
MESSAGE_ROLES = ["user", "assistant", "tool", "system", "session_meta"]
MESSAGE_SHOW = [
    ("compacted", _("compacted (archived by compression)")),
    ("rewound", _("rewound / undone")),
    ("hidden", _("hidden scaffolding")),
]


class OpenChoiceField(OpenChoices, forms.ChoiceField):
    pass


def role_choices(asked: str) -> list[tuple]:
    """Hermes's roles, and ``asked`` when it is another, after "any"."""
    roles = MESSAGE_ROLES + ([asked] if asked and asked not in MESSAGE_ROLES else [])
    return [("", pgettext_lazy("filter", "any"))] + [(r, role_label(r)) for r in roles]


class OpenChoiceFilter(django_filters.ChoiceFilter):
    field_class = OpenChoiceField


class MessageFilter(SchemaAwareFilterSet):
    """Only ``session_id`` has an index; the others are checked row by row along the ids, under a
    short deadline.  Without ``show`` only the live transcript is listed."""

    session_id = SeenCharFilter("session_id", label=_("Session id"), max_length=200)
    role = OpenChoiceFilter(label=_("Role"), choices=[])
    tool_name = SeenCharFilter("tool_name", label=_("Tool name"), max_length=200)
    source = OpenMultipleChoiceFilter(
        method="filter_source", label=_("Source"), widget=forms.CheckboxSelectMultiple
    )
    date_from = day_filter("timestamp", "gte", _("From"))
    date_to = day_filter("timestamp", "lt", _("To"))
    # The messages of sessions started in a window on a model (the insights tool rows' links).
    session_started_from_epoch = epoch_filter(
        "started_at__gte", "filter_session", _("Session started at or after (epoch s)")
    )
    session_started_to_epoch = epoch_filter(
        "started_at__lt", "filter_session", _("Session started before (epoch s)")
    )
    session_model = django_filters.CharFilter(
        method="filter_session_model", label=_("Session model"), widget=forms.HiddenInput
    )
    skill = django_filters.CharFilter(
        method="filter_skill", label=_("Calls skill"), widget=forms.HiddenInput, max_length=200
    )
    show = django_filters.MultipleChoiceFilter(
        choices=MESSAGE_SHOW,
        method="filter_show",
        label=_("Show also"),
        widget=forms.CheckboxSelectMultiple,
    )

    class Meta:
        model = Message
        fields: list[str] = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.filters["role"].extra["choices"] = role_choices(self.data.get("role") or "")
        shape = self.queryset.shape
        if not (
            shape.has_column("messages", "active") or shape.has_column("messages", "display_kind")
        ):
            # Older files have no history edits: every row is live.
            del self.filters["show"]

    def filter_queryset(self, queryset):
        show = set(self.form.cleaned_data.get("show") or ())
        queryset = queryset.transcript_visible(
            compacted="compacted" in show, rewound="rewound" in show, hidden="hidden" in show
        )
        return super().filter_queryset(queryset)

    def filter_session(self, queryset, name, value):
        of_window = Session.objects.order_by().filter(**{name: float(value)})
        return queryset.filter(session_id__in=of_window.values("id"))

    def filter_session_model(self, queryset, name, value):
        of_model = Session.objects.order_by().filter(model_named(value))
        return queryset.filter(session_id__in=of_model.values("id"))

    def filter_skill(self, queryset, name, value):
        # Assistant messages loading or editing this skill (see skill_calls).
        if not queryset.has_column("tool_calls"):
            return queryset.none()
        if connections[queryset.db].vendor == "postgresql":
            rows = queryset.filter(role="assistant", tool_calls__contains="skill_")
            kept = [
                pk for pk, raw in rows.values_list("pk", "tool_calls") if calls_skill(raw, value)
            ]
            return queryset.filter(pk__in=kept) if kept else queryset.filter(pk__isnull=True)
        return queryset.filter(id__in=RawSQL(SKILL_CALLS_SQL, [value]))

    def filter_show(self, queryset, name, value):
        return queryset  # applied in filter_queryset, which also covers "nothing ticked"

    # At most this many sessions in the chosen sources: start from them (see filter_source).
    RARE_SOURCE_SESSIONS = 1500

    def filter_source(self, queryset, name, value):
        """A rare source is answered from its sessions (only their messages are sorted); a
        common one is an EXISTS per message walked newest first, which stops after a page
        (starting from its sessions would sort most of the table)."""
        values = list(value)
        counts = source_counts()
        of_sources = Session.objects.order_by().filter(source__in=values)
        if sum(counts.get(v, 0) for v in values) <= self.RARE_SOURCE_SESSIONS:
            return queryset.filter(session_id__in=of_sources.values("id"))
        return queryset.filter(Exists(of_sources.filter(pk=OuterRef("session_id"))))
