"""The profile switcher of every page: which profiles the user may see, which one is shown."""

from __future__ import annotations

from urllib.parse import quote, urlencode

from django.utils.translation import gettext

from .access import for_request
from .middleware import SESSION_PATH

# Query parameters that mean the same in every profile (a search stays a search).
KEPT_PARAMS = ("q",)


def profiles(request):
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    visible = for_request(request)
    if len(visible) < 2:
        return {}
    path = request.path_info
    if SESSION_PATH.match(path):
        # A session belongs to one profile: switching lands on the other profile's list.
        path = "/sessions/"
    kept = [(k, v) for k in KEPT_PARAMS for v in request.GET.getlist(k)]
    query = "?" + urlencode(kept) if kept else ""
    base = getattr(request, "profile_base", "/")
    scoped = getattr(request, "store_scoped", False)
    current = request.store.name if scoped and request.store is not None else None
    choices = [(gettext("All profiles"), base.rstrip("/") + path + query, current is None, "")]
    choices += [
        (s.name, f"{base}p/{quote(s.name, safe='')}{path}{query}", s.name == current, kind(s))
        for s in visible
    ]
    return {"profiles": visible, "profile_choices": choices, "current_profile": current}


def kind(store) -> str:
    """Where a profile's conversations are, in the page's language."""
    return gettext("PostgreSQL schema") if store.postgres else gettext("SQLite file")
