"""Template context every page needs: which state.db we read, and whether it is demo data."""

from django.conf import settings


def explorer(request):
    return {
        "hermes_state_db": settings.HERMES_STATE_DB,
        "hermes_demo": settings.HERMES_DEMO,
    }
