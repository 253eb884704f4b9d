"""Failures as Hermes records them (``docs/failures.md``), counted by tool, model, source and
day from fixed blocks of message ids kept as :class:`~live_app.models.FailureBlock` rows; the
list behind a count reads the failing ids a block keeps, by key."""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace

from django.db import DatabaseError
from django.utils.translation import gettext_noop

from hermes_explorer import dialect, store
from insights_app import pairing
from insights_app.summary_store import store_key
from redaction import redact
from sessions_app.formatting import short_model
from sessions_app.timefmt import day_end_epoch, day_start_epoch, local_date
from sessions_app.toolcalls import call_sql

from .models import FailureBlock

log = logging.getLogger(__name__)

BLOCK = 20_000
PAGE_TTL = 60
# Failures the page lists of each sort (the export has them all).
LIST_LIMIT = 50
MAX_DAYS = 366
# Tool results are checked at both ends only (an error object's keys are at either end).
HEAD, TAIL = 400, 200
END_FAILURES = ("error", "timeout", "failed", "crashed", "exception", "api_error")

# English in the cached report and its exports; the page translates them.
KIND_LABELS = {
    "tool_error": gettext_noop("tool result is an error"),
    "finish_length": gettext_noop("answer cut at the token limit (finish_reason length)"),
    "finish_content_filter": gettext_noop("answer blocked by a content filter"),
    "finish_error": gettext_noop("model call ended in error (finish_reason error)"),
    "session_error": gettext_noop("session ended with an error or timeout"),
}


def scol(shape, name: str) -> str:
    """``s.<name>``, or NULL on a file whose sessions lack that column."""
    return shape.column_or_null("sessions", name, "s")


def _kind_sql(shape, calls: str) -> tuple[str, str]:
    """A message row's failure kind (``tool_ok`` for a good tool result) and the rows that can
    have one: tool results that are calls (``calls``, :mod:`sessions_app.toolcalls`) and
    assistant rows of a bad finish."""
    has_finish = shape.has_column("messages", "finish_reason")
    tool_error = dialect.tool_result_error("m.content", HEAD, TAIL)
    bad_finish = "m.role = 'assistant' AND m.finish_reason IN ('length', 'content_filter', 'error')"
    finish = f"WHEN {bad_finish} THEN 'finish_' || m.finish_reason " if has_finish else ""
    kind = (
        f"CASE WHEN m.role = 'tool' THEN CASE WHEN {tool_error} THEN 'tool_error' "
        f"ELSE 'tool_ok' END {finish}END"
    )
    return kind, f"({calls})" + (f" OR ({bad_finish})" if has_finish else "")


def _block_sql(shape) -> str:
    calls = call_sql(shape, t="m", outer=True)
    kind, wanted = _kind_sql(shape, calls.where)
    return (
        f"SELECT {dialect.truncated('m.timestamp / 3600')}, s.source, s.model, "
        f"CASE WHEN m.role = 'tool' THEN {calls.name} ELSE '' END, {kind}, COUNT(*), "
        f"group_concat(m.id) FROM messages m {calls.joins} JOIN sessions s ON s.id = m.session_id "
        f"WHERE m.id > %s AND m.id <= %s AND ({wanted}) GROUP BY 1, 2, 3, 4, 5"
    )


def _block_rows(shape, low: int, high: int, budget: float) -> list[tuple]:
    """The rows of :func:`_block_sql` for ids ``(low, high]`` (paired in Python on PostgreSQL)."""
    if not dialect.postgres():
        return store.rows(_block_sql(shape), [low, high], budget)
    kind, wanted = _kind_sql(shape, "m.role = 'tool' AND m.tool_call_id <> ''")
    found = store.rows(
        f"SELECT m.id, m.session_id, {dialect.truncated('m.timestamp / 3600')}, s.source, "
        f"s.model, m.tool_name, m.tool_call_id, {kind} "
        "FROM messages m JOIN sessions s ON s.id = m.session_id "
        f"WHERE m.id > %s AND m.id <= %s AND ({wanted}) ORDER BY m.id",
        [low, high],
        budget,
    )
    callers: dict[str, pairing.Callers] = defaultdict(pairing.Callers)
    asked = sorted({row[1] for row in found if row[6]})
    for mid, sid, tool_calls in store.rows(
        "SELECT id, session_id, tool_calls FROM messages WHERE role = 'assistant'"
        f" AND tool_calls IS NOT NULL AND {dialect.in_json_list('session_id')} AND id < %s"
        " ORDER BY id",
        [json.dumps(asked), high],
        budget,
    ):
        callers[sid].add(mid, tool_calls)
    groups: dict[tuple, list] = defaultdict(list)
    for mid, sid, hour, source, model, tool_name, call_id, kind in found:
        tool = ""
        if call_id:
            called = callers[sid].answered(mid, call_id)
            if called is None:
                continue
            tool = pairing.result_name(tool_name or None, called[1])
        groups[(hour, source, model, tool, kind)].append(str(mid))
    return [(*key, len(ids), ",".join(ids)) for key, ids in groups.items()]


def _row(start: int, *fields):
    try:
        return (
            FailureBlock.objects.filter(store_key=store_key(), size=BLOCK, block=start)
            .values_list(*fields)
            .first()
        )
    except DatabaseError:
        return None


def _block(start: int, top: int, shape, budget: float) -> dict:
    """The groups of message ids ``(start, start + BLOCK]`` up to ``top``, kept with the id read
    up to, so a later view reads only what is new: ``(hour, source, model, tool, kind)`` (the
    model redacted, then shortened) → ``(count, failing message ids)``."""
    found = _row(start, "upto", "groups")
    upto, merged = start, {}
    if found:
        upto, merged = found[0], {tuple(g[:5]): (g[5], tuple(g[6])) for g in found[1]}
    want = min(start + BLOCK, top)
    if upto < want:
        models: dict = {}
        for hour, source, model, tool, kind, count, ids in _block_rows(shape, upto, want, budget):
            group = (hour, source or "", _display_model(models, model), redact(tool) or "", kind)
            ids = () if kind == "tool_ok" else tuple(int(i) for i in ids.split(","))
            old = merged.get(group, (0, ()))
            merged[group] = (old[0] + count, old[1] + ids)
        groups = [[*key, count, list(ids)] for key, (count, ids) in merged.items()]
        try:  # a failure to keep it only means reading the store again later
            FailureBlock.objects.update_or_create(
                store_key=store_key(),
                size=BLOCK,
                block=start,
                defaults={"profile": store.name(), "upto": want, "groups": groups, "digest": None},
            )
        except DatabaseError as exc:
            log.warning("failure counts not kept: %s", exc)
    return merged


def _digest(start: int, top: int, shape, budget: float) -> dict:
    """A block's sums for an unfiltered window that holds all of it, kept beside the block: a
    few hundred entries instead of thousands."""
    want = min(start + BLOCK, top)
    found = _row(start, "upto", "digest")
    if found and found[0] == want and found[1] is not None:
        kept = found[1]
    else:
        groups = _block(start, top, shape, budget)
        totals, hourly = Counter(), Counter()
        _add_groups(groups, totals, hourly)
        kept = {
            "first_hour": min((h for h, *_, kind in groups if None not in (h, kind)), default=None),
            "totals": [[*k, n] for k, n in totals.items()],
            "hourly": [[*k, n] for k, n in hourly.items()],
        }
        try:
            FailureBlock.objects.filter(
                store_key=store_key(), size=BLOCK, block=start, upto=want
            ).update(digest=kept)
        except DatabaseError as exc:
            log.warning("failure counts not kept: %s", exc)
    return {
        "first_hour": kept["first_hour"],
        "totals": Counter({tuple(t[:4]): t[4] for t in kept["totals"]}),
        "hourly": Counter({tuple(h[:2]): h[2] for h in kept["hourly"]}),
    }


def _add_groups(groups: dict, totals: Counter, hourly: Counter, wanted=None) -> None:
    """A block's groups added to ``totals`` and ``hourly``; ``wanted`` picks the groups."""
    for (hour, source, model, tool, kind), (count, _ids) in groups.items():
        if hour is None or kind is None or (wanted and not wanted(hour, source, model, tool)):
            continue
        totals[(source, model, tool, kind)] += count
        if kind != "tool_ok":
            hourly[(hour, kind)] += count


def _first_id_at(since: float, top: int, budget: float) -> int:
    """The smallest message id with ``timestamp >= since``, by binary search over ids."""
    low, high = 0, top
    while low < high:
        mid = (low + high) // 2
        row = store.one(
            "SELECT timestamp FROM messages WHERE id > %s ORDER BY id LIMIT 1", [mid], budget=budget
        )
        if row is None or row[0] is None or row[0] >= since:
            high = mid
        else:
            low = mid + 1
    return low


@dataclass(frozen=True)
class Filters:
    days: int = 30
    source: str = ""
    model: str = ""
    tool: str = ""
    # These narrow the list of failures only; the counts are the window's.
    kind: str = ""
    start: dt.date | None = None
    end: dt.date | None = None
    # The profiles chosen (``?profile=``), kept in the page's links.
    profile: tuple[str, ...] = ()

    @property
    def counted(self) -> Filters:
        return replace(self, kind="", start=None, end=None, profile=())


@dataclass
class Group:
    key: str
    failures: int = 0
    tool_calls: int = 0
    sessions: int = 0
    by_kind: Counter = field(default_factory=Counter)
    href: str = ""
    # Per kind, the list of that kind's failures of the group (set by the page).
    kind_hrefs: dict = field(default_factory=dict)

    @property
    def per_100_calls(self) -> float | None:
        return 100.0 * self.by_kind["tool_error"] / self.tool_calls if self.tool_calls else None


@dataclass
class Report:
    filters: Filters
    since: float
    now: float
    kinds: Counter
    tool_calls: int
    sessions: int
    failed_sessions: int
    by_tool: list[Group]
    by_model: list[Group]
    by_source: list[Group]
    by_day: list[tuple[str, Counter]]
    recorded: dict[str, bool]
    elapsed: float = 0.0

    @property
    def failures(self) -> int:
        return sum(self.kinds.values())

    @property
    def tool_error_rate(self) -> float | None:
        return 100.0 * self.kinds["tool_error"] / self.tool_calls if self.tool_calls else None

    @property
    def per_session(self) -> float | None:
        return self.failures / self.sessions if self.sessions else None


def _matches(f: Filters, source: str, model: str, tool: str) -> bool:
    return (
        (not f.source or source == f.source)
        and (not f.model or model == f.model)
        and (not f.tool or tool == f.tool)
    )


def build(f: Filters, *, budget: float, now: float | None = None) -> Report:
    started = time.perf_counter()
    now = time.time() if now is None else now
    since = now - f.days * 86_400
    shape = store.shape()
    top = (store.one("SELECT COALESCE(MAX(id), 0) FROM messages", budget=budget) or (0,))[0]
    first = _first_id_at(since, top, budget)
    since_hour = int(since // 3600)
    totals: Counter = Counter()
    hourly: Counter = Counter()
    start = (max(first - 1, 0) // BLOCK) * BLOCK
    filtered = bool(f.source or f.model or f.tool)

    def wanted(hour, source, model, tool) -> bool:
        return hour >= since_hour and (not filtered or _matches(f, source, model, tool))

    while start < top:
        if not filtered:
            digest = _digest(start, top, shape, budget)
            if digest["first_hour"] is not None and digest["first_hour"] >= since_hour:
                # The whole block is in the window: its sums, not its groups.
                totals.update(digest["totals"])
                hourly.update(digest["hourly"])
                start += BLOCK
                continue
        _add_groups(_block(start, top, shape, budget), totals, hourly, wanted)
        start += BLOCK
    groups: dict[str, dict[str, Group]] = {"tool": {}, "model": {}, "source": {}}
    for (source, model, tool, kind), count in totals.items():
        for dim, value in (("tool", tool), ("model", model), ("source", source)):
            if dim == "tool" and kind.startswith("finish_"):
                continue
            g = _group(groups[dim], value)
            if kind in ("tool_ok", "tool_error"):
                g.tool_calls += count
            if kind != "tool_ok":
                g.failures += count
                g.by_kind[kind] += count
    daily: dict[str, Counter] = defaultdict(Counter)
    days_of: dict[int, str] = {}
    for (hour, kind), count in hourly.items():
        if hour not in days_of:
            days_of[hour] = local_date(hour * 3600).isoformat()
        daily[days_of[hour]][kind] += count
    sessions, failed_sessions = _sessions(f, since, shape, groups, daily, budget)
    # Every count is in exactly one source's group: their sums are the window's.
    by_source = groups["source"].values()
    report = Report(
        filters=f,
        since=since,
        now=now,
        kinds=sum((g.by_kind for g in by_source), Counter()),
        tool_calls=sum(g.tool_calls for g in by_source),
        sessions=sessions,
        failed_sessions=failed_sessions,
        by_tool=ranked(groups["tool"]),
        by_model=ranked(groups["model"]),
        by_source=ranked(groups["source"]),
        by_day=sorted(daily.items()),
        recorded={
            "finish_reason": shape.has_column("messages", "finish_reason"),
            "end_reason": shape.has_column("sessions", "end_reason"),
            "tool_name": shape.has_column("messages", "tool_name"),
        },
    )
    report.elapsed = time.perf_counter() - started
    return report


def _sessions(f, since, shape, groups, daily, budget) -> tuple[int, int]:
    """Sessions started in the window, and those that ended with a failure ``end_reason``."""
    end = scol(shape, "end_reason")
    total = failed = 0
    rows = store.rows(
        f"SELECT s.source, s.model, {end}, MIN(s.started_at), "
        "COUNT(*) FROM sessions s WHERE s.started_at >= %s "
        f"GROUP BY 1, 2, 3, {dialect.truncated('s.started_at / 86400')}",
        [since],
        budget,
    )
    models: dict = {}
    for source, raw_model, end_reason, started_at, count in rows:
        source, model = source or "", _display_model(models, raw_model)
        if f.tool or not _matches(f, source, model, ""):
            continue
        total += count
        for dim, value in (("model", model), ("source", source)):
            g = _group(groups[dim], value)
            g.sessions += count
            if end_reason in END_FAILURES:
                g.failures += count
                g.by_kind["session_error"] += count
        if end_reason in END_FAILURES:
            failed += count
            daily[local_date(started_at).isoformat()]["session_error"] += count
    return total, failed


def _group(groups: dict[str, Group], value: str) -> Group:
    key = value or "(unnamed)"
    return groups.setdefault(key, Group(key))


def ranked(groups: dict[str, Group]) -> list[Group]:
    return sorted(
        (g for g in groups.values() if g.failures or g.tool_calls),
        key=lambda g: (-g.failures, g.key),
    )


def _display_model(models: dict, raw) -> str:
    if raw not in models:
        models[raw] = short_model(redact(raw))
    return models[raw]


def _list_bounds(f: Filters, now: float) -> tuple[float, float, float]:
    """The list's bounds: the window's first hour for messages (as counted), its exact start for
    sessions, and the end of ``f.end``."""
    since = now - f.days * 86_400
    first_hour, end = (since // 3600) * 3600, 1e18
    if f.start:
        first_hour = max(first_hour, day_start_epoch(f.start))
        since = max(since, day_start_epoch(f.start))
    if f.end:
        end = day_end_epoch(f.end)
    return first_hour, since, end


def _listed(f: Filters, key: tuple, low: float, high: float) -> bool:
    """Whether a block's group is listed: by whole hours, as counted (a day is the hours that
    start in it)."""
    hour, source, model, tool, kind = key
    return (
        hour is not None
        and kind not in (None, "tool_ok")
        and (not f.kind or kind == f.kind)
        and low <= hour * 3600 < high
        and _matches(f, source, model, tool)
    )


def failing_messages(
    f: Filters, *, budget: float, now: float | None = None, limit=None, below: int | None = None
):
    """The failing messages of the window and filters, newest first, one list per block;
    ``below``: only ids below it.  They are the ids the blocks keep behind each count, so the
    list and the counts agree; only their metadata is read, by key (never content)."""
    if f.kind == "session_error":
        return
    now = time.time() if now is None else now
    low, _since, high = _list_bounds(f, now)
    shape = store.shape()
    top = (store.one("SELECT COALESCE(MAX(id), 0) FROM messages", budget=budget) or (0,))[0]
    cap = top if below is None else min(top, below - 1)
    floor = (max(_first_id_at(low, top, budget) - 1, 0) // BLOCK) * BLOCK
    title = scol(shape, "title")
    start = ((cap - 1) // BLOCK) * BLOCK
    while cap > 0 and start >= floor and (limit is None or limit > 0):
        groups = {
            i: key
            for key, (_count, ids) in _block(start, top, shape, budget).items()
            if _listed(f, key, low, high)
            for i in ids
            if i <= cap
        }
        ids = sorted(groups, reverse=True)[:limit]
        for part in range(0, len(ids), 500):
            wanted = ids[part : part + 500]
            marks = store.marks(wanted)
            rows = store.rows(
                f"SELECT m.id, m.session_id, m.timestamp, {title} FROM messages m "
                f"JOIN sessions s ON s.id = m.session_id WHERE m.id IN ({marks}) "
                "ORDER BY m.id DESC",
                wanted,
                budget,
            )
            chunk = []
            for mid, sid, ts, title_of in rows:
                _hour, source, model, tool, kind = groups[mid]
                chunk.append(_failure(kind, ts, sid, title_of, source, model, mid, tool))
            yield chunk
        limit = None if limit is None else limit - len(ids)
        start -= BLOCK


def failed_sessions(
    f: Filters,
    *,
    budget: float,
    now: float | None = None,
    limit: int | None = None,
    after: list | None = None,
) -> list[dict]:
    """The window's sessions that ended with a failure, newest first (``after``: those after
    ``[started_at, id]``)."""
    shape = store.shape()
    if (
        not shape.has_column("sessions", "end_reason")
        or f.tool
        or f.kind not in ("", "session_error")
    ):
        return []
    _low, since, high = _list_bounds(f, time.time() if now is None else now)
    marks = store.marks(END_FAILURES)
    past = ""
    if after is not None:
        past = " AND (s.started_at < %s OR (s.started_at = %s AND s.id < %s))"
        after = [after[0], after[0], after[1]]
    # Without a filter read here, the first ``limit`` rows are the answer: read those alone.
    cut = [limit] if limit is not None and not (f.source or f.model) else []
    rows = store.rows(
        f"SELECT s.id, s.source, s.model, {scol(shape, 'title')}, s.end_reason, s.started_at "
        "FROM sessions s "
        f"WHERE s.started_at >= %s AND s.started_at < %s AND s.end_reason IN ({marks}){past} "
        "ORDER BY s.started_at DESC, s.id DESC" + (" LIMIT %s" if cut else ""),
        [since, high, *END_FAILURES, *(after or []), *cut],
        budget,
    )
    models: dict = {}
    out = []
    for sid, source, raw_model, title, end_reason, started in rows:
        model = _display_model(models, raw_model)
        if not _matches(f, source or "", model, ""):
            continue
        row = _failure("session_error", started, sid, title, source, model)
        out.append({**row, "end_reason": end_reason})
        if len(out) == limit:
            break
    return out


def _failure(
    kind: str, when, session_id: str, title, source, model: str, message_id=None, tool: str = ""
) -> dict:
    """One failure as the list and the export show it (metadata only)."""
    return {
        "kind": kind,
        "kind_label": KIND_LABELS.get(kind, gettext_noop("failure")),
        "timestamp": when,
        "session_id": session_id,
        "title": redact(title or ""),
        "message_id": message_id,
        "tool": tool,
        "model": model,
        "source": source or "",
        "end_reason": "",
    }


def report_for(f: Filters, *, budget: float) -> Report:
    """The report, reused for a minute while the file is unchanged."""
    counted = f.counted
    return store.while_unchanged(
        "failures-page", counted, lambda: build(counted, budget=budget), PAGE_TTL
    )
