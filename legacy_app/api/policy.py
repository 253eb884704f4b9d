"""What each role gets from the API: the same rules as the pages.

* **Viewers** read metadata only: content columns (``access.CONTENT_COLUMNS``) keep their
  place in ``columns``, so scripts indexing rows still find every column, but their values
  are ``null``; content tables (``messages``) are refused by the role middleware.
* **Analysts** read content with every column that may hold a secret
  (``access.REDACTED_COLUMNS``) redacted, a column of the page at a time.
* **Staff** get redacted values too (reveals are audited, on the page); ``_where`` and
  ``?sql=`` are theirs alone.

Filters, sorts and facets are checked before any query runs (:func:`refusals`), so a refused
probe answers the same whatever the rows hold.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from django.http import QueryDict

from accounts_app import audit
from accounts_app.models import AuditEvent
from accounts_app.roles import can_reveal, can_use_sql
from hermes_explorer.hermes_db.catalog import TableInfo
from redaction import redact, redact_many

from .. import access
from .operators import is_search_key
from .params import FACET_TYPES


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
        for i, name in enumerate(names):
            if i >= len(values):
                break
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
    if can_reveal(user) or not set(info.pks) & access.metadata_columns(info.name):
        return info
    if "WITHOUT ROWID" in info.sql.upper():
        return info
    return replace(info, pks=())


def for_table(user, table: str) -> Policy:
    return Policy(
        hidden=access.hidden_columns(table, user),
        redacted=access.REDACTED_COLUMNS.get(table, frozenset()) | access.metadata_columns(table),
        staff=can_reveal(user),
        may_use_sql=can_use_sql(user),
    )


def sql_rows(rows: list) -> list[list]:
    if not rows:
        return []
    cols = [redact_many(c) for c in zip(*rows, strict=True)]
    return [list(r) for r in zip(*cols, strict=True)]


def audit_secret_reads(request, table: str) -> None:
    """Staff comparing, sorting, counting or searching stored secret text: audited as a reveal."""
    if not can_reveal(request.user):
        return
    asked = access.secret_comparisons(table, request.GET)
    if asked:
        audit.record(request, AuditEvent.FILTER, detail=f"/state/{table}?" + "&".join(asked))


def refusals(table: str, params: QueryDict, user) -> list[str]:
    """Why ``user`` may not ask these parameters (empty: nothing refused): filters, sorts and
    facets follow ``legacy_app.access``, ``_where`` is staff's, and roles that cannot reveal
    may not combine a search with facets (they would count matches inside redacted text)."""
    reasons = access.refusals(table, params, user)
    if can_reveal(user):
        return reasons
    hidden = access.hidden_columns(table, user)
    redacted = access.REDACTED_COLUMNS.get(table, frozenset())
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
