"""Template context every page needs: which state.db we read, and whether it is demo data."""

from django.conf import settings

from . import store, stores


def explorer(request):
    user = getattr(request, "user", None)
    return {
        # The file's path, for staff only: the header names the profile to everyone else.
        "hermes_state_db": store.name() if user is not None and user.is_staff else None,
        "header_profile": getattr(getattr(request, "store", None), "name", None) or "default",
        "hermes_demo": settings.HERMES_DEMO,
        # A PostgreSQL role that could write (from the store's last probe).
        "store_warning": stores.writes_warning(writes) if (writes := _writes(request)) else "",
    }


def _writes(request) -> str:
    current = getattr(request, "store", None)
    return stores.REGISTRY.status(current).writes if current and current.postgres else ""
