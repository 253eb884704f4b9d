"""What each page asks of the state.db, in one place.  Nothing here counts a big table
without a cap or loads a whole transcript.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass, field

from django.db.models import Count, F, FloatField, OuterRef, Subquery, Sum, TextField, Value
from django.db.models.functions import Coalesce, Length, Substr
from django.utils.translation import gettext

from hermes_explorer import dialect, store
from redaction import redact, redact_many, redact_text_many, redaction_enabled

from .content import as_text, parse_tool_calls
from .formatting import number
from .models import USAGE_COUNTERS, Message, Session, SessionModelUsage
from .pagination import Keyset
from .querysets import PREVIEW_READ_CHARS
from .sqlfunctions import ContentHead, ContentLength
from .visibility import Visibility

COUNT_CAP = 10_000
COUNT_TTL = 60  # seconds a count is reused while the file is unchanged
TRANSCRIPT_PAGE = 100
# Characters of one message loaded into a transcript page; the rest is a click away.
TRANSCRIPT_CUT = 20_000
# Text cut for a page is read this much further, redacted, then cut: a secret that crosses the
# cut is seen whole, and no tail too short to recognise is left.
READ_PAST_CUT = PREVIEW_READ_CHARS
LINEAGE_LIMIT = 200
SYSTEM_PROMPT_HEAD = 4000  # characters of a system prompt on the session page


@dataclass
class CappedCount:
    value: int
    capped: bool

    def __str__(self) -> str:
        if self.capped:
            return gettext("more than %(count)s") % {"count": number(self.value - 1)}
        return number(self.value)


def capped_count(queryset, cap: int = COUNT_CAP) -> CappedCount:
    """COUNT(*) that stops at ``cap`` + 1 rows, reused while the file is unchanged."""
    capped = queryset.order_by()[: cap + 1]
    sql, params = capped.query.sql_with_params()
    n = store.while_unchanged("capped-count", (sql, params), capped.count, COUNT_TTL)
    return CappedCount(value=n, capped=n > cap)


# Sessions --------------------------------------------------------------------------------
def _by_then_id(name: str) -> Keyset:
    """``-column``: descending; ties broken by id in the same direction."""
    desc = name.startswith("-")
    return Keyset(((name.lstrip("-"), desc), ("id", desc)), name=name)


# COALESCE(last_activity_at, started_at) (last_active) is indexed in current files.
SESSION_SORTS: dict[str, Keyset] = {
    name: _by_then_id(name)
    for name in ("-started_at", "started_at", "source", "-source", "-last_active", "last_active")
}
DEFAULT_SESSION_SORT = "-started_at"


def session_sort_options(shape) -> dict[str, Keyset]:
    if shape.has_column("sessions", "last_activity_at"):
        return SESSION_SORTS
    return {k: v for k, v in SESSION_SORTS.items() if "last_active" not in k}


def sessions_for_table(queryset, *, sort: str):
    """The filtered queryset, with what the table shows and what the sort needs."""
    return sessions_for_keys(queryset.for_list(), sort=sort)


def sessions_for_keys(queryset, *, sort: str):
    """The filtered queryset with what the sort needs (the page's keys, not its cells)."""
    if "last_active" in sort:
        return queryset.annotate(last_active=Coalesce(F("last_activity_at"), F("started_at")))
    return queryset


def source_overview() -> list[dict]:
    """Sessions, messages and cost per source: a scan of every session (computed ahead)."""
    sessions = Session.objects.order_by()
    # Costs are recorded from v5 on.
    cost = (
        Sum("estimated_cost_usd")
        if sessions.has_column("estimated_cost_usd")
        else Value(None, output_field=FloatField())
    )
    return list(
        sessions.values("source")
        .annotate(sessions=Count("id"), messages=Coalesce(Sum("message_count"), 0), cost=cost)
        .order_by("-sessions", "source")
    )


def latest_sessions(limit: int = 10) -> list[Session]:
    return list(Session.objects.for_list().order_by("-started_at", "-id")[:limit])


# One session --------------------------------------------------------------------------------
def session_detail(session_id: str) -> Session | None:
    qs = Session.objects.defer("system_prompt")
    if qs.has_column("system_prompt"):
        qs = qs.annotate(
            system_prompt_head=Substr("system_prompt", 1, SYSTEM_PROMPT_HEAD + READ_PAST_CUT),
            system_prompt_length=Length("system_prompt"),
        )
    return qs.filter(pk=session_id).first()


SystemPrompt = namedtuple("SystemPrompt", "head length")


def system_prompt_of(session: Session) -> SystemPrompt | None:
    """``sessions.system_prompt`` (older writers), or ``system_prompts`` by its hash (current)."""
    if getattr(session, "system_prompt_length", None):
        return SystemPrompt(
            redact(session.system_prompt_head)[:SYSTEM_PROMPT_HEAD], session.system_prompt_length
        )
    digest = getattr(session, "system_prompt_hash", None)
    if not digest or not store.shape().has_table("system_prompts"):
        return None
    row = store.one(
        "SELECT substr(prompt, 1, %s), length(prompt) FROM system_prompts WHERE hash = %s",
        [SYSTEM_PROMPT_HEAD + READ_PAST_CUT, digest],
    )
    return SystemPrompt(redact(row[0])[:SYSTEM_PROMPT_HEAD], row[1]) if row and row[1] else None


# Characters of one field shown under "every recorded field" (the page links to exports).
FIELD_CHARS = 500


def recorded_fields(session_id: str, *, hidden: frozenset[str] = frozenset()) -> list[tuple]:
    """Every column the file has for the session, text redacted and cut; ``hidden`` not read."""
    shape = store.shape()
    names = [c for c in shape.column_order.get("sessions", ()) if c not in hidden]
    info = shape.catalog.tables.get("sessions")
    if not names:
        return []
    types = dict(zip(info.columns, info.types, strict=False)) if info else {}
    read = FIELD_CHARS + READ_PAST_CUT
    select = ", ".join(dialect.field_head(f'"{c}"', read, types.get(c, "")) for c in names)
    row = store.one(f"SELECT {select} FROM sessions WHERE id = %s", [session_id])
    if not row:
        return []
    values = (v[:FIELD_CHARS] if isinstance(v, str) else v for v in redact_many(row))
    return list(zip(names, values, strict=True))


# Shown as stored (the counters and the call count read NULL as 0).
USAGE_AS_STORED = ("estimated_cost_usd", "actual_cost_usd", "cost_status", "billing_provider")
USAGE_ROW_COLUMNS = ("model", "task", "api_call_count", *USAGE_AS_STORED, *USAGE_COUNTERS)


def session_usage(session: Session) -> list[SessionModelUsage] | None:
    """Its ``session_model_usage`` rows plus the residual the rows leave (as insights does)."""
    if not store.shape().has_table("session_model_usage"):
        return None
    rows = []
    covered = dict.fromkeys(USAGE_COUNTERS + ("api_call_count",), 0)
    # Plain values: before v22 there is no task column (the model's key); all is the main loop.
    columns = store.present("session_model_usage", USAGE_ROW_COLUMNS)
    order = ("task", "-input_tokens") if "task" in columns else ("-input_tokens",)
    usages = (
        SessionModelUsage.objects.filter(session_id=session.id).order_by(*order).values(*columns)
    )
    for usage in usages:
        row = SessionModelUsage(
            model=usage["model"],
            task=usage.get("task") or "",
            **{c: usage.get(c) or 0 for c in covered},
            **{c: usage.get(c) for c in USAGE_AS_STORED},
        )
        rows.append(row)
        for c in covered:
            covered[c] += getattr(row, c)
    residual = {c: max(0, (getattr(session, c, 0) or 0) - covered[c]) for c in USAGE_COUNTERS}
    if any(residual.values()):
        api_calls = max(0, (session.api_call_count or 0) - covered["api_call_count"])
        row = SessionModelUsage(model=session.model or "?", api_call_count=api_calls, **residual)
        row.residual = True
        rows.append(row)
    return rows


@dataclass
class Lineage:
    ancestors: list[dict] = field(default_factory=list)  # root first, direct parent last
    descendants: list[dict] = field(default_factory=list)  # depth-first, with depth
    missing_parent: str | None = None


def session_lineage(session: Session) -> Lineage:
    """The parent chain up to the root and every descendant, each in one recursive query."""
    shape = store.shape()
    lineage = Lineage()
    if not shape.has_column("sessions", "parent_session_id"):
        return lineage
    # Titles arrived in v3.
    end_reason, title = (
        f"s.{c}" if shape.has_column("sessions", c) else "NULL" for c in ("end_reason", "title")
    )
    shown = f"{title}, s.source, s.started_at, {end_reason}"
    with store.cursor() as cursor:
        cursor.execute(
            f"""
            WITH RECURSIVE up(id, parent, depth) AS (
                SELECT id, parent_session_id, 0 FROM sessions WHERE id = %s
                UNION ALL
                SELECT s.id, s.parent_session_id, up.depth + 1
                FROM sessions s JOIN up ON s.id = up.parent
                WHERE up.depth < {LINEAGE_LIMIT}
            )
            SELECT up.id, up.parent, up.depth, {shown}
            FROM up JOIN sessions s ON s.id = up.id
            WHERE up.depth > 0 ORDER BY up.depth DESC
            """,
            [session.id],
        )
        lineage.ancestors = [_lineage_row(r) for r in cursor.fetchall()]
        top = lineage.ancestors[0]["parent"] if lineage.ancestors else session.parent_session_id
        lineage.missing_parent = top or None
        cursor.execute(
            f"""
            WITH RECURSIVE down(id, parent, depth, path) AS (
                SELECT id, parent_session_id, 1, {dialect.lineage_key("started_at", "id")}
                FROM sessions WHERE parent_session_id = %s
                UNION ALL
                SELECT s.id, s.parent_session_id, down.depth + 1,
                       down.path || '/' || {dialect.lineage_key("s.started_at", "s.id")}
                FROM sessions s JOIN down ON s.parent_session_id = down.id
                WHERE down.depth < {LINEAGE_LIMIT}
            )
            SELECT down.id, down.parent, down.depth, {shown}
            FROM down JOIN sessions s ON s.id = down.id
            ORDER BY {dialect.binary_order("down.path")} LIMIT {LINEAGE_LIMIT}
            """,
            [session.id],
        )
        lineage.descendants = [_lineage_row(r) for r in cursor.fetchall()]
    return lineage


LINEAGE_FIELDS = ("id", "parent", "depth", "title", "source", "started_at", "end_reason")


def _lineage_row(row) -> dict:
    found = dict(zip(LINEAGE_FIELDS, row, strict=True))
    # Read by plain SQL, so redacted here as the ORM redacts MetadataText.
    for name in ("title", "end_reason"):
        found[name] = redact(found[name])
    return found


# Transcript ---------------------------------------------------------------------------------
PairedCall = namedtuple("PairedCall", "call result")  # a ToolCall, its TranscriptEntry or None


@dataclass
class TranscriptEntry:
    message: Message
    text: str
    truncated: bool
    length: int
    calls: list[PairedCall] = field(default_factory=list)
    malformed_calls: bool = False
    redacted: int = 0  # secrets replaced by markers in what this entry shows


@dataclass
class TranscriptPage:
    entries: list[TranscriptEntry]
    page: int
    pages: int
    total: int

    @property
    def has_previous(self) -> bool:
        return self.page > 1

    @property
    def has_next(self) -> bool:
        return self.page < self.pages


def transcript_messages(session_id: str, visibility: Visibility):
    return Message.objects.filter(session_id=session_id).transcript_visible(
        compacted=visibility.compacted, rewound=visibility.rewound, hidden=visibility.hidden
    )


def transcript_rows(base):
    """``base`` with the long texts cut in SQL (``READ_PAST_CUT`` past the cut: see above)."""
    heavy = ["content", "reasoning", "reasoning_details", "api_content", "display_metadata"]
    read = TRANSCRIPT_CUT + READ_PAST_CUT
    qs = base.defer(*heavy).annotate(
        body=ContentHead("content", read),
        body_length=ContentLength("content"),
    )
    # Releases before v6 record no reasoning, before v7 no reasoning_content.
    for column, name in (("reasoning", "reasoning_text"), ("reasoning_content", "reasoning_extra")):
        if base.has_column(column):
            qs = qs.defer(column).annotate(**{name: Substr(column, 1, read)})
        else:
            qs = qs.annotate(**{name: Value(None, output_field=TextField())})
    return qs


def transcript_page(session_id: str, visibility: Visibility, page: int) -> TranscriptPage:
    """One page of a transcript, tool calls paired with the results that answer them."""
    base = transcript_messages(session_id, visibility)
    total = store.while_unchanged(
        "transcript-total", (session_id, visibility.as_param()), base.order_by().count, COUNT_TTL
    )
    pages = max(1, -(-total // TRANSCRIPT_PAGE))
    page = min(max(page, 1), pages)
    start = (page - 1) * TRANSCRIPT_PAGE
    messages = list(transcript_rows(base).order_by("id")[start : start + TRANSCRIPT_PAGE])
    return TranscriptPage(transcript_entries(messages), page, pages, total)


def transcript_entries(messages: list) -> list[TranscriptEntry]:
    """Each tool result under the call that asked for it; redacted before anything is decoded."""
    counts = redact_rows(messages)
    by_id = {
        m.id: TranscriptEntry(
            message=m,
            text=as_text(m.body),
            truncated=(m.body_length or 0) > TRANSCRIPT_CUT,
            length=m.body_length or 0,
            redacted=counts.get(m.id, 0),
        )
        for m in messages
    }
    results = {m.tool_call_id: by_id[m.id] for m in messages if m.role == "tool" and m.tool_call_id}
    paired_ids: set[int] = set()
    for entry in by_id.values():
        message = entry.message
        if message.role == "assistant" and message.tool_calls:
            calls, entry.malformed_calls = parse_tool_calls(message.tool_calls)
            for call in calls:
                result = results.get(call.call_id) if call.call_id else None
                if result is not None:
                    paired_ids.add(result.message.id)
                entry.calls.append(PairedCall(call=call, result=result))
    return [e for e in by_id.values() if e.message.id not in paired_ids]


# The stored texts a transcript row shows; all but ``tool_calls`` are cut (``transcript_rows``).
TRANSCRIPT_TEXTS = ("body", "reasoning_text", "reasoning_extra", "tool_calls")


def redact_rows(messages: list) -> dict[int, int]:
    """Redact in place (once over the page), counting secrets per row; then cut the texts."""
    places = [
        (message, name)
        for message in messages
        for name in TRANSCRIPT_TEXTS
        if isinstance(getattr(message, name, None), str) and getattr(message, name)
    ]
    counts: dict[int, int] = {}
    if redaction_enabled():
        cleaned = redact_text_many([getattr(message, name) for message, name in places])
        for (message, name), (text, count) in zip(places, cleaned, strict=True):
            setattr(message, name, text)
            counts[message.id] = counts.get(message.id, 0) + count
    for message, name in places:
        if name != "tool_calls":
            setattr(message, name, getattr(message, name)[:TRANSCRIPT_CUT])
    return counts


def message_position(session_id: str, message_id: int, visibility: Visibility) -> int:
    """1-based transcript page on which ``message_id`` appears."""
    before = (
        transcript_messages(session_id, visibility).filter(id__lt=message_id).order_by().count()
    )
    return before // TRANSCRIPT_PAGE + 1


# Reveal ---------------------------------------------------------------------------------------
# Characters of content loaded (cut in SQL): enough for any real secret, bounded for the page.
REVEAL_CUT = 1_000_000


def message_for_reveal(*, session_id: str, message_id: int) -> Message | None:
    """The message unredacted, cut at ``REVEAL_CUT`` characters, tool calls parsed; or None."""
    base = Message.objects.only_readable(
        "id", "session", "role", "tool_name", "timestamp", "tool_calls"
    )
    # NUL-safe cuts: multimodal content starts with a NUL, where substr() would give ''.
    reasoning = (
        ContentHead("reasoning", REVEAL_CUT) if base.has_column("reasoning") else Value(None)
    )
    message = (
        base.filter(pk=message_id, session_id=session_id)
        .annotate(
            body=ContentHead("content", REVEAL_CUT),
            body_length=ContentLength("content"),
            reasoning_text=reasoning,
        )
        .first()
    )
    if message is not None:
        message.content = message.body  # what ``message.text`` reads: no query for the column
        message.truncated = (message.body_length or 0) > REVEAL_CUT
        message.calls, message.malformed_calls = parse_tool_calls(message.tool_calls)
    return message


# Messages table ---------------------------------------------------------------------------
# Ids are insertion order: "newest first" walks the primary key backwards.
MESSAGE_SORTS: dict[str, Keyset] = {
    "-id": Keyset((("id", True),), name="-id"),
    "id": Keyset((("id", False),), name="id"),
}
DEFAULT_MESSAGE_SORT = "-id"
MESSAGE_TABLE_COLUMNS = (
    "id",
    "session",
    "role",
    "tool_name",
    "timestamp",
    "token_count",
    "active",
    "compacted",
    "display_kind",
)


def messages_for_table(queryset):
    """The session's title and source by a subquery: a message whose session was pruned is
    still listed (a join would drop it)."""

    def of_session(column: str):
        if not store.shape().has_column("sessions", column):
            return Value(None, output_field=TextField())
        return Subquery(
            Session.objects.filter(pk=OuterRef("session_id")).order_by().values(column)[:1]
        )

    return queryset.only_readable(*MESSAGE_TABLE_COLUMNS).annotate(
        preview=ContentHead("content", PREVIEW_READ_CHARS),
        session_title=of_session("title"),
        session_source=of_session("source"),
    )
