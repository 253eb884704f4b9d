"""What each role may ask of the old URLs and gets from them: the same rules as the pages.

Viewers read metadata only (content columns keep their place, ``null``); analysts and staff
get every column that may hold a secret redacted, and ``_where`` and ``?sql=`` are staff's.
A filter or sort is an oracle on what it compares, so columns a role cannot read, and
compared (not presence) tests of redacted columns by roles that cannot reveal, are refused
before any query runs: every probe of a refused column gets the same answer.  Free-text
metadata (:func:`metadata_columns`) is shown, filtered and sorted redacted for every role.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from django.http import QueryDict

from accounts_app import audit
from accounts_app.models import AuditEvent
from accounts_app.roles import can_reveal, can_see_content, can_use_sql
from hermes_explorer.hermes_db.catalog import TableInfo
from redaction import redact, redact_many
from sessions_app.models import SECRET_MESSAGE_COLUMNS, SECRET_SESSION_COLUMNS, metadata_columns

from .operators import PRESENCE_OPS, column_and_op, is_filter_key, is_search_key
from .params import FACET_TYPES

SORT_PARAMS = ("_sort", "_sort_desc")
# Columns that may hold secrets: shown redacted, and only to roles that read content (the
# session page shows them to no one else).
SECRET_COLUMNS = {
    "sessions": frozenset(SECRET_SESSION_COLUMNS),
    "messages": frozenset(SECRET_MESSAGE_COLUMNS),
    # Where the current layout keeps the system prompts themselves.
    "system_prompts": frozenset({"prompt"}),
}


def sort_column(table: str, value: str) -> str:
    """The column a ``_sort`` value names (an INTEGER PRIMARY KEY is the rowid)."""
    if value == "rowid" and table == "messages":
        return "id"
    return value


def hidden_columns(table: str, user) -> frozenset[str]:
    """The columns of ``table`` this user cannot read."""
    return frozenset() if can_see_content(user) else SECRET_COLUMNS.get(table, frozenset())


@dataclass(frozen=True)
class Policy:
    hidden: frozenset[str]
    redacted: frozenset[str]
    staff: bool
    may_use_sql: bool

    def rows(self, columns: list[str], rows: list) -> list[list]:
        """``rows`` with hidden values nulled and secrets redacted, a column at a time."""
        if not rows or not (self.hidden | self.redacted).intersection(columns):
            return [list(r) for r in rows]
        values = self.columns(columns, list(map(list, zip(*rows, strict=True))))
        return [list(r) for r in zip(*values, strict=True)]

    def columns(self, names: list[str], values: list[list]) -> list[list]:
        """``values`` (one list per column) with hidden values nulled and secrets redacted."""
        for i, name in enumerate(names[: len(values)]):
            if name in self.hidden:
                values[i] = [None] * len(values[i])
            elif name in self.redacted and any(values[i]):  # a column of NULLs: nothing to do
                values[i] = redact_many(values[i])
        return values

    def value(self, column: str, value):
        if column in self.hidden:
            return None
        if column in self.redacted:
            return redact(value)
        return value


def keyed_for(info: TableInfo, user) -> TableInfo:
    """``info`` as ``user`` reads it: a table whose primary key holds text shown redacted (the
    usage rows' model, billing route and task) is keyed by its rowid for a reader who cannot
    reveal, since a key puts the stored text in row paths and ``_next`` tokens."""
    if can_reveal(user) or not set(info.pks) & metadata_columns(info.name):
        return info
    if "WITHOUT ROWID" in info.sql.upper():
        return info
    return replace(info, pks=())


def for_table(user, table: str) -> Policy:
    return Policy(
        hidden=hidden_columns(table, user),
        redacted=SECRET_COLUMNS.get(table, frozenset()) | metadata_columns(table),
        staff=can_reveal(user),
        may_use_sql=can_use_sql(user),
    )


def sql_rows(rows: list) -> list[list]:
    if not rows:
        return []
    cols = [redact_many(c) for c in zip(*rows, strict=True)]
    return [list(r) for r in zip(*cols, strict=True)]


def audit_secret_reads(request, table: str) -> None:
    """Staff comparing, sorting, counting or searching the stored text of a column that may hold
    secrets: audited as a reveal (an answer is a read).  Every ``_where`` counts: its SQL may
    name any column, under any spelling."""
    if not can_reveal(request.user):
        return
    redacted = SECRET_COLUMNS.get(table, frozenset())
    found = []
    for key in request.GET:
        values = request.GET.getlist(key)
        if key == "_where":
            found += [f"{key}={v}" for v in values]
        elif key in SORT_PARAMS or key == "_facet":
            columns = [sort_column(table, v) if key in SORT_PARAMS else v for v in values]
            if any(c in redacted for c in columns):
                found += [f"{key}={v}" for v in values]
        elif is_search_key(key) and redacted:
            found += [f"{key}={v}" for v in values]
        elif is_filter_key(key):
            column, op = column_and_op(key)
            if column in redacted and op not in PRESENCE_OPS:
                found += [f"{key}={v}" for v in values]
    if found:
        audit.record(request, AuditEvent.FILTER, detail=f"/state/{table}?" + "&".join(found))


def refusals(table: str, params: QueryDict, user) -> list[str]:
    """Why ``user`` may not ask these parameters of ``table`` (empty: nothing refused)."""
    if can_reveal(user):
        return []
    hidden = hidden_columns(table, user)
    redacted = SECRET_COLUMNS.get(table, frozenset())
    reasons: list[str] = []
    for key in params:
        if key in SORT_PARAMS:  # sorting compares values too
            asked = [(sort_column(table, v), True, f"Sorting by {v}") for v in params.getlist(key)]
        elif is_filter_key(key):
            column, op = column_and_op(key)
            asked = [(column, op not in PRESENCE_OPS, f"The filter “{key}”")]
        else:
            continue
        for column, compares, what in asked:
            if column in hidden:
                reasons.append(
                    f"{what} is refused: your role cannot read {column}, "
                    "so it can neither filter nor sort by it."
                )
            elif column in redacted and compares:
                reasons.append(
                    f"{what} is refused: {column} may hold redacted secrets, so your role can "
                    f"only ask whether it is empty ({column}__isnull, __notnull, __isblank, "
                    "__notblank)."
                )
    for key in params:
        if key == "_where":
            reasons.append("_where is refused: only staff may add SQL to a table URL.")
        if key not in FACET_TYPES:
            continue
        for column in params.getlist(key):
            if column in hidden:
                reasons.append(
                    f"The facet {key}={column} is refused: your role cannot read {column}."
                )
            elif column in redacted or column.startswith("{"):
                reasons.append(
                    f"The facet {key}={column} is refused: {column} may hold redacted "
                    "secrets, so your role cannot count its values."
                )
    if any(map(is_search_key, params)) and any(k in FACET_TYPES for k in params):
        reasons.append(
            "Facets with _search are refused for your role: they would count matches inside "
            "redacted text. Drop _facet, or ask staff."
        )
    return reasons
