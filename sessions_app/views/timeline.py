"""``/sessions/<id>/timeline/``: where the session's time went (:mod:`sessions_app.timeline`);
``?_export=csv|json|jsonl`` gives one row per message."""

from __future__ import annotations

import functools
from html import escape

from django.http import Http404
from django.shortcuts import render
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext
from django.views.decorators.http import require_GET

from accounts_app.roles import can_see_content
from hermes_explorer import stores

from .. import exports, formatting, selectors
from ..links import TranscriptLinks
from ..templatetags.explorer import role_labels
from ..timeline import EXPORT_COLUMNS, SPENT_LABELS, Step, session_timeline
from ..visibility import Visibility


@require_GET
def timeline(request, session_id: str):
    session = selectors.session_detail(session_id)
    if session is None:
        raise Http404(gettext("No session with this id in the state.db."))
    visibility = Visibility.from_params(request.GET.getlist("show"))
    found = session_timeline(session.id, visibility)
    fmt = exports.requested_format(request)
    if fmt is not None:
        current = stores.current() if stores.multi() else None
        bits = [current.name if current is not None else "", session.id]
        return exports.stream_export(
            fmt=fmt,
            columns=EXPORT_COLUMNS,
            chunks=[found.rows()],
            filename=exports.export_filename("timeline", bits, fmt),
            spreadsheet=exports.wants_spreadsheet(request),
            raw=exports.wants_raw(request),
        )
    if can_see_content(request.user):
        links, show = TranscriptLinks(), f"?show={visibility.as_param()}"
        for step in found.steps:
            step.link = (links.message(session.id, step.message_id) or "") + show
    return render(
        request,
        "sessions_app/session_timeline.html",
        {
            "session": session,
            "timeline": found,
            "visibility": visibility,
            "steps_html": steps_html(found.steps),
            "bars_html": bars_html(found.segments, 4) + bars_html(found.stacked, 44),
        },
    )


def steps_html(steps: list[Step]) -> SafeString:
    """The rows of the table of every message, built with f-strings and ``html.escape`` like
    the session tables' cells (:mod:`sessions_app.tables`).  Measured in one process on the
    2,000-message session of the benchmark store: the same rows from template tags took about
    970 ms, these 30 to 60 ms (the page's target is 50 ms)."""
    spent = {
        kind: f'<span class="key t-{kind}"></span> {escape(gettext(label))}'
        for kind, label in SPENT_LABELS.items()
    }
    spent[None] = ""
    together = escape(gettext("calls of one message, running at the same time"))
    french = formatting.french()
    # Names and roles repeat: each is escaped once.  Times and seconds are digits and signs.
    text = functools.cache(escape)
    roles = role_labels()[0]

    out = []
    for s in steps:
        number = f'<a href="{escape(s.link)}">{s.message_id}</a>' if s.link else s.message_id
        if s.tool_name:
            tool = f"<code>{text(s.tool_name)}</code>"
        elif s.calls:
            tool = f'<span class="muted">→ {text(", ".join(s.calls))}</span>'
        else:
            tool = ""
        at = "—"
        if s.at_iso:
            day, clock = s.at_iso[:10], s.at_iso[11:19]
            shown = f"{day[8:10]}/{day[5:7]}/{day[:4]} {clock}" if french else f"{day} {clock}"
            at = f'<time datetime="{s.at_iso}">{shown}</time>'
        tool_s = ""
        if s.tool_s is not None:
            tool_s = formatting.seconds_text(s.tool_s, french)
            if (s.parallel_calls or 0) > 1:
                tool_s += f' <span class="muted" title="{together}">‖{s.parallel_calls}</span>'
        out.append(
            f'<tr id="m{s.message_id}"><td>{number}</td>'
            f"<td>{text(roles.get(s.role, s.role or ''))}</td><td>{tool}</td><td>{at}</td>"
            f'<td class="num">{formatting.seconds_text(s.waited_s, french)}</td>'
            f"<td>{spent[s.spent_on]}</td>"
            f'<td class="num">{tool_s}</td></tr>'
        )
    return mark_safe("\n".join(out))  # noqa: S308 - every value is escaped above


def bars_html(segments: list[dict], y: int) -> SafeString:
    """A bar of the chart at ``y``: its segments (``<rect>``, kind and time on hover), built
    like the rows."""
    labels = {kind: escape(gettext(label)) for kind, label in SPENT_LABELS.items()}
    return mark_safe(  # noqa: S308 - only numbers and escaped labels
        "".join(
            f'<rect class="t-{s["kind"]}" x="{s["x"]}" y="{y}" width="{s["width"]}" height="28">'
            f"<title>{labels[s['kind']]} · {escape(s['text'])}</title></rect>"
            for s in segments
        )
    )
