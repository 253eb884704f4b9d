"""What a role may ask of a column through the old URLs: no answer about what it cannot read.

A Datasette column filter is an oracle: whether a row comes back answers yes or no about the
value, so ``system_prompt__gte=…`` repeated as a binary search spells out a hidden prompt, and
``content__contains=sk-…`` one character at a time spells out a key the page shows as
``[redacted: …]``.  Two rules close it:

1. Columns a role cannot read are neither filtered nor sorted by that role, not even asked
   whether they are empty: viewers cannot read message content nor the session's system
   prompt, model route and origin (:data:`CONTENT_COLUMNS`).
2. Columns whose text may hold secrets the explorer redacts (:data:`REDACTED_COLUMNS`) answer
   roles that cannot reveal secrets (every role but staff) only whether they are empty
   (``__isnull``, ``__notnull``, ``__isblank``, ``__notblank``).  Every operator that compares
   the column with a value — equality, lists, patterns, ranges, and any operator added later
   — and sorting by it are refused.

Refused rather than re-checked against the redacted text: a range answered on the redacted
value still leaks (the stored text and the redacted text differ exactly where the secret
starts, so ``>=`` decides on the secret's first differing character), and equality or patterns
re-checked would keep a second code path to get right for every operator.  A refusal depends
only on the parameter names and the role, never on the file or its rows, so every probe of a
refused column gets the same answer.

Titles and other free-text metadata (:func:`metadata_columns`) are shown to every role,
redacted; the API's filters on them compare the redacted value too, so a guess at a key pasted
into a title matches nothing, and a sort by one orders by the redacted value.
"""

from __future__ import annotations

from django.http import QueryDict

from accounts_app.roles import can_reveal, can_see_content
from sessions_app.models import SECRET_MESSAGE_COLUMNS, SECRET_SESSION_COLUMNS

from .api.operators import PRESENCE_OPS, column_and_op, is_filter_key

SORT_PARAMS = ("_sort", "_sort_desc")


def sort_column(table: str, value: str) -> str:
    """The column a ``_sort`` value names (an INTEGER PRIMARY KEY is the rowid)."""
    if value == "rowid" and table == "messages":
        return "id"
    return value


# Columns only roles that read content may see (the session page shows them to no one else).
CONTENT_COLUMNS = {
    "sessions": frozenset({"system_prompt", "model_config", "origin_json"}),
    "messages": frozenset(SECRET_MESSAGE_COLUMNS),
    # Where the current layout keeps the system prompts themselves.
    "system_prompts": frozenset({"prompt"}),
}
# Columns whose text the explorer shows redacted.
REDACTED_COLUMNS = {
    "sessions": frozenset(SECRET_SESSION_COLUMNS),
    "messages": frozenset(SECRET_MESSAGE_COLUMNS),
    "system_prompts": frozenset({"prompt"}),
}


def _metadata_columns() -> dict[str, frozenset[str]]:
    from django.apps import apps

    from sessions_app.models import MetadataText

    found: dict[str, set[str]] = {}
    for model in apps.get_app_config("sessions_app").get_models():
        for f in model._meta.concrete_fields:
            if isinstance(f, MetadataText):
                found.setdefault(model._meta.db_table, set()).add(f.column)
    return {table: frozenset(columns) for table, columns in found.items()}


def metadata_columns(table: str) -> frozenset[str]:
    """Free-text metadata columns (titles, user and display names, model routes): shown to
    every role, redacted; a filter on them also compares the redacted value (no oracle)."""
    global _METADATA
    if _METADATA is None:
        _METADATA = _metadata_columns()
    return _METADATA.get(table, frozenset())


_METADATA: dict[str, frozenset[str]] | None = None


def refusals(table: str, params: QueryDict, user) -> list[str]:
    """Why this user may not ask these parameters of ``table`` (empty: nothing refused)."""
    if can_reveal(user):
        return []
    hidden = frozenset() if can_see_content(user) else CONTENT_COLUMNS.get(table, frozenset())
    redacted = REDACTED_COLUMNS.get(table, frozenset())
    reasons: list[str] = []
    for key in params:
        if key in SORT_PARAMS:
            # Sorting compares values too.
            asked = [(sort_column(table, v), True, f"Sorting by {v}") for v in params.getlist(key)]
        elif not is_filter_key(key):
            continue
        else:
            column, op = column_and_op(key)
            asked = [(column, op not in PRESENCE_OPS, f"The filter “{key}”")]
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
    return reasons


def secret_comparisons(table: str, params: QueryDict) -> list[str]:
    """The parameters that compare, sort, count or search the stored text of a column that may
    hold secrets (what staff, who may reveal, are audited for: an answer is a read)."""
    redacted = REDACTED_COLUMNS.get(table, frozenset())
    found = []
    for key in params:
        values = params.getlist(key)
        if key in SORT_PARAMS or key == "_facet":
            columns = [sort_column(table, v) if key in SORT_PARAMS else v for v in values]
            if any(c in redacted for c in columns):
                found += [f"{key}={v}" for v in values]
        elif key.startswith("_search") and key != "_searchmode" and redacted:
            found += [f"{key}={v}" for v in values]
        elif is_filter_key(key):
            column, op = column_and_op(key)
            if column in redacted and op not in PRESENCE_OPS:
                found += [f"{key}={v}" for v in values]
    return found
