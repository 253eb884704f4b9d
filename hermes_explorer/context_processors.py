"""Template context every page needs: which state.db we read, and whether it is demo data."""

from django.conf import settings

from . import store


def explorer(request):
    return {
        "hermes_state_db": store.name(),
        "hermes_demo": settings.HERMES_DEMO,
    }
