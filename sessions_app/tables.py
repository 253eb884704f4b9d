"""django-tables2 tables for sessions (and, later, messages).

Rows arrive already sorted and sliced by a keyset page (``sessions_app.pagination``), so the
tables take them as :class:`PresortedData`: the header links still toggle the sort, but the
table never re-sorts or counts in Python.  Cells render with ``format_html`` rather than a
template per cell: a 50-row page would otherwise render hundreds of small templates.
"""

from __future__ import annotations

import inspect

import django_tables2 as tables
from django.urls import reverse
from django.utils.formats import localize
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator, slugify
from django.utils.translation import gettext, gettext_lazy, pgettext, pgettext_lazy
from django_tables2.data import TableListData

from hermes_explorer.redaction import redact

from .content import as_text
from .formatting import compact, duration, per_language
from .models import Session
from .templatetags.explorer import (
    cost_badge,
    role_label,
    source_badge,
    started_cell,
    time_html,
    visibility_label,
)

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


@per_language
def _session_words() -> dict:
    """What the session rows repeat, in the page's language (looked up once per language)."""
    return {
        "chain_title": gettext("Continues or branches from %(parent)s"),
        "chain": pgettext("session lineage", "chain"),
        "tokens_title": gettext("input %(input)s · output %(output)s"),
        "not_live": gettext("Not part of the live transcript"),
        "open": format_html(
            '<span class="muted" title="{}">{}</span>',
            gettext("Never closed"),
            pgettext("session", "open"),
        ),
        "drift": format_html(
            '<span class="muted" title="{}">—</span>',
            gettext("Ended before it started (clock drift)"),
        ),
    }


class SessionTable(KeysetTable):
    started_at = tables.Column(verbose_name=gettext_lazy("Started"))
    title = tables.Column(verbose_name=gettext_lazy("Title"), orderable=False, empty_values=())
    source = tables.Column(verbose_name=gettext_lazy("Source"))
    model = tables.Column(
        accessor="model_short", verbose_name=gettext_lazy("Model"), orderable=False
    )
    message_count = tables.Column(
        verbose_name=pgettext_lazy("column", "Msgs"), orderable=False, attrs=NUM
    )
    tool_call_count = tables.Column(
        verbose_name=pgettext_lazy("column", "Tools"), orderable=False, attrs=NUM
    )
    tokens = tables.Column(
        verbose_name=gettext_lazy("Tokens"), orderable=False, attrs=NUM, empty_values=()
    )
    cost = tables.Column(
        verbose_name=gettext_lazy("Cost"), orderable=False, attrs=NUM, empty_values=()
    )
    duration = tables.Column(
        verbose_name=gettext_lazy("Duration"), orderable=False, attrs=NUM, empty_values=()
    )

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
        empty_text = gettext_lazy(
            "No session matches these filters. Loosen a filter or reset them."
        )
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
            words = _session_words()
            chain = format_html(
                ' <span class="badge chain" title="{}">↳ {}</span>',
                words["chain_title"] % {"parent": record.parent_session_id},
                words["chain"],
            )
        return format_html('<a href="{}">{}</a>{}', url, label, chain)

    def render_source(self, value):
        return source_badge(value)

    def render_tokens(self, record):
        return format_html(
            '<span title="{}">{}</span>',
            _session_words()["tokens_title"]
            % {"input": record.input_tokens or 0, "output": record.output_tokens or 0},
            compact(record.total_tokens),
        )

    def render_cost(self, record):
        return cost_badge(record)

    def render_duration(self, record):
        if record.ended_at is None:
            return _session_words()["open"]
        if record.duration_seconds is None:
            return _session_words()["drift"]
        return duration(record.duration_seconds)


# Messages ---------------------------------------------------------------------------------
def no_time() -> SafeString:
    return format_html('<span class="muted">{}</span>', gettext("no time"))


class MessageTable(KeysetTable):
    """One row per message. Rows come from a keyset page; the "Time" header sorts by id,
    which is insertion order (the only order an index answers on the whole table). Links
    are set on the rows beforehand (``selectors.link_messages``): an odd session id that
    cannot be routed gives a row without links rather than an error."""

    id = tables.Column(verbose_name=gettext_lazy("Time"))
    # The accessor is the plain column: "session" would load the related row, once per row.
    session = tables.Column(
        accessor="session_id",
        verbose_name=gettext_lazy("Session"),
        orderable=False,
        empty_values=(),
    )
    role = tables.Column(verbose_name=gettext_lazy("Role"), orderable=False, empty_values=())
    tool_name = tables.Column(verbose_name=gettext_lazy("Tool"), orderable=False, default="")
    preview = tables.Column(verbose_name=gettext_lazy("Content"), orderable=False, empty_values=())
    token_count = tables.Column(
        verbose_name=gettext_lazy("Tokens"), orderable=False, default="", attrs=NUM
    )

    class Meta(KeysetTable.Meta):
        fields = ()
        sequence = ("id", "session", "role", "tool_name", "preview", "token_count")
        order_by_field = "sort"
        empty_text = gettext_lazy(
            "No message matches these filters. Loosen a filter or reset them."
        )
        attrs = {"class": "data-table messages-table"}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # The same words on every row: looked up once per page.
        self._copy_words = (gettext("Copy message id"), gettext("Copy"))
        self._no_time = no_time()

    def render_id(self, record):
        return format_html(
            '{}<span class="age copy-id">#{} <button type="button" class="copy" data-copy="{}"'
            ' aria-label="{} {}" title="{}">{}</button></span>',
            time_html(record.timestamp, seconds=True, empty=self._no_time),
            record.id,
            record.id,
            self._copy_words[0],
            record.id,
            self._copy_words[0],
            self._copy_words[1],
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
        cell = format_html('<span class="role">{}</span>', role_label(record.role) or "—")
        if record.visibility != "live":
            cell = format_html(
                '{} <span class="badge warn" title="{}">{}</span>',
                cell,
                _session_words()["not_live"],
                visibility_label(record.visibility),
            )
        return cell

    def render_preview(self, record):
        text = Truncator(redact(as_text(getattr(record, "preview", None)))).chars(200)
        if not text:
            text = format_html(
                '<span class="muted">{}</span>',
                gettext("(no text: %(tool)s)") % {"tool": record.tool_name}
                if record.tool_name
                else gettext("(no text)"),
            )
        url = getattr(record, "message_url", None)
        return format_html('<a class="preview" href="{}">{}</a>', url, text) if url else text
