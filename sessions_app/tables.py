"""django-tables2 tables for sessions and messages, over a keyset page's rows (the table
never re-sorts or counts); cells are f-strings of escaped values.
"""

from __future__ import annotations

import inspect
from html import escape

import django_tables2 as tables
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator
from django.utils.translation import gettext, gettext_lazy, pgettext, pgettext_lazy
from django_tables2.data import TableListData

from redaction import redact

from .content import as_text
from .formatting import compact, duration, per_language
from .links import TranscriptLinks
from .templatetags.explorer import (
    cost_badge,
    role_label,
    source_badge,
    started_cell,
    text_html,
    time_html,
    visibility_label,
)

NUM = {"td": {"class": "num"}, "th": {"class": "num"}}


_PLANS: dict[tuple, tuple] = {}


class PresortedData(TableListData):
    def order_by(self, aliases):
        return None


class KeysetTable(tables.Table):
    """django-tables2 columns and headers, a body built in Python: its cell rendering cost
    about a millisecond per row (measured), so the body calls the ``render_<column>`` methods
    once per cell and joins the HTML."""

    class Meta:
        template_name = "includes/_table.html"

    def __init__(self, data, *, order_by, **kwargs):
        super().__init__(PresortedData(data), order_by=order_by, **kwargs)

    def _cell_plan(self) -> tuple:
        key = (type(self), tuple(b.name for b in self.columns), self.default, repr(self.attrs))
        if key not in _PLANS:
            _PLANS[key] = tuple(self._column_plan(bound) for bound in self.columns)
        return _PLANS[key]

    def _column_plan(self, bound) -> tuple:
        render = getattr(type(self), f"render_{bound.name}", None)
        takes = inspect.signature(render).parameters if render else {}
        td = bound.attrs["td"]
        return (
            format_html("<td {}>", td.as_html()) if td else mark_safe("<td>"),
            render,
            "record" in takes,
            "value" in takes,
            str(bound.accessor),
            bound.column.empty_values,
            bound.default,
        )

    def body_html(self) -> SafeString:
        plan = self._cell_plan()
        out = []
        for index, record in enumerate(self.data):
            out.append('<tr class="even">' if index % 2 == 0 else '<tr class="odd">')
            for td, render, wants_record, wants_value, accessor, empty, default in plan:
                value = getattr(record, accessor, None)
                if value in empty:
                    cell = text_html(default)
                elif render is None:
                    cell = text_html(value)
                else:
                    kwargs = {}
                    if wants_record:
                        kwargs["record"] = record
                    if wants_value:
                        kwargs["value"] = value
                    cell = text_html(render(self, **kwargs))
                out.append(f"{td}{cell}</td>")
            out.append("</tr>")
        if not out and self.empty_text:
            return format_html(
                '<tr><td colspan="{}">{}</td></tr>', len(self.columns), self.empty_text
            )
        return mark_safe("".join(out))


@per_language
def _session_words() -> dict:
    # Escaped, once per language; the ``%(…)s`` slots take escaped values.
    return {
        "chain_title": escape(gettext("Continues or branches from %(parent)s")),
        "chain": escape(pgettext("session lineage", "chain")),
        "tokens_title": escape(gettext("input %(input)s · output %(output)s")),
        "not_live": escape(gettext("Not part of the live transcript")),
        "no_text_tool": escape(gettext("(no text: %(tool)s)")),
        "no_text": escape(gettext("(no text)")),
        "copy_id": escape(gettext("Copy message id")),
        "copy": escape(gettext("Copy")),
        "no_time": format_html('<span class="muted">{}</span>', gettext("no time")),
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
    # The team's annotations (annotations_app): shown when the view passes ``annotations``.
    select = tables.Column(verbose_name=gettext_lazy("Select"), orderable=False, empty_values=())
    started_at = tables.Column(verbose_name=gettext_lazy("Started"))
    title = tables.Column(verbose_name=gettext_lazy("Title"), orderable=False, empty_values=())
    tags = tables.Column(verbose_name=gettext_lazy("Tags"), orderable=False, empty_values=())
    scores = tables.Column(verbose_name=gettext_lazy("Scores"), orderable=False, empty_values=())
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
        empty_text = gettext_lazy(
            "No session matches these filters. Loosen a filter or reset them."
        )
        attrs = {"class": "data-table sessions-table"}

    def __init__(self, data, *, order_by, shape, show_previews=True, annotations=None, **kwargs):
        exclude = list(kwargs.pop("exclude", ()))
        if not shape.has_column("sessions", "tool_call_count"):
            exclude.append("tool_call_count")
        # ``annotations``: an annotations_app.listing.AnnotationCells, or None for no columns.
        self.annotations = annotations
        if annotations is None:
            exclude += ["select", "tags", "scores"]
        else:
            if not annotations.selectable:
                exclude.append("select")
            if not annotations.scored:
                exclude.append("scores")
        self.show_previews = show_previews
        self.links = TranscriptLinks()
        super().__init__(data, order_by=order_by, exclude=exclude, **kwargs)

    def render_select(self, record):
        return self.annotations.select_cell(record)

    def render_tags(self, record):
        return self.annotations.tags_cell(record)

    def render_scores(self, record):
        return self.annotations.scores_cell(record)

    def render_started_at(self, value):
        return started_cell(value)

    def render_title(self, record):
        url = self.links.session(record.id, getattr(record, "store", None))
        preview = getattr(record, "first_user_preview", None) if self.show_previews else None
        if record.title:
            label = escape(str(record.title))
        elif preview:
            label = (
                f'<span class="untitled">{escape(Truncator(redact(as_text(preview))).chars(90))}'
                "</span>"
            )
        else:
            label = f'<span class="untitled">{escape(str(record.id))}</span>'
        chain = ""
        if record.parent_session_id:
            words = _session_words()
            chain = (
                f' <span class="badge chain" title="'
                f'{words["chain_title"] % {"parent": escape(str(record.parent_session_id))}}">'
                f"↳ {words['chain']}</span>"
            )
        cell = f'<a href="{escape(url)}">{label}</a>{chain}' if url else f"{label}{chain}"
        return mark_safe(cell)  # noqa: S308 - every value is escaped above

    def render_source(self, value):
        return source_badge(value)

    def render_tokens(self, record):
        return mark_safe(  # noqa: S308 - every value is escaped
            '<span title="'
            + _session_words()["tokens_title"]
            % {
                "input": escape(str(record.input_tokens or 0)),
                "output": escape(str(record.output_tokens or 0)),
            }
            + f'">{escape(str(compact(record.total_tokens)))}</span>'
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
class MessageTable(KeysetTable):
    """ "Time" sorts by id (insertion order: the only order an index gives on the whole table)."""

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
        empty_text = gettext_lazy(
            "No message matches these filters. Loosen a filter or reset them."
        )
        attrs = {"class": "data-table messages-table"}

    def render_id(self, record):
        mid = escape(str(record.id))
        words = _session_words()
        label = words["copy_id"]
        return mark_safe(  # noqa: S308 - every value is escaped
            f"{time_html(record.timestamp, seconds=True, empty=words['no_time'])}"
            f'<span class="age copy-id">#{mid} <button type="button" class="copy" data-copy="{mid}"'
            f' aria-label="{label} {mid}" title="{label}">{words["copy"]}</button></span>'
        )

    def render_session(self, record):
        title = getattr(record, "session_title", None)
        label = (
            escape(str(title))
            if title
            else f'<span class="untitled">{escape(str(record.session_id))}</span>'
        )
        url = getattr(record, "session_url", None)
        cell = f'<a href="{escape(url)}">{label}</a>' if url else label
        source = getattr(record, "session_source", None)
        if source:
            cell = f"{cell} {source_badge(source)}"
        return mark_safe(cell)  # noqa: S308 - every value is escaped

    def render_role(self, record):
        cell = f'<span class="role">{escape(str(role_label(record.role) or "—"))}</span>'
        if record.visibility != "live":
            cell += (
                f' <span class="badge warn" title="{_session_words()["not_live"]}">'
                f"{escape(str(visibility_label(record.visibility)))}</span>"
            )
        return mark_safe(cell)  # noqa: S308 - every value is escaped

    def render_preview(self, record):
        text = escape(Truncator(redact(as_text(getattr(record, "preview", None)))).chars(200))
        if not text:
            words = _session_words()
            text = (
                f'<span class="muted">{words["no_text_tool"] % {"tool": escape(str(record.tool_name))}}'
                "</span>"
                if record.tool_name
                else f'<span class="muted">{words["no_text"]}</span>'
            )
        url = getattr(record, "message_url", None)
        return mark_safe(  # noqa: S308 - every value is escaped
            f'<a class="preview" href="{escape(url)}">{text}</a>' if url else text
        )
