"""django-tables2 tables for sessions (and, later, messages).

Rows arrive already sorted and sliced by a keyset page (``sessions_app.pagination``), so the
tables take them as :class:`PresortedData`: the header links still toggle the sort, but the
table never re-sorts or counts in Python.  Cells render with ``format_html`` rather than a
template per cell: a 50-row page would otherwise render hundreds of small templates.
"""

from __future__ import annotations

import django_tables2 as tables
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.utils.text import Truncator, slugify
from django_tables2.data import TableListData

from .content import as_text
from .formatting import compact, duration
from .models import Session
from .redaction import redact
from .templatetags.explorer import cost_badge, source_badge, started_cell

NUM = {"td": {"class": "num"}, "th": {"class": "num"}}


class PresortedData(TableListData):
    """Rows the database already ordered: sorting here would be wasted work."""

    def order_by(self, aliases):
        return None


class SessionTable(tables.Table):
    started_at = tables.Column(verbose_name="Started")
    title = tables.Column(verbose_name="Title", orderable=False, empty_values=())
    source = tables.Column(verbose_name="Source")
    model = tables.Column(accessor="model_short", verbose_name="Model", orderable=False)
    message_count = tables.Column(verbose_name="Msgs", orderable=False, attrs=NUM)
    tool_call_count = tables.Column(verbose_name="Tools", orderable=False, attrs=NUM)
    tokens = tables.Column(verbose_name="Tokens", orderable=False, attrs=NUM, empty_values=())
    cost = tables.Column(verbose_name="Cost", orderable=False, attrs=NUM, empty_values=())
    duration = tables.Column(verbose_name="Duration", orderable=False, attrs=NUM, empty_values=())

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
        empty_text = "No session matches these filters. Loosen a filter or reset them."
        attrs = {"class": "data-table sessions-table"}
        template_name = "django_tables2/table.html"

    def __init__(self, rows, *, order_by, shape, show_previews=True, **kwargs):
        exclude = list(kwargs.pop("exclude", ()))
        if not shape.has_column("sessions", "tool_call_count"):
            exclude.append("tool_call_count")
        self.show_previews = show_previews
        super().__init__(PresortedData(rows), order_by=order_by, exclude=exclude, **kwargs)

    def render_started_at(self, value):
        return started_cell(value)

    def render_title(self, record):
        url = reverse("sessions:detail", args=[record.id])
        preview = getattr(record, "first_user_preview", None) if self.show_previews else None
        if record.title:
            label = format_html("{}", record.title)
        elif preview:
            label = format_html(
                '<span class="untitled">{}</span>', Truncator(redact(as_text(preview))).chars(90)
            )
        else:
            label = format_html('<span class="untitled">{}</span>', record.id)
        chain = ""
        if record.parent_session_id:
            chain = format_html(
                ' <span class="badge chain" title="Continues or branches from {}">↳ chain</span>',
                record.parent_session_id,
            )
        return format_html('<a href="{}">{}</a>{}', url, label, chain)

    def render_source(self, value):
        return source_badge(value)

    def render_tokens(self, record):
        return format_html(
            '<span title="input {} · output {}">{}</span>',
            record.input_tokens or 0,
            record.output_tokens or 0,
            compact(record.total_tokens),
        )

    def render_cost(self, record):
        return cost_badge(record)

    def render_duration(self, record):
        if record.ended_at is None:
            return mark_safe('<span class="muted" title="Never closed">open</span>')
        if record.duration_seconds is None:
            return mark_safe(
                '<span class="muted" title="Ended before it started (clock drift)">—</span>'
            )
        return duration(record.duration_seconds)


# Messages ---------------------------------------------------------------------------------
# Appended for the messages explorer (issue 3); the session table above is untouched.
def _time_cell(epoch_value) -> str:
    moment = Session(started_at=epoch_value).started
    if moment is None:
        return format_html('<span class="muted">no time</span>')
    local = timezone.localtime(moment)
    return format_html(
        '<time datetime="{}" title="{}">{}</time>',
        local.isoformat(timespec="seconds"),
        local.strftime("%Y-%m-%d %H:%M:%S %Z"),
        local.strftime("%Y-%m-%d %H:%M:%S"),
    )


class MessageTable(tables.Table):
    """One row per message. Rows come from a keyset page; the "Time" header sorts by id,
    which is insertion order (the only order an index answers on the whole table). Links
    are set on the rows beforehand (``selectors.link_messages``): an odd session id that
    cannot be routed gives a row without links rather than an error."""

    id = tables.Column(verbose_name="Time")
    # The accessor is the plain column: "session" would load the related row, once per row.
    session = tables.Column(
        accessor="session_id", verbose_name="Session", orderable=False, empty_values=()
    )
    role = tables.Column(verbose_name="Role", orderable=False, empty_values=())
    tool_name = tables.Column(verbose_name="Tool", orderable=False, default="")
    preview = tables.Column(verbose_name="Content", orderable=False, empty_values=())
    token_count = tables.Column(verbose_name="Tokens", orderable=False, default="", attrs=NUM)

    class Meta:
        fields = ()
        sequence = ("id", "session", "role", "tool_name", "preview", "token_count")
        order_by_field = "sort"
        empty_text = "No message matches these filters. Loosen a filter or reset them."
        attrs = {"class": "data-table messages-table"}
        template_name = "django_tables2/table.html"

    def __init__(self, rows, *, order_by, **kwargs):
        super().__init__(PresortedData(rows), order_by=order_by, **kwargs)

    def render_id(self, record):
        return format_html(
            '{}<span class="age copy-id">#{} <button type="button" class="copy" data-copy="{}"'
            ' aria-label="Copy message id {}" title="Copy message id">Copy</button></span>',
            _time_cell(record.timestamp),
            record.id,
            record.id,
            record.id,
        )

    def render_session(self, record):
        title = getattr(record, "session_title", None)
        label = (
            format_html("{}", title)
            if title
            else format_html('<span class="untitled">{}</span>', record.session_id)
        )
        url = getattr(record, "session_url", None)
        cell = format_html('<a href="{}">{}</a>', url, label) if url else label
        source = getattr(record, "session_source", None)
        if source:
            cell = format_html(
                '{} <span class="badge source source-{}">{}</span>',
                cell,
                slugify(source) or "none",
                source,
            )
        return cell

    def render_role(self, record):
        cell = format_html('<span class="role">{}</span>', record.role or "—")
        if record.visibility != "live":
            cell = format_html(
                '{} <span class="badge warn" title="Not part of the live transcript">{}</span>',
                cell,
                record.visibility,
            )
        return cell

    def render_preview(self, record):
        text = Truncator(redact(as_text(getattr(record, "preview", None)))).chars(200)
        if not text:
            text = format_html(
                '<span class="muted">(no text{})</span>',
                f": {record.tool_name}" if record.tool_name else "",
            )
        url = getattr(record, "message_url", None)
        return format_html('<a class="preview" href="{}">{}</a>', url, text) if url else text
