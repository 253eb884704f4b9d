"""What a role may ask of a column through the old URLs: no answer about what it cannot read.

A Datasette column filter is an oracle: ``system_prompt__gte=…`` repeated as a binary search
spells out a hidden prompt, and ``content__contains=sk-…`` a redacted key.  Two rules close it:

1. Columns a role cannot read (:data:`CONTENT_COLUMNS` for viewers) are neither filtered nor
   sorted by that role, not even asked whether they are empty.
2. Columns whose text may hold redacted secrets (:data:`REDACTED_COLUMNS`) answer roles that
   cannot reveal secrets (all but staff) only whether they are empty (``__isnull``,
   ``__notnull``, ``__isblank``, ``__notblank``); every other operator, including any added
   later, and sorting by them are refused.

Refused rather than re-checked against the redacted text: a range on the redacted value
still leaks (stored and redacted text differ exactly where the secret starts), and a second
code path per operator is one more to get right.  A refusal depends only on the parameter
names and the role, so every probe of a refused column gets the same answer.

Titles and other free-text metadata (:func:`metadata_columns`) are shown to every role,
redacted, and filtered and sorted by their redacted value.
"""

from __future__ import annotations

import functools

from django.apps import apps
from django.http import QueryDict

from accounts_app.roles import can_reveal, can_see_content
from sessions_app.models import SECRET_MESSAGE_COLUMNS, SECRET_SESSION_COLUMNS, MetadataText

from .api.operators import PRESENCE_OPS, column_and_op, is_filter_key, is_search_key

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


@functools.cache
def metadata_columns(table: str) -> frozenset[str]:
    """Free-text metadata columns: shown to every role redacted, and filtered redacted too."""
    return frozenset(
        f.column
        for model in apps.get_app_config("sessions_app").get_models()
        if model._meta.db_table == table
        for f in model._meta.concrete_fields
        if isinstance(f, MetadataText)
    )


def hidden_columns(table: str, user) -> frozenset[str]:
    """The columns of ``table`` this user cannot read."""
    return frozenset() if can_see_content(user) else CONTENT_COLUMNS.get(table, frozenset())


def refusals(table: str, params: QueryDict, user) -> list[str]:
    """Why this user may not ask these parameters of ``table`` (empty: nothing refused)."""
    if can_reveal(user):
        return []
    hidden = hidden_columns(table, user)
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
    hold secrets (what staff, who may reveal, are audited for: an answer is a read).  Every
    ``_where`` counts: its SQL may name any column, under any spelling."""
    redacted = REDACTED_COLUMNS.get(table, frozenset())
    found = []
    for key in params:
        values = params.getlist(key)
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
    return found
