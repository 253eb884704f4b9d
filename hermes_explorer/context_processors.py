"""Template context every page needs: which state.db we read, and whether it is demo data."""

from django.conf import settings
from django.db import connections


def explorer(request):
    return {
        "hermes_state_db": connections["hermes"].settings_dict["NAME"],
        "hermes_demo": settings.HERMES_DEMO,
    }
