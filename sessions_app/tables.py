"""django-tables2 tables for sessions (and, later, messages).

Rows arrive already sorted and sliced by a keyset page (``sessions_app.pagination``), so the
tables take them as :class:`PresortedData`: the header links still toggle the sort, but the
table never re-sorts or counts in Python.
"""

from __future__ import annotations

import django_tables2 as tables
from django_tables2.data import TableListData

from .models import Session


class PresortedData(TableListData):
    """Rows the database already ordered: sorting here would be wasted work."""

    def order_by(self, aliases):
        return None


class SessionTable(tables.Table):
    started_at = tables.TemplateColumn(
        template_name="sessions_app/_cells/started.html", verbose_name="Started"
    )
    title = tables.TemplateColumn(
        template_name="sessions_app/_cells/title.html", verbose_name="Title", orderable=False
    )
    source = tables.TemplateColumn(
        template_name="sessions_app/_cells/source.html", verbose_name="Source"
    )
    model = tables.Column(accessor="model_short", verbose_name="Model", orderable=False)
    message_count = tables.Column(
        verbose_name="Msgs", orderable=False, attrs={"td": {"class": "num"}, "th": {"class": "num"}}
    )
    tool_call_count = tables.Column(
        verbose_name="Tools",
        orderable=False,
        attrs={"td": {"class": "num"}, "th": {"class": "num"}},
    )
    tokens = tables.TemplateColumn(
        template_name="sessions_app/_cells/tokens.html",
        verbose_name="Tokens",
        orderable=False,
        attrs={"td": {"class": "num"}, "th": {"class": "num"}},
    )
    cost = tables.TemplateColumn(
        template_name="sessions_app/_cells/cost.html",
        verbose_name="Cost",
        orderable=False,
        attrs={"td": {"class": "num"}, "th": {"class": "num"}},
    )
    duration = tables.TemplateColumn(
        template_name="sessions_app/_cells/duration.html",
        verbose_name="Duration",
        orderable=False,
        attrs={"td": {"class": "num"}, "th": {"class": "num"}},
    )

    class Meta:
        model = Session
        fields = ()
        sequence = (
            "started_at",
            "title",
            "source",
            "model",
            "message_count",
            "tool_call_count",
            "tokens",
            "cost",
            "duration",
        )
        order_by_field = "sort"
        empty_text = "No session matches these filters."
        attrs = {"class": "data-table sessions-table"}
        template_name = "django_tables2/table.html"

    def __init__(self, rows, *, order_by, shape, **kwargs):
        exclude = list(kwargs.pop("exclude", ()))
        if not shape.has_column("sessions", "tool_call_count"):
            exclude.append("tool_call_count")
        super().__init__(PresortedData(rows), order_by=order_by, exclude=exclude, **kwargs)
