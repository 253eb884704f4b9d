"""``/sessions/<id>/timeline/`` (:mod:`sessions_app.timeline`): a keyset page of rows at a
time; ``?_export=csv|json|jsonl`` gives every row.

The totals section is rendered once per session, toggles, language and role and kept while the
file is unchanged, so paging renders only the rows: measured (``bench/benchmark.py``, 1M-message
store) a fifth to a quarter less server CPU on 2,000- and 30,000-message sessions."""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.translation import get_language, gettext
from django.views.decorators.http import require_GET

from accounts_app.roles import can_see_content
from hermes_explorer import store, stores

from .. import exports, formatting, selectors
from ..links import TranscriptLinks
from ..templatetags.explorer import role_labels
from ..timeline import (
    EXPORT_COLUMNS,
    SPENT_LABELS,
    Step,
    session_page,
    session_timeline,
)
from ..visibility import Visibility

TOTALS = "sessions_app/_timeline_totals.html"
# Seconds a rendered totals section is kept (a changed template shows within them).
TOTALS_TTL = 600


@require_GET
def timeline(request, session_id: str):
    session = selectors.session_detail(session_id)
    if session is None:
        raise Http404(gettext("No session with this id in the state.db."))
    visibility = Visibility.from_params(request.GET.getlist("show"))
    fmt = exports.requested_format(request)
    if fmt is not None:
        found = session_timeline(session.id, visibility, every_row=True)
        current = stores.current() if stores.multi() else None
        bits = [current.name if current is not None else "", session.id]
        return exports.stream_export(
            fmt=fmt,
            columns=EXPORT_COLUMNS,
            chunks=[[step.as_row() for step in found.steps]],
            filename=exports.export_filename("timeline", bits, fmt),
            spreadsheet=exports.wants_spreadsheet(request),
            raw=exports.wants_raw(request),
        )
    steps, page = session_page(session.id, visibility, request.GET.get("cursor"))
    links = TranscriptLinks() if can_see_content(request.user) else None
    show = f"?show={visibility.as_param()}"

    def totals() -> str:
        found = session_timeline(session.id, visibility)
        slowest = shown_rows(found.slowest, session.id, links, show)
        return render_to_string(TOTALS, {"timeline": found, "slowest": slowest})

    parts = (session.id, visibility.as_param(), get_language(), links is not None)
    return render(
        request,
        "sessions_app/session_timeline.html",
        {
            "session": session,
            "missing": store.shape().missing_columns("messages", ("timestamp", "tool_call_id")),
            "totals": store.while_unchanged("timeline-totals", parts, totals, TOTALS_TTL),
            "page": page,
            "visibility": visibility,
            "rows": shown_rows(steps, session.id, links, show),
        },
    )


def shown_rows(steps: list[Step], session_id: str, links, show: str) -> list[dict]:
    """What the template writes of each step, its texts made once here: formatting each value
    with template filters costs many times more on a page of hundreds of rows."""
    formats = formatting.page_formats()
    roles = role_labels()[0]
    spent = {kind: gettext(label) for kind, label in SPENT_LABELS.items()}
    out = []
    for s in steps:
        link = links.message(session_id, s.message_id) if links is not None else None
        out.append(
            {
                "id": s.message_id,
                "link": f"{link}{show}" if link else None,
                "role": roles.get(s.role, s.role or ""),
                "tool": s.tool_name,
                "calls": ", ".join(s.calls),
                "at_iso": s.at_iso,
                "at": formatting.iso_text(s.at_iso) if s.at_iso else "",
                "waited": formatting.seconds_text(s.waited_s, formats),
                "spent_on": s.spent_on,
                "spent": spent.get(s.spent_on, ""),
                "tool_s": "" if s.tool_s is None else formatting.seconds_text(s.tool_s, formats),
                "together": s.parallel_calls if (s.parallel_calls or 0) > 1 else None,
            }
        )
    return out
