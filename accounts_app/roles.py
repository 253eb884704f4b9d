"""Who may see what: three roles (README, "Roles and security"), and the one place that
enforces them.  A user with no group is a viewer; ``is_staff`` or the ``staff`` group make
staff; a superuser can do everything.  :func:`required_capability` is applied to every request
by :class:`accounts_app.middleware.RoleAccessMiddleware`, exports and the legacy
``.csv``/``.json`` URLs included, so an export never shows what the page hides.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial

from django.utils.translation import gettext_lazy

VIEWER = "viewer"
ANALYST = "analyst"
STAFF = "staff"
ROLES = (VIEWER, ANALYST, STAFF)
GROUP_OF_ROLE = {VIEWER: "viewers", ANALYST: "analysts", STAFF: "staff"}
ROLE_OF_GROUP = {group: role for role, group in GROUP_OF_ROLE.items()}
_RANK = {VIEWER: 0, ANALYST: 1, STAFF: 2}


# Capabilities ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Capability:
    name: str
    minimum: str  # the lowest role that has it
    description: str  # completes "your role … cannot …"


CONTENT = Capability("content", ANALYST, gettext_lazy("read message content"))
EXPORT = Capability("export", ANALYST, gettext_lazy("download exports"))
SQL = Capability("sql", STAFF, gettext_lazy("use the SQL console"))
REVEAL = Capability("reveal", STAFF, gettext_lazy("reveal redacted secrets"))


def role_of(user) -> str | None:
    """``viewer``, ``analyst`` or ``staff`` for a signed-in user; None for anonymous."""
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    cached = getattr(user, "_hermes_role", None)
    if cached is not None:
        return cached
    if user.is_superuser or user.is_staff:
        role = STAFF
    else:
        groups = set(user.groups.values_list("name", flat=True))
        ranked = [ROLE_OF_GROUP[g] for g in groups if g in ROLE_OF_GROUP]
        role = max(ranked, key=_RANK.__getitem__, default=VIEWER)
    user._hermes_role = role  # one groups query per request, if any
    return role


def has_capability(user, capability: Capability) -> bool:
    if user is not None and getattr(user, "is_superuser", False) and user.is_active:
        return True
    role = role_of(user)
    return role is not None and _RANK[role] >= _RANK[capability.minimum]


# ``can_…(user)``: whether the user has that capability.
can_see_content = partial(has_capability, capability=CONTENT)
can_export = partial(has_capability, capability=EXPORT)
can_use_sql = partial(has_capability, capability=SQL)
can_reveal = partial(has_capability, capability=REVEAL)


# Enforcement -------------------------------------------------------------------------------
# (namespace, url name or "*") → capability, on the resolved URL; the path rules below catch
# URLs that only redirect or stream.
URL_RULES: dict[tuple[str, str], Capability] = {
    ("sql", "*"): SQL,
    ("sessions", "reveal"): REVEAL,
    ("sessions", "message_text"): CONTENT,
    ("messages", "*"): CONTENT,
    ("search", "*"): CONTENT,
}
# The old Datasette URLs: message tables are content and ``/state?sql=`` is the console.
# Their ``.json``/``.csv`` are the API, not exports (``legacy_app.api.policy`` nulls content
# columns for viewers); every other ``.csv``/``.json``/… is a download.
PATH_RULES: tuple[tuple[re.Pattern, Capability], ...] = (
    (re.compile(r"^/state(?:\.(?:csv|json))?/?$"), SQL),  # only with ?sql=, see below
    (re.compile(r"^(?!/state[/.]|/-/).*\.(?:csv|json|jsonl|md|txt)$"), EXPORT),
    (re.compile(r"^/state/messages"), CONTENT),
)


def required_capability(request) -> Capability | None:
    """The capability this request needs beyond being signed in (None: any role)."""
    match = getattr(request, "resolver_match", None)
    needs: list[Capability] = []
    if match is not None:
        namespace = match.namespace or ""
        name = match.url_name or ""
        rule = URL_RULES.get((namespace, name)) or URL_RULES.get((namespace, "*"))
        if rule is not None:
            needs.append(rule)
        # URL names that start with "export" are downloads: transcripts as .md/.json.
        if namespace in ("sessions", "messages", "legacy", "state") and name.startswith("export"):
            needs.append(EXPORT)
    if "_export" in request.GET:
        needs.append(EXPORT)
    path = request.path_info
    for pattern, capability in PATH_RULES:
        if pattern.search(path):
            if capability is SQL and "sql" not in request.GET:
                continue
            needs.append(capability)
    if not needs:
        return None
    # The strictest wins (SQL and REVEAL need staff; EXPORT and CONTENT analysts).
    return max(needs, key=lambda c: _RANK[c.minimum])


# Groups ------------------------------------------------------------------------------------
# What the staff group may do in the admin: manage accounts and roles (accounts_app.admin) and
# read the audit trail; other apps add theirs with ``staff_permissions`` on their AppConfig.
STAFF_PERMISSIONS = {
    "auth": ("add_user", "change_user", "view_user", "view_group"),
    "accounts_app": ("view_auditevent",),
}


def ensure_role_groups(app_configs=None) -> None:
    """Create the three groups, and give the staff group its permissions, if they are missing:
    after every ``migrate`` and ``flush`` (post_migrate, once per app in ``app_configs``), so
    a flushed database gets them back and an app installed later grants its own."""
    from django.apps import apps
    from django.contrib.auth.models import Group, Permission

    groups = {name: Group.objects.get_or_create(name=name)[0] for name in GROUP_OF_ROLE.values()}
    for app_config in app_configs if app_configs is not None else apps.get_app_configs():
        codenames = (
            *STAFF_PERMISSIONS.get(app_config.label, ()),
            *getattr(app_config, "staff_permissions", ()),
        )
        if codenames:
            permissions = Permission.objects.filter(
                content_type__app_label=app_config.label, codename__in=codenames
            )
            groups["staff"].permissions.add(*permissions)
