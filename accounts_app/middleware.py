"""The one place roles are enforced: a 403 page for a request the user's role does not allow."""

from __future__ import annotations

from django.shortcuts import render
from django.utils.deprecation import MiddlewareMixin

from hermes_explorer.http_policy import API_PATH, api_error

from .roles import (
    GROUP_OF_ROLE,
    VIEWER,
    Capability,
    has_capability,
    required_capability,
    role_of,
)


def forbidden(request, capability: Capability):
    """The 403 page: which role the user has, which one the page needs, whom to ask."""
    role = role_of(request.user)
    if API_PATH.search(request.path_info):
        # Scripts read the old API: a refusal they can parse, not an HTML page.
        message = (
            f"Your role ({role or 'none'}) cannot {capability.description}: ask a staff member "
            f"for the {GROUP_OF_ROLE[capability.minimum]} group."
        )
        return api_error(request.path_info, 403, message, title="Forbidden")
    return render(
        request,
        "errors/forbidden_role.html",
        {
            "capability": capability,
            "role": role,
            "role_group": GROUP_OF_ROLE.get(role or VIEWER),
            "needed_role": capability.minimum,
            "needed_group": GROUP_OF_ROLE[capability.minimum],
        },
        status=403,
    )


class RoleAccessMiddleware(MiddlewareMixin):
    """403 for a request the user's role does not allow (see ``roles.required_capability``).

    Runs after ``LoginRequiredMiddleware``: the only anonymous requests left are for views
    marked ``login_not_required``, which need no role.
    """

    def process_view(self, request, view_func, view_args, view_kwargs):
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return None
        capability = required_capability(request)
        if capability is None or has_capability(user, capability):
            return None
        return forbidden(request, capability)
