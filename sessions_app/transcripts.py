"""One transcript as a file, Markdown or JSON, streamed in keyset chunks and redacted as on the
page.  The Markdown survives any content: fences outgrow any backtick run inside, inline
values are escaped, and no data is live HTML."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from django.utils import timezone

from redaction import redact, redaction_enabled

from .content import as_text, parse_tool_calls, pretty_json
from .exports import buffered, json_text, keyset_chunks
from .models import SECRET_MESSAGE_COLUMNS, SECRET_SESSION_COLUMNS, Message, Session
from .pagination import Keyset
from .selectors import LINEAGE_LIMIT, transcript_messages
from .timefmt import iso
from .visibility import Visibility, kind_of

# Messages in insertion order, within each session.
BY_ID = Keyset((("id", False),), name="id")
TRANSCRIPT_CHUNK_ROWS = 500
# Reasoning payloads some providers store besides ``reasoning``.
REASONING_FIELDS = ("reasoning", "reasoning_content")
# Markers Hermes puts in ``model_config`` of sessions that are not compression continuations.
NOT_CONTINUATION = ("_delegate_from", "_branched_from", "_reset_from")


# The sessions -------------------------------------------------------------------------------
def _chain_columns(qs):
    return qs.only_readable("id", "parent_session_id", "end_reason", "source", "model_config")


def _is_continuation(child: Session) -> bool:
    markers = child.model_config_data
    return child.source != "subagent" and not any(m in markers for m in NOT_CONTINUATION)


def compression_chain(session: Session) -> list[Session]:
    """The compression chain ``session`` belongs to, root first: up through parents that ended
    with ``end_reason='compression'``, down through each such session's earliest child that is
    not a delegation, branch or reset; ``LINEAGE_LIMIT`` steps each way, cycles stopped."""
    qs = Session.objects.order_by()
    if not qs.has_column("parent_session_id") or not qs.has_column("end_reason"):
        return [session]
    chain = [session]  # a session already in it ends the walk (models compare by id)
    current = session
    for _ in range(LINEAGE_LIMIT):
        if not current.parent_session_id or not _is_continuation(current):
            break
        parent = _chain_columns(qs.filter(pk=current.parent_session_id)).first()
        if parent is None or parent.end_reason != "compression" or parent in chain:
            break
        chain.insert(0, parent)
        current = parent
    current = session
    for _ in range(LINEAGE_LIMIT):
        if current.end_reason != "compression":
            break
        children = _chain_columns(qs.filter(parent_session_id=current.id)).order_by(
            "started_at", "id"
        )[:LINEAGE_LIMIT]
        child = next((c for c in children if _is_continuation(c) and c not in chain), None)
        if child is None:
            break
        chain.append(child)
        current = child
    # The walk read only the lineage columns: give every session all of its own.
    full = {s.id: s for s in Session.objects.filter(pk__in=[s.id for s in chain])}
    return [full.get(s.id, s) for s in chain]


# The messages -------------------------------------------------------------------------------
def message_chunks(sessions: list[Session], visibility: Visibility) -> Iterator[list[dict]]:
    qs = Message.objects.all()
    columns = {
        f.attname: f.column for f in Message._meta.concrete_fields if qs.has_column(f.column)
    }
    hide = (
        [c for c in SECRET_MESSAGE_COLUMNS if c in columns.values()] if redaction_enabled() else []
    )

    def to_row(raw: dict) -> dict:
        # Keys are the state.db's column names: the JSON export mirrors the file.
        row = {columns[name]: value for name, value in raw.items()}
        for column in hide:
            row[column] = redact(row[column])
        row["timestamp_iso"] = iso(raw.get("timestamp")) or None
        row["visibility"] = kind_of(
            raw.get("active"), raw.get("compacted"), raw.get("display_kind")
        )
        return row

    for session in sessions:
        qs = transcript_messages(session.id, visibility).values(*columns)
        yield from keyset_chunks(qs, BY_ID, to_row=to_row, chunk_size=TRANSCRIPT_CHUNK_ROWS)


def session_dict(session: Session) -> dict:
    qs = Session.objects.all()
    data = {}
    for f in Session._meta.concrete_fields:
        if not qs.has_column(f.column):
            continue
        value = getattr(session, f.attname)
        data[f.column] = redact(value) if f.column in SECRET_SESSION_COLUMNS else value
        if f.name in ("started_at", "ended_at", "last_activity_at"):
            data[f"{f.column}_iso"] = iso(value) or None
    return data


# JSON ---------------------------------------------------------------------------------------
def json_pieces(
    session: Session,
    chain: list[Session] | None,
    visibility: Visibility,
    chunks,
    extra: dict | None = None,
    profile: str | None = None,
) -> Iterator[str]:
    export = {
        "exported_at": timezone.localtime().isoformat(timespec="seconds"),
        "visibility": visibility.as_param(),
        "chain": chain is not None,
    }
    if profile is not None:
        export["profile"] = profile
    yield '{\n "export": ' + json_text(export)
    yield ',\n "session": ' + json_text(session_dict(session))
    if extra is not None:
        yield ',\n "annotations": ' + json_text(extra)
    yield ',\n "sessions": [' + ", ".join(json_text(session_dict(s)) for s in chain or [session])
    yield '],\n "messages": ['
    first = True
    for chunk in chunks:
        for row in chunk:
            yield ("\n  " if first else ",\n  ") + json_text(row)
            first = False
        yield ""
    yield ("]" if first else "\n ]") + "\n}\n"


# Markdown -----------------------------------------------------------------------------------
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>&|~#])")
_BACKTICKS = re.compile(r"`+")


def md_inline(value: object) -> str:
    text = " ".join(str(value).split())
    return _MD_SPECIAL.sub(r"\\\1", text)


def _ticks(text: str, at_least: int) -> str:
    return "`" * max(at_least, max(map(len, _BACKTICKS.findall(text)), default=0) + 1)


def md_code(value: object) -> str:
    """An inline code span for ids and names; its delimiter outgrows any backticks inside."""
    text = " ".join(str(value).split())
    ticks = _ticks(text, 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def fenced(text: str, info: str = "") -> str:
    """A fenced block no content can close early: longer than any backtick run inside."""
    fence = _ticks(text, 3)
    body = text if text.endswith("\n") else text + "\n"
    return f"{fence}{info}\n{body}{fence}\n"


def _meta_lines(session: Session) -> list[str]:
    cost = session.estimated_cost_usd
    codes = [
        ("Session", session.id),
        ("Source", session.source),
        ("User", session.user_id),
        ("Model", session.model),
        ("Parent session", session.parent_session_id),
        ("End reason", session.end_reason),
    ]
    pairs = [
        ("Started", iso(session.started_at)),
        ("Ended", iso(session.ended_at) if session.ended_at is not None else "never closed"),
        ("Messages", session.message_count),
        ("Tokens", f"in {session.input_tokens or 0:,} · out {session.output_tokens or 0:,}"),
        ("Estimated cost", f"${cost:.4f}" if cost is not None else None),
        ("Cost status", session.cost_status),
    ]
    lines = [f"- **{label}:** {md_code(value)}" for label, value in codes if value]
    lines += [
        f"- **{label}:** {md_inline(value)}" for label, value in pairs if value not in (None, "")
    ]
    return lines


def _md_value(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value) if value not in (None, "") else "none"


def _title(session: Session) -> str:
    return session.title or f"Untitled session {session.id}"


def markdown_pieces(
    session: Session,
    chain: list[Session] | None,
    visibility: Visibility,
    chunks,
    extra: dict | None = None,
    profile: str | None = None,
) -> Iterator[str]:
    sessions = chain or [session]
    by_id = {s.id: s for s in sessions}
    yield f"# {md_inline(_title(session))}\n\n"
    if profile is not None:
        yield f"- **Profile:** {md_code(profile)}\n"
    yield "\n".join(_meta_lines(session)) + "\n"
    if extra:
        yield " · ".join(f"**{md_inline(k)}:** {md_inline(_md_value(v))}" for k, v in extra.items())
        yield "\n"
    yield (
        f"- **Exported:** {md_inline(timezone.localtime().isoformat(timespec='seconds'))}"
        f" · showing {md_inline(visibility.label)} messages\n"
    )
    if chain is not None:
        yield f"- **Compression chain:** {len(chain)} session{'s' if len(chain) != 1 else ''}: "
        yield " → ".join(md_code(s.id) for s in chain) + "\n"
    yield "\n"
    number = 0
    current = None
    # Tool rows often lack tool_name (CLI): name them after the call they answer.
    call_names: dict[str, str] = {}
    for chunk in chunks:
        for row in chunk:
            if chain is not None and row["session_id"] != current:
                current = row["session_id"]
                part = by_id[current]
                index = sessions.index(part) + 1
                yield (
                    f"\n## Part {index} of {len(sessions)}: {md_inline(_title(part))}\n\n"
                    f"{md_code(part.id)} · {md_code(part.source)} · started "
                    f"{md_inline(iso(part.started_at))}"
                    f"{' · ended by compression' if part.end_reason == 'compression' else ''}\n"
                )
            number += 1
            yield _markdown_message(number, row, call_names)
        yield ""
    if number == 0:
        yield "*No messages to show.*\n"


def _markdown_message(number: int, row: dict, call_names: dict[str, str]) -> str:
    role = row.get("role") or "unknown"
    head = f"\n### {number}. {md_inline(role)}"
    if role == "tool":
        head += " result"
        name = row.get("tool_name") or call_names.pop(row.get("tool_call_id") or "", None)
        if name:
            head += f" · {md_code(name)}"
    when = row.get("timestamp_iso")
    if when:
        head += f" · {md_inline(when)}"
    notes = [f"message {row['id']}"]
    if row.get("tool_call_id"):
        notes.append(f"answers {md_code(row['tool_call_id'])}")
    if row.get("visibility") not in (None, "live"):
        notes.append(md_inline(row["visibility"]))
    if row.get("_compressed_summary"):
        notes.append("compression summary")
    if row.get("finish_reason"):
        notes.append(f"finish: {md_code(row['finish_reason'])}")
    out = [head, "\n\n", " · ".join(notes), "\n\n"]
    reasoning = next((row[name] for name in REASONING_FIELDS if row.get(name)), None)
    if reasoning:
        reasoning = fenced(str(reasoning), "text")
        out.append(f"<details><summary>Reasoning</summary>\n\n{reasoning}\n</details>\n\n")
    text = as_text(row.get("content"))
    if text:
        out.append(fenced(text, "markdown" if role == "assistant" else "text"))
    calls, malformed = parse_tool_calls(row.get("tool_calls"))
    for call in calls:
        if call.call_id:
            call_names[call.call_id] = call.name
        label = f"\n**Tool call** {md_code(call.name)}"
        if call.call_id:
            label += f" ({md_code(call.call_id)})"
        out.append(label + "\n\n")
        arguments = pretty_json(call.raw_arguments) if call.raw_arguments else ""
        out.append(fenced(arguments, "json"))
    if malformed:
        out.append("\n**Tool calls** (not valid JSON, shown as stored)\n\n")
        out.append(fenced(str(row.get("tool_calls")), "text"))
    if not text and not calls and not malformed:
        out.append("*(no content)*\n")
    return "".join(out)


def transcript_stream(
    kind: str,
    session: Session,
    chain: list[Session] | None,
    visibility: Visibility,
    extra: dict | None = None,
    profile: str | None = None,
) -> Iterable[bytes]:
    """The file's bytes (``kind``: ``md`` or ``json``; ``profile``: the store's, if several)."""
    chunks = message_chunks(chain or [session], visibility)
    pieces = markdown_pieces if kind == "md" else json_pieces
    return buffered(
        pieces(session, chain, visibility, chunks, extra, profile),
        label=f"transcript {session.id}",
        kind="transcript",
    )
