"""One transcript entry as HTML (``<li>``), built in Python.

A transcript page shows a hundred entries, each a message with its head, body, reasoning and
tool calls paired with their results; through templates (an entry template including a body
and a reveal-button template, twice for a paired result) that was two thirds of the session
page (measured).  Here every value from the store is escaped once (``html.escape``) and an
entry is joined from strings.  The session page and the followed-session updates use it.

The text arrives already redacted (:func:`sessions_app.selectors.transcript_entries`):
nothing here reads the store or undoes a redaction.
"""

from __future__ import annotations

from django.contrib.humanize.templatetags.humanize import intcomma
from django.middleware.csrf import get_token
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator, slugify

from .templatetags.explorer import text_html, time_html

# Characters of a long body shown before "Show more".
BODY_HEAD = 3000


_v = text_html


def _slug(value) -> str:
    return slugify(str(value))


class EntryRenderer:
    """Renders entries for one request: whether the reader may reveal, and the CSRF token of
    the reveal forms (asked for only when a form is shown)."""

    def __init__(self, request, *, can_reveal: bool):
        self.request = request
        self.can_reveal = can_reveal
        self._csrf: str | None = None

    def _csrf_input(self) -> str:
        if self._csrf is None:
            token = get_token(self.request) if self.request is not None else ""
            self._csrf = (
                f'<input type="hidden" name="csrfmiddlewaretoken" value="{_v(token)}">'
                if token and token != "NOTPROVIDED"
                else ""
            )
        return self._csrf

    def reveal_button(self, entry) -> str:
        if not (self.can_reveal and entry.redacted):
            return "\n"
        message = entry.message
        url = reverse("sessions:reveal", args=[message.session_id, message.id])
        plural = "" if entry.redacted == 1 else "s"
        return (
            f'<form method="post" action="{_v(url)}" class="reveal-form">{self._csrf_input()}'
            '<button type="submit" class="link-button" title="Show this message without '
            f'redaction; the reveal is logged">Reveal {_v(entry.redacted)} hidden secret{plural}'
            "</button></form>\n"
        )

    def body(self, entry) -> str:
        text = entry.text
        message = entry.message
        if text:
            if len(text) > BODY_HEAD:
                shown = intcomma(len(text))
                total = intcomma(entry.length)
                if entry.truncated:
                    summary = f"Show more: {shown} of {total} characters are on this page"
                else:
                    summary = f"Show all {total} characters"
                out = (
                    f'<div class="content"><pre class="body">{_v(text[:BODY_HEAD])}</pre>'
                    f'<details class="more"><summary>{summary}</summary>'
                    f'<pre class="body">{_v(text[BODY_HEAD:])}</pre></details>'
                )
                if entry.truncated:
                    url = reverse("sessions:message_text", args=[message.session_id, message.id])
                    out += (
                        f'<p class="truncated-note">Cut to {shown} characters for the page · '
                        f'<a href="{_v(url)}">open the full text ({total} characters)</a></p>'
                    )
                return out + "</div>\n"
            return f'<pre class="body">{_v(text)}</pre>\n'
        if message.role == "assistant" and entry.calls:
            return "\n"
        return '<p class="muted empty-content">(no content)</p>\n'

    def entry(self, entry) -> SafeString:
        m = entry.message
        visibility = m.visibility
        finish = m.finish_reason
        head = [
            f'\n<li id="m{_v(m.id)}" class="msg role-{_slug(m.role)} vis-{_v(visibility)}">\n'
            '  <div class="msg-head">\n'
            f'    <span class="role">{_v(m.role or "?")}</span>\n'
            "    ",
            f'<span class="tool-name">{_v(m.tool_name)}</span>' if m.tool_name else "",
            "\n    ",
            f'<span class="badge vis">{_v(visibility)}</span>' if visibility != "live" else "",
            "\n    ",
            '<span class="badge">compression summary</span>' if m.compressed_summary else "",
            "\n    ",
            f'<span class="badge warn">finish: {_v(finish)}</span>'
            if finish and finish != "stop" and finish != "tool_calls"
            else "",
            f'\n    <a class="permalink" href="#m{_v(m.id)}" title="Link to this message">'
            f"{_v(time_html(m.timestamp, seconds=True))}</a>\n    ",
            f'<span class="muted">{_v(m.token_count)} tok</span>' if m.token_count else "",
            "\n    ",
            self.reveal_button(entry),
            "\n  </div>\n  ",
        ]
        reasoning = m.reasoning_text or m.reasoning_extra
        if reasoning:
            head.append(
                '\n  <details class="reasoning"><summary>Reasoning</summary>'
                f"<pre>{_v(reasoning)}</pre></details>\n  "
            )
        head += ["\n  ", self.body(entry), "\n  "]
        if entry.malformed_calls:
            head.append(
                '<p class="badge warn">Tool calls JSON is malformed</p><details><summary>Raw '
                f"tool_calls</summary><pre>{_v(Truncator(str(m.tool_calls)).chars(5000))}"
                "</pre></details>"
            )
        head.append("\n  ")
        for paired in entry.calls:
            call, result = paired.call, paired.result
            if result is not None:
                summary = f'<span class="muted">→ result {intcomma(result.length)} chars</span>'
            else:
                summary = '<span class="muted">(no result on this page)</span>'
            head.append(
                f'\n  <details class="tool-call" id="call-{_slug(call.call_id)}">\n'
                f'    <summary><span class="tool-badge">{_v(call.name)}</span> {summary}'
                "</summary>\n"
                '    <div class="tool-args"><h4>Arguments</h4>'
                f"<pre>{_v(call.arguments)}</pre></div>\n    "
            )
            if result is not None:
                head.append(
                    f'<div class="tool-result" id="m{_v(result.message.id)}"><h4>Result</h4>'
                    f"{self.reveal_button(result)}{self.body(result)}</div>"
                )
            head.append("\n  </details>\n  ")
        head.append("\n</li>\n\n")
        return mark_safe("".join(head))  # noqa: S308 - every value is escaped above


def entries_html(entries, request, *, can_reveal: bool) -> SafeString:
    renderer = EntryRenderer(request, can_reveal=can_reveal)
    return mark_safe("".join(renderer.entry(e) for e in entries))  # noqa: S308 - escaped
