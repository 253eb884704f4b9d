"""SQL expressions for Hermes's text columns.

NOTE: multimodal content starts with a NUL, and tool output can hold NUL bytes; SQLite's
``substr()`` and ``length()`` stop at the first NUL, so these cut such values through a BLOB
cast.  PostgreSQL text holds no NUL: Hermes marks such values (``"\\x01json:"`` + JSON,
``"\\x01bytes:"`` + base64), so the ``as_postgresql`` forms cut a marked value long enough to
decode and measure it as SQLite measures the value it stands for.
"""

from __future__ import annotations

from django.db.models import Func, IntegerField, TextField

# What starts every value Hermes marks in a PostgreSQL text column.
_MARK = "chr(1)"


class NulSafeText(TextField):
    """Text SQLite may hand back as a BLOB (:class:`ContentHead`), decoded and cut."""

    def __init__(self, *args, max_chars: int | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.max_chars = max_chars

    def from_db_value(self, value, expression, connection):
        if isinstance(value, bytes):
            value = value.decode("utf-8", errors="ignore")
        if self.max_chars is not None and value is not None:
            value = value[: self.max_chars]
        return value


class ContentHead(Func):
    """The first ``length`` characters of a text column, NUL characters included."""

    def __init__(self, expression, length: int, **extra):
        self.length = int(length)
        super().__init__(expression, output_field=NulSafeText(max_chars=self.length), **extra)

    def as_sql(self, compiler, connection, **extra_context):
        n = self.length
        template = (
            "CASE WHEN instr(%(expressions)s, char(0)) > 0 "
            f"THEN substr(CAST(%(expressions)s AS BLOB), 1, {4 * n}) "
            f"ELSE substr(%(expressions)s, 1, {n}) END"
        )
        return super().as_sql(compiler, connection, template=template, **extra_context)

    def as_postgresql(self, compiler, connection, **extra_context):
        # A JSON string escapes a NUL as six characters: read enough to decode ``length``.
        n = self.length
        template = (
            f"CASE WHEN starts_with(%(expressions)s, {_MARK})"
            f" THEN left(%(expressions)s, {6 * n + 8}) ELSE left(%(expressions)s, {n}) END"
        )
        return super().as_sql(compiler, connection, template=template, **extra_context)


class ContentLength(Func):
    """Length of a text column (in bytes for values holding a NUL, where ``length()`` stops)."""

    output_field = IntegerField()

    def as_sql(self, compiler, connection, **extra_context):
        template = (
            "CASE WHEN instr(%(expressions)s, char(0)) > 0 "
            "THEN length(CAST(%(expressions)s AS BLOB)) ELSE length(%(expressions)s) END"
        )
        return super().as_sql(compiler, connection, template=template, **extra_context)

    def as_postgresql(self, compiler, connection, **extra_context):
        # The string a ``\x01json:"…"`` value stands for: its JSON decoded (with ``\u0000``
        # read as another one-byte character, which PostgreSQL's text can hold).
        text = "(replace(substr(%(expressions)s, 7), '\\u0000', '\\u0001')::json #>> '{}')"
        template = (
            f"CASE WHEN starts_with(%(expressions)s, {_MARK} || 'json:\"') THEN CASE"
            f" WHEN strpos(%(expressions)s, '\\u0000') > 0 THEN octet_length({text})"
            f" ELSE length({text}) END"
            f" WHEN starts_with(%(expressions)s, {_MARK} || 'json:')"
            " THEN octet_length(%(expressions)s)"
            f" WHEN starts_with(%(expressions)s, {_MARK} || 'bytes:')"
            " THEN length(decode(substr(%(expressions)s, 8), 'base64'))"
            " ELSE length(%(expressions)s) END"
        )
        return super().as_sql(compiler, connection, template=template, **extra_context)


class Redacted(Func):
    """``hermes_redact(column)``: the text as the reader sees it (see ``hermes_db.base``)."""

    function = "hermes_redact"
    output_field = TextField()


class NoIndex(Func):
    """``+column``: the same value, but SQLite uses no index for this term (we cannot add
    indexes to Hermes's file, so we steer the planner along the ``started_at`` index)."""

    template = "+%(expressions)s"

    def as_postgresql(self, compiler, connection, **extra_context):
        # PostgreSQL's planner needs no steering (and has no unary + on text).
        return compiler.compile(self.source_expressions[0])
