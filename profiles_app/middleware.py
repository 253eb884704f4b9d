"""The store a request reads: ``/p/<profile>/…`` names it; otherwise the default one.

Under ``/p/<profile>/`` the prefix is taken off before the URL is resolved, the profile's store
is made current and the script prefix gains ``p/<profile>/``, so every ``reverse`` stays in the
profile.  A profile that does not exist, or that the user may not see, is a 404.
"""

from __future__ import annotations

import re
import sqlite3
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import quote

from django.contrib.auth.views import redirect_to_login
from django.db import DatabaseError
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import render
from django.urls import get_script_prefix, set_script_prefix
from django.utils.translation import gettext

from hermes_explorer import store as one_store
from hermes_explorer import stores as registry
from hermes_explorer.hermes_db.current import DEFAULT_ALIAS, using
from hermes_explorer.http_policy import API_PATH, SIGN_IN, api_error
from hermes_explorer.stores import Store
from redaction import redact

from .access import for_request

PREFIX = re.compile(r"^/p/([^/]+)(/.*)$")
# A session's pages without the profile (bookmarks from before there were several).
SESSION_PATH = re.compile(r"^/sessions/([^/]+)/")
# The old Datasette URLs address the default profile, whatever the user may see.
LEGACY = re.compile(r"^/state(?:[/.]|$)")
# Pages that read no store: open to a user who may see no profile at all.
STORELESS = re.compile(r"^/(?:accounts/|admin/|healthz$|metrics$|static/)")
# What a visitor who is not signed in may reach: nothing that reads or names a store.
ANONYMOUS = re.compile(r"^/(?:accounts/login/|admin/|healthz$|metrics$|i18n/setlang/|static/)")


class StoreScopeMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        match = PREFIX.match(request.path_info)
        api = match is not None and API_PATH.match(match.group(2))
        if not request.user.is_authenticated:
            if api:
                return api_error(match.group(2), 401, SIGN_IN, title="Sign-in", challenge=True)
            if not ANONYMOUS.match(request.path_info):
                return redirect_to_login(request.get_full_path())
            request.store, request.store_scoped = None, False
            request.profile_base = get_script_prefix()
            request._visible_stores = request.visible_stores = ()
            return self.get_response(request)
        visible = request.visible_stores = for_request(request)
        base = get_script_prefix()
        prefix = None
        if match:
            store = registry.by_name(match.group(1), visible)
            if store is None and api:
                return api_error(match.group(2), 404, "No such profile.")
            if store is None:
                raise Http404(gettext("No such profile."))
            request.path_info = match.group(2)
            prefix = f"{base}p/{store.name}/"
        elif LEGACY.match(request.path_info):
            store = registry.default_store()
            if store not in visible:
                raise Http404(gettext("No such profile."))
        else:
            store = fallback_store(visible)
            if store is None and not STORELESS.match(request.path_info):
                raise Http404(gettext("No profile to show."))
            session = SESSION_PATH.match(request.path_info)
            if session and request.method in ("GET", "HEAD") and registry.multi():
                return land(request, session.group(1), visible)
        request.store = store
        request.store_scoped = match is not None
        request.profile_base = base
        alias = store.alias if store is not None else DEFAULT_ALIAS
        with _scoped(alias, prefix, base):
            response = self.get_response(request)
        if getattr(response, "streaming", False):
            content = response.streaming_content
            response.streaming_content = _scoped_stream(content, alias, prefix, base)
        return response


def fallback_store(visible):
    """The default store of ``visible``, else the first readable one."""
    store = registry.default_store(visible)
    if store is None or len(visible) < 2 or registry.REGISTRY.status(store).readable:
        return store
    return next((other for other in visible if registry.REGISTRY.status(other).readable), store)


@contextmanager
def _scoped(alias, prefix, base):
    set_script_prefix(prefix or base)
    try:
        with using(alias):
            yield
    finally:
        set_script_prefix(base)


_END = object()


def _scoped_stream(content, alias, prefix, base):
    """A streamed body's chunks read the same store (and build the same links) as the view."""
    it = iter(content)
    try:
        while True:
            with _scoped(alias, prefix, base):
                chunk = next(it, _END)
            if chunk is _END:
                return
            yield chunk
    finally:
        close = getattr(it, "close", None)
        if close is not None:
            close()


# Seconds one store may take to say whether it has the session.
LOOKUP_BUDGET = 1.0


@dataclass(frozen=True)
class Holder:
    store: Store
    title: str | None
    started_at: float | None
    url: str


def land(request, session_id: str, among) -> HttpResponseRedirect:
    """The redirect, the chooser page or a 404 for ``/sessions/<id>/…`` without a profile."""
    base = get_script_prefix()
    rest = request.get_full_path()[len(base) :]
    targets = []
    for store in among:
        try:
            with registry.using(store):
                title = one_store.shape().column_or_null("sessions", "title")
                row = one_store.one(
                    f"SELECT {title}, started_at FROM sessions WHERE id = %s",
                    [session_id],
                    budget=LOOKUP_BUDGET,
                )
        except (DatabaseError, sqlite3.Error) as exc:
            registry.REGISTRY.failed(store, exc)
            continue
        if row is not None:
            url = f"{base}p/{quote(store.name, safe='')}/{rest}"
            targets.append(Holder(store, redact(row[0]), row[1], url))
    if not targets:
        raise Http404(gettext("No session with this id in the state.db."))
    if len(targets) == 1:
        return HttpResponseRedirect(targets[0].url)
    return render(
        request,
        "profiles_app/session_chooser.html",
        {"session_id": session_id, "holders": targets},
        status=300,
    )
