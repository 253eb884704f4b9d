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
from sessions_app.merged_list import chosen_stores, requested_profiles
from sessions_app.tables import SessionTable

from . import across, home
from .activity import DEFAULT_MINUTES, live_sessions

RUNNING_SHOWN = 5


@require_GET
def overview(request):
    shape = store.shape()
    latest = SessionTable(
        selectors.latest_sessions(12),
        order_by=None,
        shape=shape,
        orderable=False,
        show_previews=can_see_content(request.user),
        exclude=("tokens", "cost", "duration"),
    )
    budget = settings.HERMES_INSIGHTS_TIMEOUT
    notes: list[str] = []
    parts = chosen_stores(request, notes) or [None]
    found = across.each(parts, lambda _store: home.figures(budget=budget), notes)
    figures = home.combine(found)
    chosen = urlencode([("profile", name) for name in requested_profiles(request)])
    for cell in (c for row in figures["table"] for c in row["cells"]) if chosen else ():
        # The page behind a figure covers the profiles this one does.
        cell["href"] += ("&" if "?" in cell["href"] else "?") + chosen
    failures = across.each(parts, lambda _store: home.latest_failures(budget=budget), notes)
    latest_failures = sorted(
        ({**row, "store": store} for store, rows in failures for row in rows),
        key=lambda r: r["timestamp"] or 0,
        reverse=True,
    )[: home.LATEST]
    running = live_sessions(minutes=DEFAULT_MINUTES, with_content=False)
    return render(
        request,
        "live_app/overview.html",
        {
            "figures": figures,
            "stale": time.time() - figures["generated_at"] > home.TTL,
            "latest_failures": latest_failures,
            "notes": notes,
            "running": running[:RUNNING_SHOWN],
            "running_count": len(running),
            "live_minutes": DEFAULT_MINUTES,
            "sources": selectors.source_overview(),
            "latest": latest,
            "shape": shape,
        },
    )
