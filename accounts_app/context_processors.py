"""Template context: the current user's role and what it allows (templates hide links with it)."""

from .roles import can_export, can_reveal, can_see_content, can_use_sql, role_of


def roles(request) -> dict:
    user = getattr(request, "user", None)
    return {
        "role": role_of(user),
        "can_see_content": can_see_content(user),
        "can_export": can_export(user),
        "can_use_sql": can_use_sql(user),
        "can_reveal": can_reveal(user),
    }
