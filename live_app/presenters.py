"""The live table's rows as HTML, built in Python.

Every poll re-renders the table, and a template loop over a hundred rows of eleven cells cost
more than the queries behind it; here every value is escaped once and a row is one f-string.
"""

from __future__ import annotations

from html import escape
from urllib.parse import quote

from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import pgettext

from profiles_app.links import store_reverse
from sessions_app.formatting import compact, duration, number, usd
from sessions_app.templatetags.explorer import role_label, source_badge, time_html

from .activity import LiveSession

_PLACEHOLDER = "__session__"


def _row(s: LiveSession, url: str, show_previews: bool) -> str:
    latest = (
        f'<span class="role">{escape(str(role_label(s.last_role)))}</span>' if s.last_role else ""
    )
    if show_previews and s.preview:
        latest += f' <span class="preview">{escape(s.preview)}</span>'
    tool = f'<span class="tool-badge">{escape(s.last_tool)}</span>' if s.last_tool else ""
    calls = "—" if s.tool_call_count is None else number(s.tool_call_count)
    badge = (
        f' <span class="badge">{escape(pgettext("session", "open"))}</span>' if s.is_open else ""
    )
    return (
        f'<tr data-session="{escape(s.id)}"><td>{time_html(s.activity, seconds=True)}</td>'
        f"<td>{source_badge(s.source)}</td>"
        f'<td><a href="{escape(url)}">{escape(s.title or s.id)}</a>{badge}</td>'
        f"<td>{escape(s.model or '—')}</td><td>{escape(duration(s.running_seconds))}</td>"
        f'<td class="num">{number(s.message_count)}</td><td class="num">{calls}</td>'
        f'<td class="num">{escape(compact(s.tokens))}</td>'
        f'<td class="num">{escape(usd(s.cost))}</td><td>{latest}</td><td>{tool}</td></tr>'
    )


def rows_html(sessions: list[LiveSession], *, show_previews: bool) -> SafeString:
    detail = store_reverse("sessions:detail", [_PLACEHOLDER])
    return mark_safe(  # noqa: S308 - every value from the store is escaped in _row
        "\n".join(
            _row(s, detail.replace(_PLACEHOLDER, quote(s.id, safe="")), show_previews)
            for s in sessions
        )
    )
