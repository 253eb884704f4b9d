"""An old table URL answered as a page: Datasette's rows, in Datasette's order.

The rows come from the same engine as the API (``legacy_app.api.tables``): every operator,
any sort (under the deadline), ``_size``, ``_next`` and ``_search`` mean what they meant in
Datasette.  Sessions and messages are shown with the explorer's own tables (links, badges,
times), other tables as plain columns.  A page is forgiving where the API is strict: a
``_size`` or ``_sort`` Datasette would refuse is dropped with a note, and the page says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.http import QueryDict
from django.utils.translation import gettext

from hermes_explorer import store
from sessions_app import selectors as session_selectors
from sessions_app.models import Message, Session

from .api import tables
from .api.errors import ApiError
from .api.operators import column_and_op, is_filter_key
from .api.params import MAX_ROWS, first

PAGE_BUDGET = 2.0
# Characters of one value shown in a cell of a plain table.
CELL_CHARS = 300


@dataclass
class DirectPage:
    columns: list[str] = field(default_factory=list)
    rows: list = field(default_factory=list)  # model instances (sessions, messages) or lists
    next_url: str | None = None
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    timed_out: bool = False


def _forgiving(params: QueryDict, info) -> tuple[QueryDict, list[str]]:
    """``params`` minus what Datasette would have refused, with a note for each."""
    cleaned = params.copy()
    notes = []
    size = first(params, "_size")
    if size and size != "max":
        try:
            ok = 0 <= int(size) <= MAX_ROWS
        except ValueError:
            ok = False
        if not ok:
            notes.append(
                gettext("Page size “%(size)s” is not a number up to %(max)s: ignored.")
                % {"size": size, "max": MAX_ROWS}
            )
            cleaned.pop("_size")
    sortable = set(info.columns) | ({"rowid"} if info.use_rowid else set())
    for key in ("_sort", "_sort_desc"):
        value = first(params, key)
        if value is not None and value not in sortable:
            notes.append(
                gettext("Sorting by “%(value)s” is not possible here: ignored.") % {"value": value}
            )
            cleaned.pop(key)
    if "_sort" in cleaned and "_sort_desc" in cleaned:
        cleaned.pop("_sort_desc")
    known = set(info.columns) | {"rowid"}
    for key in list(cleaned):
        if key.startswith("_facet") or key in ("_shape", "_nl", "_json", "_stream", "_dl"):
            cleaned.pop(key)
        elif is_filter_key(key) and column_and_op(key)[0] not in known:
            # Datasette compared the name itself (a quoted unknown name is a string in
            # SQLite); a page ignores it, as the note says.
            notes.append(gettext("Unknown parameter “%(key)s”: ignored.") % {"key": key})
            cleaned.pop(key)
    return cleaned, notes


def direct_page(request, table: str, user) -> DirectPage:
    info = store.shape().catalog.table(table)
    page = DirectPage()
    params, page.notes = _forgiving(request.GET, info)
    try:
        result = tables.table_page(request, info, user=user, with_extras=False, params=params)
    except ApiError as exc:
        page.error = exc.message
        page.timed_out = exc.title == "SQL Interrupted"
        return page
    page.columns = result.columns
    if result.next:
        absolute = result.data["next_url"] or ""
        page.next_url = request.path + "?" + absolute.partition("?")[2]
    if table in ("sessions", "messages"):
        page.rows = _instances(table, result.columns, result.rows)
    else:
        page.rows = [[_cell(v) for v in row] for row in result.rows]
    return page


def _instances(table: str, columns: list[str], rows: list) -> list:
    """The page's rows as the explorer's models, in the page's order (one query)."""
    at = columns.index("id")
    ids = [r[at] for r in rows]
    if table == "sessions":
        qs = session_selectors.sessions_for_table(Session.objects.filter(pk__in=ids), sort="")
    else:
        qs = session_selectors.messages_for_table(Message.objects.filter(pk__in=ids))
    by_id = {obj.pk: obj for obj in qs}
    found = [by_id[i] for i in ids if i in by_id]
    return session_selectors.link_messages(found) if table == "messages" else found


def _cell(value):
    if value is None:
        return None
    if isinstance(value, bytes):
        return f"<{len(value):,} bytes>"
    if isinstance(value, dict):
        value = value.get("value")
    text = str(value)
    return text if len(text) <= CELL_CHARS else text[:CELL_CHARS] + "…"
