"""Which profiles (stores) a user may see: every one, unless staff restricted the user or one
of their groups (then those named for them).  A profile a user may not see does not exist for
them (404, and in no list or figure).
"""

from __future__ import annotations

from hermes_explorer import stores as registry
from hermes_explorer.stores import Store


def allowed_names(user) -> frozenset[str] | None:
    """The profile names ``user`` is restricted to, or None when unrestricted."""
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    from .models import ProfileRestriction

    return ProfileRestriction.allowed_for(user)


def for_request(request) -> tuple[Store, ...]:
    """The stores of this request's user (computed once per request)."""
    found = getattr(request, "_visible_stores", None)
    if found is None:
        found = registry.all_stores()
        allowed = allowed_names(getattr(request, "user", None))
        if allowed is not None:
            found = tuple(s for s in found if s.name in allowed)
        request._visible_stores = found
    return found


def restricted_to(request) -> frozenset[str] | None:
    """The profile names the request's user may see, or None when every profile."""
    if allowed_names(getattr(request, "user", None)) is None:
        return None
    return frozenset(one.name for one in for_request(request))
