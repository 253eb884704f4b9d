"""Which stores hold a session id: the old ``/sessions/<id>/`` form lands on the right one.

With several stores served, a link without the profile redirects to the one visible store
that has the session, offers a choice when several do, and is a 404 when none does.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from urllib.parse import quote

from django.db import DatabaseError
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import render
from django.urls import get_script_prefix
from django.utils.translation import gettext

from hermes_explorer import store as one_store
from hermes_explorer import stores as registry
from hermes_explorer.stores import Store
from redaction import redact

# Seconds one store may take to say whether it has the session.
LOOKUP_BUDGET = 1.0


@dataclass(frozen=True)
class Holder:
    store: Store
    title: str | None
    started_at: float | None
    url: str


def holders(session_id: str, among) -> list[tuple[Store, tuple]]:
    """``(store, (title, started_at))`` for each store of ``among`` that has the session."""
    found = []
    for store in among:
        try:
            with registry.using(store):
                shape = one_store.shape()
                title = "title" if shape.has_column("sessions", "title") else "NULL"
                row = one_store.one(
                    f"SELECT {title}, started_at FROM sessions WHERE id = ?",
                    [session_id],
                    budget=LOOKUP_BUDGET,
                )
        except (DatabaseError, sqlite3.Error) as exc:
            registry.REGISTRY.failed(store, exc)
            continue
        if row is not None:
            found.append((store, row))
    return found


def land(request, session_id: str, among) -> HttpResponseRedirect:
    """The redirect, the chooser page or a 404 for ``/sessions/<id>/…`` without a profile."""
    found = holders(session_id, among)
    if not found:
        raise Http404(gettext("No session with this id in the state.db."))
    base = get_script_prefix()
    rest = request.get_full_path()[len(base) :]
    targets = [
        Holder(store, redact(row[0]), row[1], f"{base}p/{quote(store.name, safe='')}/{rest}")
        for store, row in found
    ]
    if len(targets) == 1:
        return HttpResponseRedirect(targets[0].url)
    return render(
        request,
        "profiles_app/session_chooser.html",
        {"session_id": session_id, "holders": targets},
        status=300,
    )
