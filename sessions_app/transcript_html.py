"""One transcript entry as HTML (``<li>``), built in Python: through templates a page of a
hundred entries was two thirds of the session page's time (measured).  Every value is escaped
once (``html.escape``); text arrives already redacted (``selectors.transcript_entries``).
"""

from __future__ import annotations

import functools
from html import escape

from django.middleware.csrf import get_token
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator, slugify
from django.utils.translation import gettext, ngettext

from .formatting import number, per_language
from .templatetags.explorer import role_labels, text_html, time_html

# Characters of a long body shown before "Show more".
BODY_HEAD = 3000


_v = text_html


@per_language
def entry_words() -> dict[str, str]:
    """The words every entry repeats, escaped, once per language (slots take escaped values)."""
    words = {
        "compression": gettext("compression summary"),
        "finish": gettext("finish: %(reason)s"),
        "permalink": gettext("Link to this message"),
        "tok": gettext("%(n)s tok"),
        "reasoning": gettext("Reasoning"),
        "malformed": gettext("Tool calls JSON is malformed"),
        "raw_calls": gettext("Raw tool_calls"),
        "result_chars": gettext("→ result %(n)s chars"),
        "no_result": gettext("(no result on this page)"),
        "arguments": gettext("Arguments"),
        "result": gettext("Result"),
        "no_content": gettext("(no content)"),
        "show_more": gettext("Show more: %(shown)s of %(total)s characters are on this page"),
        "show_all": gettext("Show all %(total)s characters"),
        "cut_to": gettext("Cut to %(shown)s characters for the page"),
        "full_text": gettext("open the full text (%(total)s characters)"),
        "reveal_title": gettext("Show this message without redaction; the reveal is logged"),
    }
    return {key: escape(text) for key, text in words.items()}


@per_language
def reveal_label(count: int) -> str:
    return escape(
        ngettext("Reveal %(counter)s hidden secret", "Reveal %(counter)s hidden secrets", count)
        % {"counter": count}
    )


class EntryRenderer:
    """Renders entries for one request (reveal rights, and the CSRF token when needed)."""

    def __init__(self, request, *, can_reveal: bool):
        self.request = request
        self.can_reveal = can_reveal
        self.words = entry_words()
        self.roles, self.visibilities = role_labels()

    @functools.cached_property
    def csrf_input(self) -> str:
        token = get_token(self.request) if self.request is not None else ""
        if token and token != "NOTPROVIDED":
            return f'<input type="hidden" name="csrfmiddlewaretoken" value="{_v(token)}">'
        return ""

    def reveal_button(self, entry) -> str:
        if not (self.can_reveal and entry.redacted):
            return "\n"
        message = entry.message
        url = reverse("sessions:reveal", args=[message.session_id, message.id])
        return (
            f'<form method="post" action="{_v(url)}" class="reveal-form">{self.csrf_input}'
            f'<button type="submit" class="link-button" title="{self.words["reveal_title"]}">'
            f"{reveal_label(entry.redacted)}</button></form>\n"
        )

    def body(self, entry) -> str:
        text = entry.text
        message = entry.message
        if text:
            if len(text) > BODY_HEAD:
                words = self.words
                shown = escape(number(len(text)))
                total = escape(number(entry.length))
                if entry.truncated:
                    summary = words["show_more"] % {"shown": shown, "total": total}
                else:
                    summary = words["show_all"] % {"total": total}
                out = (
                    f'<div class="content"><pre class="body">{_v(text[:BODY_HEAD])}</pre>'
                    f'<details class="more"><summary>{summary}</summary>'
                    f'<pre class="body">{_v(text[BODY_HEAD:])}</pre></details>'
                )
                if entry.truncated:
                    url = reverse("sessions:message_text", args=[message.session_id, message.id])
                    cut = words["cut_to"] % {"shown": shown}
                    full = words["full_text"] % {"total": total}
                    out += f'<p class="truncated-note">{cut} · <a href="{_v(url)}">{full}</a></p>'
                return out + "</div>\n"
            return f'<pre class="body">{_v(text)}</pre>\n'
        if message.role == "assistant" and entry.calls:
            return "\n"
        return f'<p class="muted empty-content">{self.words["no_content"]}</p>\n'

    def entry(self, entry) -> SafeString:
        m = entry.message
        visibility = m.visibility
        finish = m.finish_reason
        words = self.words
        role = self.roles.get(m.role, m.role)
        heading = [
            f'<span class="role">{_v(role or "?")}</span>',
            f'<span class="tool-name">{_v(m.tool_name)}</span>' if m.tool_name else "",
            f'<span class="badge vis">{_v(self.visibilities.get(visibility, visibility))}</span>'
            if visibility != "live"
            else "",
            f'<span class="badge">{words["compression"]}</span>' if m.compressed_summary else "",
            f'<span class="badge warn">{words["finish"] % {"reason": _v(finish)}}</span>'
            if finish and finish != "stop" and finish != "tool_calls"
            else "",
            f'<a class="permalink" href="#m{_v(m.id)}" title="{words["permalink"]}">'
            f"{_v(time_html(m.timestamp, seconds=True))}</a>",
            f'<span class="muted">{words["tok"] % {"n": _v(m.token_count)}}</span>'
            if m.token_count
            else "",
            self.reveal_button(entry),
        ]
        head = [
            f'\n<li id="m{_v(m.id)}" class="msg role-{slugify(str(m.role))} vis-{_v(visibility)}">\n'
            '  <div class="msg-head">\n    ',
            "\n    ".join(heading),
            "\n  </div>\n  ",
        ]
        reasoning = m.reasoning_text or m.reasoning_extra
        if reasoning:
            head.append(
                f'\n  <details class="reasoning"><summary>{words["reasoning"]}</summary>'
                f"<pre>{_v(reasoning)}</pre></details>\n  "
            )
        head += ["\n  ", self.body(entry), "\n  "]
        if entry.malformed_calls:
            head.append(
                f'<p class="badge warn">{words["malformed"]}</p><details><summary>'
                f"{words['raw_calls']}</summary><pre>{_v(Truncator(str(m.tool_calls)).chars(5000))}"
                "</pre></details>"
            )
        head.append("\n  ")
        for call, result in entry.calls:
            if result is not None:
                chars = words["result_chars"] % {"n": escape(number(result.length))}
                summary = f'<span class="muted">{chars}</span>'
            else:
                summary = f'<span class="muted">{words["no_result"]}</span>'
            head.append(
                f'\n  <details class="tool-call" id="call-{slugify(str(call.call_id))}">\n'
                f'    <summary><span class="tool-badge">{_v(call.name)}</span> {summary}'
                "</summary>\n"
                f'    <div class="tool-args"><h4>{words["arguments"]}</h4>'
                f"<pre>{_v(call.arguments)}</pre></div>\n    "
            )
            if result is not None:
                head.append(
                    f'<div class="tool-result" id="m{_v(result.message.id)}">'
                    f"<h4>{words['result']}</h4>"
                    f"{self.reveal_button(result)}{self.body(result)}</div>"
                )
            head.append("\n  </details>\n  ")
        head.append("\n</li>\n\n")
        return mark_safe("".join(head))  # noqa: S308 - every value is escaped above


def entries_html(entries, request, *, can_reveal: bool) -> SafeString:
    renderer = EntryRenderer(request, can_reveal=can_reveal)
    return mark_safe("".join(renderer.entry(e) for e in entries))  # noqa: S308 - escaped
