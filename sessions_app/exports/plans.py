"""Table exports: which columns a session or message export has, and how its rows are made."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from django.db.models import F, OuterRef, Subquery, TextField, Value
from django.db.models.functions import Coalesce
from django.http import StreamingHttpResponse
from django.utils import timezone

from redaction import redact_many, redaction_enabled

from ..models import Session
from ..pagination import Keyset
from ..querysets import PREVIEW_CHARS, PREVIEW_READ_CHARS
from ..selectors import sessions_for_table
from ..sqlfunctions import ContentHead
from . import chunks as chunking
from .http import invalid_filters_response, stream_for
from .isotime import iso_converter
from .request import (
    export_filename,
    requested_format,
    session_filename_bits,
    wants_preview,
)

# Columns of the exports, in order. Times become two columns: ISO 8601 and ``<name>_epoch``.
TIME_FIELDS = frozenset({"started_at", "ended_at", "last_activity_at", "timestamp"})
SESSION_FIELDS = (
    "id",
    "title",
    "source",
    "user_id",
    "model",
    "started_at",
    "ended_at",
    "last_activity_at",
    "message_count",
    "tool_call_count",
    "api_call_count",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "estimated_cost_usd",
    "actual_cost_usd",
    "cost_status",
    "cost_source",
    "pricing_version",
    "billing_provider",
    "billing_base_url",
    "billing_mode",
    "parent_session_id",
    "end_reason",
    "title_source",
    "profile_name",
    "display_name",
    "chat_type",
    "chat_id",
    "thread_id",
    "cwd",
    "git_branch",
    "git_repo_root",
    "archived",
    "pinned",
    "hidden",
    "model_config",
)
# ``session_title`` and ``source`` come from ``sessions`` in the same statement.
MESSAGE_FIELDS = (
    "id",
    "session_id",
    "session_title",
    "source",
    "role",
    "tool_name",
    "tool_call_id",
    "timestamp",
    "token_count",
    "finish_reason",
    "content",
    "tool_calls",
    "reasoning",
    "active",
    "compacted",
    "compressed_summary",
    "display_kind",
)
# Text a preview export cuts in SQL, and where secrets hide (redacted as on the pages).
LONG_MESSAGE_FIELDS = ("content", "tool_calls", "reasoning")


def output_columns(fields: Sequence[str]) -> list[str]:
    """Header of an export: each time field as ISO 8601 followed by its raw epoch."""
    out = []
    for name in fields:
        out.append(name)
        if name in TIME_FIELDS:
            out.append(f"{name}_epoch")
    return out


@dataclass(frozen=True)
class TablePlan:
    """A table export: the ``values_list()`` queryset it reads and how fetched rows become
    output rows; ``columns`` is the header."""

    queryset: object
    keyset: Keyset
    columns: list[str]
    to_rows: Callable[[list[tuple]], list[tuple]]
    key_positions: tuple[int, ...]
    text_positions: tuple[int, ...]

    def chunks(self, chunk_size: int | None = None) -> Iterator[list[tuple]]:
        """Lists of output rows (tuples in ``columns`` order), one query per list."""
        # The limits are read at call time: tests lower them to cross chunk boundaries.
        return chunking.keyset_chunks(
            self.queryset,
            self.keyset,
            to_rows=self.to_rows,
            keys_of=self._keys_of,
            text_size=self._text_size,
            chunk_size=chunk_size or chunking.EXPORT_CHUNK_ROWS,
            max_chunk_bytes=chunking.EXPORT_CHUNK_BYTES,
        )

    def _keys_of(self, row: tuple) -> list:
        return [row[i] for i in self.key_positions]

    def _text_size(self, rows: list[tuple]) -> int:
        columns = ([row[i] for row in rows] for i in self.text_positions)
        return sum(sum(map(len, [v for v in column if v.__class__ is str])) for column in columns)


def table_plan(
    queryset,
    keyset: Keyset,
    fields: Sequence[str],
    sources: dict[str, str] | None = None,
    *,
    redacted: Sequence[str] = (),
    text_fields: Iterable[str] | None = None,
    cut: int | None = None,
) -> TablePlan:
    """The plan of an export of ``fields`` of ``queryset`` in ``keyset`` order, a column at a
    time: ``sources`` maps a field to its annotation, ``redacted`` fields are redacted,
    ``text_fields`` bound the next chunk (all by default), times become ISO 8601 then the raw
    epoch, and keys the keyset alone needs are dropped."""
    fields = list(fields)
    sources = sources or {}
    selected = [sources.get(f, f) for f in fields]
    names = selected + [k for k, _ in keyset.keys if k not in selected]
    count = len(fields)
    times = frozenset(i for i, f in enumerate(fields) if f in TIME_FIELDS)
    hide = {i for i, f in enumerate(fields) if f in redacted and redaction_enabled()}
    # Resolved once: looking the zone up per value cost a third of the time of a row.
    iso = iso_converter(timezone.get_current_timezone())
    values = queryset.values_list(*names)

    def to_rows(fetched: list[tuple]) -> list[tuple]:
        # A column at a time (zip() transposes in C); keys appended for the keyset are dropped.
        columns = list(zip(*fetched, strict=True))[:count]
        out: list = []
        for i, column in enumerate(columns):
            if i in hide:
                column = redact_many(column)
                if cut is not None:
                    # Redacted whole (read past the cut), then cut: see PREVIEW_READ_CHARS.
                    column = [v[:cut] if v.__class__ is str else v for v in column]
            if i in times:
                out.append(list(map(iso, column)))
            out.append(column)
        return list(zip(*out, strict=True))

    wanted = set(fields if text_fields is None else text_fields)
    return TablePlan(
        queryset=values,
        keyset=keyset,
        columns=output_columns(fields),
        to_rows=to_rows,
        key_positions=tuple(names.index(k) for k, _ in keyset.keys),
        text_positions=tuple(i for i, f in enumerate(fields) if f in wanted),
    )


def _present(queryset, fields: Sequence[str], virtual: Iterable[str] = ()) -> list[str]:
    """The fields this file has (``virtual`` ones are computed and always there)."""
    meta = queryset.model._meta
    return [f for f in fields if f in virtual or queryset.has_column(meta.get_field(f).column)]


def session_rows(queryset, keyset: Keyset) -> TablePlan:
    """The plan of a session export: every column this file has, in ``keyset`` order."""
    if any(k == "last_active" for k, _ in keyset.keys):
        # The sort's key (annotated again, the same expression, when the queryset has it).
        queryset = queryset.annotate(last_active=Coalesce(F("last_activity_at"), F("started_at")))
    # model_config can carry a base URL with credentials: redacted like the session page.
    fields = _present(queryset, SESSION_FIELDS)
    return table_plan(queryset, keyset, fields, redacted=("model_config",))


def message_rows(queryset, keyset: Keyset, *, preview: bool) -> TablePlan:
    """The plan of a message export; the session's title and source come from a subquery
    each in the same statement (not a join: a message whose session was pruned still
    exports)."""
    session = Session.objects.filter(pk=OuterRef("session_id")).order_by()

    def of_session(column: str):
        if not session.has_column(column):
            return Value(None, output_field=TextField())
        return Subquery(session.values(column)[:1])

    qs = queryset.annotate(
        export_session_title=of_session("title"), export_session_source=of_session("source")
    )
    sources = {"session_title": "export_session_title", "source": "export_session_source"}
    fields = _present(qs, MESSAGE_FIELDS, virtual=sources)
    if preview:
        cuts = {
            # NUL-safe: multimodal content starts with a NUL that stops SQLite's substr().
            f"export_cut_{name}": ContentHead(name, PREVIEW_READ_CHARS)
            for name in LONG_MESSAGE_FIELDS
        }
        qs = qs.annotate(**cuts)
        sources.update({name: f"export_cut_{name}" for name in LONG_MESSAGE_FIELDS})
    return table_plan(
        qs,
        keyset,
        fields,
        sources,
        redacted=LONG_MESSAGE_FIELDS,
        text_fields=LONG_MESSAGE_FIELDS,
        cut=PREVIEW_CHARS if preview else None,
    )


def export_messages(
    request, queryset, keyset: Keyset, *, filename_bits=()
) -> StreamingHttpResponse:
    """The messages of ``queryset`` in ``keyset`` order; full content unless ``_preview=1``."""
    fmt = requested_format(request) or "csv"
    preview = wants_preview(request)
    plan = message_rows(queryset, keyset, preview=preview)
    filename = export_filename("messages", filename_bits, fmt, preview=preview)
    return stream_for(request, plan.columns, plan.chunks(), fmt, filename, preview=preview)


def export_session_list(request, filterset, keyset: Keyset, *, extend=None):
    """``/sessions/?…&_export=``: the page's filterset, sort and table queryset, all pages,
    every column this file has; ``extend`` (plan → plan) adds another app's columns."""
    if filterset.is_bound and not filterset.is_valid():
        return invalid_filters_response(filterset.form)
    fmt = requested_format(request) or "csv"
    plan = session_rows(sessions_for_table(filterset.qs, sort=keyset.name), keyset)
    if extend is not None:
        plan = extend(plan)
    filename = export_filename("sessions", session_filename_bits(filterset), fmt)
    return stream_for(request, plan.columns, plan.chunks(), fmt, filename)
