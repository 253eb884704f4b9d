"""SQL expressions for Hermes's text columns.

NOTE: multimodal content is stored as ``"\\x00json:" + JSON``. SQLite's ``substr()`` and
``length()`` stop at the first NUL character, so on those rows they return ``''`` and ``0``.
These expressions look at such values through a BLOB cast, skip the NUL, and put it back, so a
preview cut in SQL works on every row.
"""

from __future__ import annotations

from django.db.models import Func, IntegerField, TextField

# ``x < char(1)`` is true only for '' and for text starting with NUL (BINARY comparison is a
# memcmp over the whole value, NULs included).
_STARTS_WITH_NUL = "%(expressions)s < char(1)"
_AFTER_NUL = "CAST(substr(CAST(%(expressions)s AS BLOB), 2) AS TEXT)"


class ContentHead(Func):
    """The first ``length`` characters of a text column, NUL-prefixed values included."""

    output_field = TextField()

    def __init__(self, expression, length: int, **extra):
        super().__init__(expression, **extra)
        self.length = int(length)

    def as_sql(self, compiler, connection, **extra_context):
        n = self.length
        template = (
            f"CASE WHEN {_STARTS_WITH_NUL} "
            f"THEN char(0) || substr({_AFTER_NUL}, 1, {max(n - 1, 0)}) "
            f"ELSE substr(%(expressions)s, 1, {n}) END"
        )
        return super().as_sql(compiler, connection, template=template, **extra_context)


class ContentLength(Func):
    """Length in characters of a text column, NUL-prefixed values included."""

    output_field = IntegerField()

    def as_sql(self, compiler, connection, **extra_context):
        template = (
            f"CASE WHEN {_STARTS_WITH_NUL} THEN 1 + length({_AFTER_NUL}) "
            f"ELSE length(%(expressions)s) END"
        )
        return super().as_sql(compiler, connection, template=template, **extra_context)


class NoIndex(Func):
    """``+column``: the same value, but SQLite will not use an index for this term.

    NOTE: we cannot add indexes to Hermes's file, so we steer the planner instead: with
    ``+source = ?`` it walks the ``started_at`` index in page order and stops after one page,
    rather than collecting every session of a common source through the ``source`` index and
    sorting them all.
    """

    template = "+%(expressions)s"
