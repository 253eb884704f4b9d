"""One page of the rows an old URL asked for, in Datasette's order and page size.

Used when no explorer page says the same thing (filters and sorts the pages do not offer,
Datasette's ``_size`` and ``_next``).  Sorts that no index answers fall back to the primary key
rather than sorting a whole table; the page runs under its own deadline.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hermes_explorer.hermes_db.deadline import QueryTimeout, query_budget
from sessions_app import selectors

from .filters import DATASETTE_PAGE, LegacyQuery, filtered_queryset
from .paging import next_token, next_values, sort_keyset

DIRECT_BUDGET = 2.0
# Sorts an index answers, per table (the rest would sort the whole table).
DIRECT_SORTS = {
    "sessions": {"id", "started_at", "source"},
    "messages": {"id", "timestamp"},
}


@dataclass
class DirectPage:
    rows: list
    next_token: str | None = None
    timed_out: bool = False
    notes: list[str] = field(default_factory=list)


def direct_page(query: LegacyQuery, shape) -> DirectPage:
    """The page of rows ``query`` asks for; ``notes`` say what could not be honoured."""
    qs = filtered_queryset(query, shape)  # may add notes about values that cannot match
    page = DirectPage(rows=[], notes=list(query.notes))
    sort, desc = query.sort, query.sort_desc
    if sort is not None and sort not in DIRECT_SORTS[query.table]:
        page.notes.append(f"Sorting by {sort} would sort the whole table: sorted by id instead.")
        sort, desc = None, False
    keyset = sort_keyset(sort, desc)
    size = query.size or DATASETTE_PAGE
    if query.table == "sessions":
        qs = selectors.sessions_for_table(qs, sort="")
    else:
        qs = selectors.messages_for_table(qs)
    values = None
    if query.next:
        values = next_values(query.table, keyset, query.next)
        if values is None:
            page.notes.append("The _next marker could not be read: showing the first page.")
    try:
        with query_budget(DIRECT_BUDGET):
            if values is not None:
                qs = qs.filter(keyset.after(values))
            rows = list(qs.order_by(*keyset.order_by())[: size + 1])
    except QueryTimeout:
        page.timed_out = True
        return page
    if len(rows) > size:
        rows = rows[:size]
        page.next_token = next_token(keyset, rows[-1])
    page.rows = rows
    return page
