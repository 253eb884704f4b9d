"""django-tables2 tables for sessions (and, later, messages).

Rows arrive already sorted and sliced by a keyset page (``sessions_app.pagination``), so the
tables take them as :class:`PresortedData`: the header links still toggle the sort, but the
table never re-sorts or counts in Python.  Cells render with ``format_html`` rather than a
template per cell: a 50-row page would otherwise render hundreds of small templates.
"""

from __future__ import annotations

import inspect

import django_tables2 as tables
from django.utils.formats import localize
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator, slugify
from django_tables2.data import TableListData

from hermes_explorer.redaction import redact
from profiles_app.links import store_reverse

from .content import as_text
from .formatting import compact, duration
from .models import Session
from .templatetags.explorer import cost_badge, source_badge, started_cell, time_html

NUM = {"td": {"class": "num"}, "th": {"class": "num"}}


class PresortedData(TableListData):
    """Rows the database already ordered: sorting here would be wasted work."""

    def order_by(self, aliases):
        return None


class KeysetTable(tables.Table):
    """A table of one keyset page: django-tables2 columns and headers, a body built in Python.

    django-tables2 renders each cell through a bound row, an accessor, a signature lookup and
    a template node, which costs about a millisecond per row of nine columns (measured: most of
    a session list page).  The body here calls the same ``render_<column>`` methods (or shows
    the escaped value, or the column's default when empty) once per cell and joins the HTML;
    the header, the sort links and every attribute stay django-tables2's.
    """

    class Meta:
        template_name = "includes/_table.html"

    def __init__(self, data, *, order_by, **kwargs):
        super().__init__(PresortedData(data), order_by=order_by, **kwargs)

    def _cell_plan(self) -> list[tuple]:
        plan = []
        for bound in self.columns:
            name, column = bound.name, bound.column
            render = getattr(self, f"render_{name}", None)
            takes = frozenset(inspect.signature(render).parameters) if render else frozenset()
            accessor = str(bound.accessor)
            plan.append(
                (
                    format_html("<td {}>", bound.attrs["td"].as_html())
                    if bound.attrs["td"]
                    else mark_safe("<td>"),
                    render,
                    "record" in takes,
                    "value" in takes,
                    accessor,
                    column.empty_values,
                    bound.default,
                )
            )
        return plan

    def body_html(self) -> SafeString:
        plan = self._cell_plan()
        out = []
        for index, record in enumerate(self.data):
            out.append('<tr class="even">' if index % 2 == 0 else '<tr class="odd">')
            for td, render, wants_record, wants_value, accessor, empty, default in plan:
                value = getattr(record, accessor, None)
                if value in empty:
                    cell = conditional_escape(default)
                elif render is None:
                    cell = conditional_escape(localize(value))
                else:
                    kwargs = {}
                    if wants_record:
                        kwargs["record"] = record
                    if wants_value:
                        kwargs["value"] = value
                    cell = conditional_escape(render(**kwargs))
                out.append(f"{td}{cell}</td>")
            out.append("</tr>")
        if not out and self.empty_text:
            return format_html(
                '<tr><td colspan="{}">{}</td></tr>', len(self.columns), self.empty_text
            )
        return mark_safe("".join(out))


class SessionTable(KeysetTable):
    started_at = tables.Column(verbose_name="Started")
    title = tables.Column(verbose_name="Title", orderable=False, empty_values=())
    source = tables.Column(verbose_name="Source")
    model = tables.Column(accessor="model_short", verbose_name="Model", orderable=False)
    message_count = tables.Column(verbose_name="Msgs", orderable=False, attrs=NUM)
    tool_call_count = tables.Column(verbose_name="Tools", orderable=False, attrs=NUM)
    tokens = tables.Column(verbose_name="Tokens", orderable=False, attrs=NUM, empty_values=())
    cost = tables.Column(verbose_name="Cost", orderable=False, attrs=NUM, empty_values=())
    duration = tables.Column(verbose_name="Duration", orderable=False, attrs=NUM, empty_values=())

    class Meta(KeysetTable.Meta):
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

    def __init__(self, data, *, order_by, shape, show_previews=True, **kwargs):
        exclude = list(kwargs.pop("exclude", ()))
        if not shape.has_column("sessions", "tool_call_count"):
            exclude.append("tool_call_count")
        self.show_previews = show_previews
        super().__init__(data, order_by=order_by, exclude=exclude, **kwargs)

    def render_started_at(self, value):
        return started_cell(value)

    def render_title(self, record):
        url = store_reverse("sessions:detail", [record.id], getattr(record, "store", None))
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
NO_TIME = mark_safe('<span class="muted">no time</span>')


class MessageTable(KeysetTable):
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

    class Meta(KeysetTable.Meta):
        fields = ()
        sequence = ("id", "session", "role", "tool_name", "preview", "token_count")
        order_by_field = "sort"
        empty_text = "No message matches these filters. Loosen a filter or reset them."
        attrs = {"class": "data-table messages-table"}

    def render_id(self, record):
        return format_html(
            '{}<span class="age copy-id">#{} <button type="button" class="copy" data-copy="{}"'
            ' aria-label="Copy message id {}" title="Copy message id">Copy</button></span>',
            time_html(record.timestamp, seconds=True, empty=NO_TIME),
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
