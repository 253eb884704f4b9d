"""``/``: the home page. How today and this week compare with the day and week before, what
is running now, the latest failures and the week's costliest sessions (see
:mod:`live_app.home`), then sessions per source and the latest sessions."""

from __future__ import annotations

import time

from django.conf import settings
from django.shortcuts import render
from django.utils.http import urlencode
from django.views.decorators.http import require_GET

from accounts_app.roles import can_see_content
from hermes_explorer import store
from sessions_app import selectors
from sessions_app.merged_list import chosen_stores, profile_column, requested_profiles
from sessions_app.tables import SessionTable

from . import across, home
from .activity import DEFAULT_MINUTES, live_sessions

RUNNING_SHOWN = 5
LATEST_SESSIONS = 12


@require_GET
def overview(request):
    shape = store.shape()
    budget = settings.HERMES_INSIGHTS_TIMEOUT
    notes: list[str] = []
    parts = chosen_stores(request, notes) or [None]

    def read(_store) -> dict:
        return {
            "figures": home.figures(budget=budget),
            "failures": home.latest_failures(budget=budget),
            "latest": selectors.latest_sessions(LATEST_SESSIONS),
            "running": live_sessions(minutes=DEFAULT_MINUTES, with_content=False),
        }

    # Each profile read once; one that cannot be read is named in the notes.
    found = across.each(parts, read, notes)
    # None when no profile could be read: the notes say why, the figures are left out.
    figures = home.combine([(one, part["figures"]) for one, part in found]) if found else None
    chosen = urlencode([("profile", name) for name in requested_profiles(request)])
    for cell in (c for row in figures["table"] for c in row["cells"]) if chosen and found else ():
        # The page behind a figure covers the profiles this one does.
        cell["href"] += ("&" if "?" in cell["href"] else "?") + chosen
    latest_failures = home.newest(found, "failures", lambda r: r["timestamp"] or 0, home.LATEST)
    running = home.newest(found, "running", lambda s: (s.activity or 0, s.id))
    named = len(parts) > 1
    latest = SessionTable(
        home.newest(found, "latest", lambda s: (s.started_at or 0, s.id), LATEST_SESSIONS),
        order_by=None,
        shape=shape,
        orderable=False,
        show_previews=can_see_content(request.user),
        exclude=("tokens", "cost", "duration"),
        **({"extra_columns": [profile_column()], "sequence": ("profile", "...")} if named else {}),
    )
    return render(
        request,
        "live_app/overview.html",
        {
            "figures": figures,
            "stale": found and time.time() - figures["generated_at"] > home.TTL,
            "latest_failures": latest_failures,
            "notes": notes,
            "running": running[:RUNNING_SHOWN],
            "running_count": len(running),
            "live_minutes": DEFAULT_MINUTES,
            "sources": home.by_source(part["figures"]["sources"] for _one, part in found),
            "latest": latest,
            "shape": shape,
            "named": named,
            "chosen": chosen,
        },
    )
