"""What went wrong: failures as Hermes records them, counted by tool, model, source and day.

Hermes stores no "failed" flag; a failure is read from what it stores (``docs/failures.md``):
a ``tool`` result that is an error (a JSON ``"error"``, ``"success": false``, a non-zero
``"exit_code"``, or text starting with ``Error``), an ``assistant`` row whose
``finish_reason`` is ``length``, ``content_filter`` or ``error``, and a session whose
``end_reason`` names an error or a timeout.

No index serves the message side, so it is scanned in fixed blocks of message ids (a block is
a stretch of time).  Each block's counts, by hour, source, model, tool and kind, are kept in
the ``failures`` file cache with the id read up to; a later view reads only the ids appended
since, and a window adds up the blocks it covers.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import heapq
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from django.core.cache import cache, caches
from django.core.cache.backends.base import InvalidCacheBackendError
from django.utils import timezone
from django.utils.translation import gettext_noop

from hermes_explorer import store
from redaction import redact
from sessions_app.formatting import short_model

BLOCK = 20_000
BLOCK_TTL = 86_400
PAGE_TTL = 60
EXAMPLES = 25
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

_TOOL_ERROR = f"""(
  substr(m.content, 1, 5) = 'Error'
  OR instr(substr(m.content, 1, {HEAD}), '"error": "') > 0
  OR instr(substr(m.content, 1, {HEAD}), '"success": false') > 0
  OR instr(substr(m.content, -{TAIL}), '"error": "') > 0
  OR substr(m.content, -{TAIL}) GLOB '*"exit_code": [1-9-]*'
)"""


def _col(shape, table: str, alias: str, name: str, default: str = "NULL") -> str:
    """``alias.name`` when this file has the column, else ``default`` (a literal)."""
    return f"{alias}.{name}" if shape.has_column(table, name) else default


def _block_sql(shape) -> str:
    has_finish = shape.has_column("messages", "finish_reason")
    finish = (
        "WHEN m.role = 'assistant' AND m.finish_reason IN ('length', 'content_filter', 'error') "
        "THEN 'finish_' || m.finish_reason "
        if has_finish
        else ""
    )
    wanted = "m.role = 'tool'" + (
        " OR (m.role = 'assistant' AND m.finish_reason IN ('length', 'content_filter', 'error'))"
        if has_finish
        else ""
    )
    return (
        "SELECT CAST(m.timestamp / 3600 AS INTEGER), s.source, "
        f"{_col(shape, 'sessions', 's', 'model')}, "
        f"CASE WHEN m.role = 'tool' THEN COALESCE({_col(shape, 'messages', 'm', 'tool_name')}, '') "
        "ELSE '' END, "
        f"CASE WHEN m.role = 'tool' THEN CASE WHEN {_TOOL_ERROR} THEN 'tool_error' "
        f"ELSE 'tool_ok' END {finish}END, COUNT(*), MAX(m.id) "
        "FROM messages m JOIN sessions s ON s.id = m.session_id "
        f"WHERE m.id > ? AND m.id <= ? AND ({wanted}) GROUP BY 1, 2, 3, 4, 5"
    )


def _block(start: int, top: int, identity: tuple, shape, budget: float) -> dict:
    """The grouped rows of message ids ``(start, start + BLOCK]`` up to ``top``, cached with
    the id read up to so a later view reads only what is new.  Keys are ``(hour, source,
    model, tool, kind)`` (the model short and redacted), values ``(count, newest id)``."""
    end = start + BLOCK
    raw = repr((identity, start, BLOCK)).encode()
    key = "failures-block:" + hashlib.sha256(raw).hexdigest()
    cached = failure_cache().get(key)
    upto, merged = cached if cached else (start, {})
    want = min(end, top)
    if upto < want:
        models: dict = {}
        for hour, source, model, tool, kind, count, max_id in store.rows(
            _block_sql(shape), [upto, want], budget
        ):
            if model not in models:
                models[model] = redact(short_model(model))
            group = (hour, source or "", models[model], redact(tool) or "", kind)
            old = merged.get(group)
            merged[group] = (
                (count, max_id) if old is None else (old[0] + count, max(old[1], max_id))
            )
        failure_cache().set(key, (want, merged), BLOCK_TTL)
    return merged


def _digest(start: int, top: int, identity: tuple, shape, budget: float) -> dict:
    """A block's groups summed for an unfiltered window that holds all of it (per ``(source,
    model, tool, kind)``, per ``(hour, kind)``, newest failing ids, first hour), cached beside
    the block: a few hundred entries instead of thousands."""
    want = min(start + BLOCK, top)
    key = "failures-digest:" + hashlib.sha256(repr((identity, start, BLOCK)).encode()).hexdigest()
    cached = failure_cache().get(key)
    if cached and cached[0] == want:
        return cached[1]
    totals: Counter = Counter()
    hourly: Counter = Counter()
    failing: list[int] = []
    first_hour = None
    for (hour, source, model, tool, kind), (count, max_id) in _block(
        start, top, identity, shape, budget
    ).items():
        if hour is None or kind is None:
            continue
        first_hour = hour if first_hour is None else min(first_hour, hour)
        totals[(source, model, tool, kind)] += count
        if kind != "tool_ok":
            hourly[(hour, kind)] += count
            failing.append(max_id)
    digest = {
        "first_hour": first_hour,
        "totals": totals,
        "hourly": hourly,
        "newest": heapq.nlargest(EXAMPLES, failing),
    }
    failure_cache().set(key, (want, digest), BLOCK_TTL)
    return digest


def failure_cache():
    """The ``failures`` cache when configured, else the default one."""
    try:
        return caches["failures"]
    except InvalidCacheBackendError:
        return cache


def _first_id_at(since: float, top: int, budget: float) -> int:
    """The smallest message id with ``timestamp >= since``, by binary search over ids."""
    low, high = 0, top
    while low < high:
        mid = (low + high) // 2
        row = store.one(
            "SELECT timestamp FROM messages WHERE id > ? ORDER BY id LIMIT 1", [mid], budget=budget
        )
        if row is None or row[0] is None or row[0] >= since:
            high = mid
        else:
            low = mid + 1
    return low


def local_day(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, tz=timezone.get_current_timezone()).date().isoformat()


@dataclass(frozen=True)
class Filters:
    days: int = 30
    source: str = ""
    model: str = ""
    tool: str = ""


@dataclass
class Group:
    key: str
    failures: int = 0
    tool_calls: int = 0
    sessions: int = 0
    by_kind: Counter = field(default_factory=Counter)
    href: str = ""

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
    examples: list[dict]
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
    identity = store.file_identity()
    top = (store.one("SELECT COALESCE(MAX(id), 0) FROM messages", budget=budget) or (0,))[0]
    first = _first_id_at(since, top, budget)
    since_hour = int(since // 3600)
    totals: Counter = Counter()
    hourly: Counter = Counter()
    candidates: list[int] = []
    start = (max(first - 1, 0) // BLOCK) * BLOCK
    filtered = bool(f.source or f.model or f.tool)
    while start < top:
        if not filtered:
            digest = _digest(start, top, identity, shape, budget)
            if digest["first_hour"] is not None and digest["first_hour"] >= since_hour:
                # The whole block is in the window: its sums, not its groups.
                totals.update(digest["totals"])
                hourly.update(digest["hourly"])
                candidates.extend(digest["newest"])
                start += BLOCK
                continue
        for (hour, source, model, tool, kind), (count, max_id) in _block(
            start, top, identity, shape, budget
        ).items():
            if hour is None or hour < since_hour or kind is None:
                continue
            if filtered and not _matches(f, source, model, tool):
                continue
            totals[(source, model, tool, kind)] += count
            if kind != "tool_ok":
                hourly[(hour, kind)] += count
                candidates.append(max_id)
        start += BLOCK
    kinds: Counter = Counter()
    calls = 0
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
        if kind in ("tool_ok", "tool_error"):
            calls += count
        if kind != "tool_ok":
            kinds[kind] += count
    daily: dict[str, Counter] = defaultdict(Counter)
    days_of: dict[int, str] = {}
    for (hour, kind), count in hourly.items():
        if hour not in days_of:
            days_of[hour] = local_day(hour * 3600)
        daily[days_of[hour]][kind] += count
    newest = heapq.nlargest(EXAMPLES, candidates)
    sessions, failed_sessions = _sessions(f, since, shape, groups, kinds, daily, budget)
    report = Report(
        filters=f,
        since=since,
        now=now,
        kinds=kinds,
        tool_calls=calls,
        sessions=sessions,
        failed_sessions=failed_sessions,
        by_tool=_ranked(groups["tool"]),
        by_model=_ranked(groups["model"]),
        by_source=_ranked(groups["source"]),
        by_day=sorted(daily.items()),
        examples=_examples(newest, budget),
        recorded={
            "finish_reason": shape.has_column("messages", "finish_reason"),
            "end_reason": shape.has_column("sessions", "end_reason"),
            "tool_name": shape.has_column("messages", "tool_name"),
        },
    )
    report.elapsed = time.perf_counter() - started
    return report


def _sessions(f, since, shape, groups, kinds, daily, budget) -> tuple[int, int]:
    """Sessions started in the window, and those that ended with a failure ``end_reason``."""
    has_end = shape.has_column("sessions", "end_reason")
    end = "s.end_reason" if has_end else "NULL"
    total = failed = 0
    rows = store.rows(
        f"SELECT s.source, {_col(shape, 'sessions', 's', 'model')}, {end}, s.started_at, COUNT(*) "
        "FROM sessions s WHERE s.started_at >= ? "
        "GROUP BY 1, 2, 3, CAST(started_at / 86400 AS INTEGER)",
        [since],
        budget,
    )
    models: dict = {}
    for source, raw_model, end_reason, started_at, count in rows:
        if raw_model not in models:
            models[raw_model] = redact(short_model(raw_model))
        source, model = source or "", models[raw_model]
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
            kinds["session_error"] += count
            daily[local_day(started_at)]["session_error"] += count
    return total, failed


def _group(groups: dict[str, Group], value: str) -> Group:
    key = value or "(unnamed)"
    group = groups.get(key)
    if group is None:
        group = groups[key] = Group(key)
    return group


def _ranked(groups: dict[str, Group]) -> list[Group]:
    return sorted(
        (g for g in groups.values() if g.failures or g.tool_calls),
        key=lambda g: (-g.failures, g.key),
    )


def _examples(ids: list[int], budget: float) -> list[dict]:
    """The newest failing messages (metadata only: never their content)."""
    if not ids:
        return []
    shape = store.shape()
    finish = "m.finish_reason" if shape.has_column("messages", "finish_reason") else "NULL"
    marks = ",".join("?" * len(ids))
    rows = store.rows(
        f"SELECT m.id, m.session_id, m.role, {_col(shape, 'messages', 'm', 'tool_name')}, "
        f"{finish}, m.timestamp, s.source, {_col(shape, 'sessions', 's', 'model')}, "
        f"{_col(shape, 'sessions', 's', 'title')} "
        "FROM messages m JOIN sessions s ON s.id = m.session_id "
        f"WHERE m.id IN ({marks}) ORDER BY m.id DESC",
        ids,
        budget,
    )
    return [
        {
            "message_id": r[0],
            "session_id": r[1],
            "kind": "tool_error" if r[2] == "tool" else f"finish_{r[4]}",
            "kind_label": KIND_LABELS.get(
                "tool_error" if r[2] == "tool" else f"finish_{r[4]}", gettext_noop("failure")
            ),
            "tool": r[3] or "",
            "timestamp": r[5],
            "source": r[6] or "",
            "model": redact(short_model(r[7])),
            "title": redact(r[8] or ""),
        }
        for r in rows
    ]


def warm(*, budget: float) -> None:
    """Read and keep the counts of every block the longest window covers (``insights_warm``)."""
    build(Filters(days=MAX_DAYS), budget=budget)


def report_for(f: Filters, *, budget: float) -> Report:
    """The report, reused for a minute while the file is unchanged."""
    signature = store.file_signature()
    key = "failures-page:" + hashlib.sha256(repr((signature, f)).encode()).hexdigest()
    report = cache.get(key) if signature else None
    if report is None:
        report = build(f, budget=budget)
        if signature:
            cache.set(key, report, PAGE_TTL)
    return report
