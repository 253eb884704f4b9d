"""A Datasette URL as the explorer's own page: the parameters, and whether they say the same.

Each ``translate_*`` maps a :class:`~legacy_app.filters.LegacyQuery` to the query string of
``/sessions/``, ``/messages/`` or ``/search/``.  ``exact`` is true only when that page shows
exactly the rows Datasette showed, in the same order; otherwise the old URL is answered
directly (``legacy_app.views``) and the translation is only the "open in the explorer" link.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.utils.translation import gettext

from sessions_app import selectors

from .filters import DATASETTE_PAGE, LegacyQuery, value_list
from .paging import cursor_for

SESSION_PARAMS = {
    ("source", "exact"): "source",
    ("user_id", "exact"): "user_id",
    ("end_reason", "exact"): "end_reason",
    ("title", "contains"): "title",
    ("estimated_cost_usd", "gte"): "min_cost",
    ("estimated_cost_usd", "lte"): "max_cost",
    ("message_count", "gte"): "min_messages",
}
SESSION_SORTS = {("started_at", False), ("started_at", True), ("source", False), ("source", True)}
MESSAGE_PARAMS = {
    ("session_id", "exact"): "session_id",
    ("role", "exact"): "role",
    ("tool_name", "exact"): "tool_name",
}
COST_STATUSES = {"estimated", "actual", "included", "unknown"}


@dataclass
class Translation:
    params: list[tuple[str, str]]
    exact: bool
    notes: list[str] = field(default_factory=list)


def _plain_like(value: str) -> bool:
    # Datasette's LIKE patterns were not escaped; ours are: same rows only without wildcards.
    return "%" not in value and "_" not in value


def translate_sessions(query: LegacyQuery) -> Translation:
    params: list[tuple[str, str]] = []
    exact = True
    notes: list[str] = []
    seen: set[str] = set()
    for f in query.filters:
        key = (f.column, f.op)
        if f.column in seen:
            exact = False  # Datasette ANDs repeated filters on one column
        seen.add(f.column)
        if key in SESSION_PARAMS and (f.op != "contains" or _plain_like(f.value)):
            params.append((SESSION_PARAMS[key], f.value))
        elif key == ("source", "in"):
            params += [("source", v) for v in value_list(f.value)]
        elif key == ("cost_status", "exact") and f.value in COST_STATUSES:
            params.append(("cost_status", f.value))
        elif key == ("cost_status", "isnull"):
            params.append(("cost_status", "none"))
        elif key == ("parent_session_id", "isnull"):
            params.append(("has_parent", "false"))
        elif key == ("parent_session_id", "notnull"):
            params.append(("has_parent", "true"))
        else:
            exact = False
    if query.sort is None:
        # Datasette's order (by id) is not one the session list offers: a link, not a redirect.
        notes.append(
            gettext(
                "Datasette listed sessions by id, as here; the explorer's session list shows "
                "them newest first."
            )
        )
        exact = False
    elif (query.sort, query.sort_desc) in SESSION_SORTS:
        sort = ("-" if query.sort_desc else "") + query.sort
        params.append(("sort", sort))
        if query.next:
            cursor = cursor_for("sessions", selectors.SESSION_SORTS[sort], query.next)
            if cursor is None:
                exact = False
            else:
                params.append(("cursor", cursor))
    else:
        exact = False
    if query.size is not None:
        notes.append(
            gettext(
                "The explorer's session pages hold 50 sessions; Datasette's _size was not kept."
            )
        )
    return Translation(params=params, exact=exact, notes=notes)


def translate_messages(query: LegacyQuery, shape) -> Translation:
    params: list[tuple[str, str]] = []
    exact = True
    seen: set[str] = set()
    for f in query.filters:
        if f.column in seen:
            exact = False
        seen.add(f.column)
        key = (f.column, f.op)
        if key in MESSAGE_PARAMS:
            params.append((MESSAGE_PARAMS[key], f.value))
        else:
            exact = False
    # Datasette showed every row: compacted, rewound and hidden ones too.
    if shape.has_column("messages", "active") or shape.has_column("messages", "display_kind"):
        params += [("show", "compacted"), ("show", "rewound"), ("show", "hidden")]
    if query.sort in (None, "id"):
        # Datasette's default order is the primary key, ascending.
        sort = "-id" if query.sort_desc else "id"
        params.append(("sort", sort))
        if query.next:
            cursor = cursor_for("messages", selectors.MESSAGE_SORTS[sort], query.next)
            if cursor is None:
                exact = False
            else:
                params.append(("cursor", cursor))
    else:
        exact = False
    # Datasette's pages held 100 rows unless _size said otherwise.
    params.append(("size", str(query.size or DATASETTE_PAGE)))
    return Translation(params=params, exact=exact)


def translate_search(query: LegacyQuery) -> Translation:
    """The search page's parameters: a link only (it ranks its hits 20 at a time)."""
    params: list[tuple[str, str]] = [("q", query.search or "")]
    notes: list[str] = []
    if query.search_raw:
        params.append(("mode", "advanced"))
    if query.sort in ("id", "timestamp") and query.sort_desc:
        params.append(("sort", "newest"))
    for f in query.filters:
        key = (f.column, f.op)
        if key in MESSAGE_PARAMS and len(query.filter_for(f.column)) == 1:
            params.append((MESSAGE_PARAMS[key], f.value))
        else:
            notes.append(
                gettext("The filter %(filter)s is not applied to search results.")
                % {"filter": f"{f.column}__{f.op}"}
            )
    return Translation(params=params, exact=False, notes=notes)
