"""Template context every page needs: which state.db we read, and whether it is demo data."""

from django.conf import settings

from . import store, stores


def explorer(request):
    user = getattr(request, "user", None)
    current = getattr(request, "store", None)
    # The last probe of the page's PostgreSQL store (None for a file).
    status = stores.REGISTRY.status(current) if current and current.postgres else None
    return {
        # The file's path, for staff only: the header names the profile to everyone else.
        "hermes_state_db": store.name() if user is not None and user.is_staff else None,
        "header_profile": getattr(current, "name", None) or "default",
        "hermes_demo": settings.HERMES_DEMO,
        # A PostgreSQL role that could write (from the store's last probe).
        "store_warning": stores.writes_warning(status.writes) if status and status.writes else "",
        # Read from a hot standby: how far behind its primary.
        "store_note": stores.standby_note(status.standby) if status and status.standby else "",
    }
