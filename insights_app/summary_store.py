"""The per-session summaries of :mod:`insights_app.summaries`, kept in the app's database.

Not in process memory, where every restart and every worker would pay for the whole store
again: rows keyed by the state.db file's identity (a replaced file starts afresh) and the
session id, which a report adds up in SQL over its window.  A failure to read or write the
app database never fails a report: the summaries are then computed in memory.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from django.db import DatabaseError, IntegrityError, connection, transaction
from django.db.models import Count, F, Max, Q, Sum
from django.utils import timezone

from hermes_explorer import store as state_db

from .models import ROLES, StoredSummary, SummaryCall, SummaryMark, SummarySkill, SummaryTool

log = logging.getLogger(__name__)
IN_CHUNK = 500  # ids per IN (…)
SAVE_BATCH = 1000
# A build whose heartbeat is older than this is taken to have died (its process stopped).
BUILD_STALE_SECONDS = 30.0
# 2: tool calls (latency, failures) counted as ``sessions_app.toolcalls`` defines them.
KEPT_VERSION = 2


def store_key() -> int:
    """The state.db file open now, as a key: the first 63 bits of a hash of its identity and
    of the version of what is kept (a new version computes every summary and count again)."""
    digest = hashlib.sha256(repr((state_db.file_identity(), KEPT_VERSION)).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def window_q(lo: float | None, hi: float | None, source: str | None, model: str | None) -> Q:
    """The window's sessions among stored rows, compared as :func:`.window.scope_of` does."""
    q = Q()
    if lo is not None:
        q &= Q(started_at__gte=lo)
    if hi is not None:
        q &= Q(started_at__lt=hi)
    if source:
        q &= Q(source=source)
    if model:
        q &= Q(model=model) | Q(model__endswith="/" + model)
    return q


@dataclass(frozen=True)
class Totals:
    sessions: int
    message_count: int  # the sum of the stored sessions' counters
    roles: dict[str, int]


def totals(key: int, window: Q) -> Totals:
    """Stored sessions of the window, the sum of their counters, and their rows by role."""
    found = StoredSummary.objects.filter(window, store_key=key).aggregate(
        n=Count("id"), mc=Sum("message_count"), **{role: Sum(role) for role in ROLES}
    )
    roles = {role: int(found[role] or 0) for role in ROLES}
    return Totals(int(found["n"] or 0), int(found["mc"] or 0), roles)


def counts(key: int, window: Q) -> dict[str, int | None]:
    """The stored sessions of the window and the counter each was computed at."""
    rows = StoredSummary.objects.filter(window, store_key=key)
    return dict(rows.values_list("session_id", "message_count"))


def tools(key: int, window: Q) -> tuple[Counter, Counter]:
    """Per tool name over the window's stored sessions: Hermes's count, and its result rows."""
    rows = (
        SummaryTool.objects.filter(window, store_key=key)
        .values("tool_name")
        .annotate(n=Sum("count"), r=Sum("result_rows"))
        .values_list("tool_name", "n", "r")
    )
    counts, result_rows = Counter(), Counter()
    for name, n, r in rows:
        counts[name] = int(n or 0)
        result_rows[name] = int(r or 0)
    return counts, result_rows


def skills(key: int, window: Q) -> list[dict[str, Any]]:
    """Per skill: loads, edits and last use over the window's stored sessions."""
    rows = (
        SummarySkill.objects.filter(window, store_key=key)
        .values("skill")
        .annotate(v=Sum("loads"), m=Sum("edits"), last=Max("last_used"))
        .values_list("skill", "v", "m", "last")
    )
    return [
        {"skill": s, "view_count": int(v or 0), "manage_count": int(m or 0), "last_used_at": last}
        for s, v, m, last in rows
    ]


def calls(key: int, window: Q):
    """``(tool, seconds, session id, message id)`` of every timed call of the window's stored
    sessions (read by the window index alone)."""
    return (
        SummaryCall.objects.filter(window, store_key=key)
        .values_list("tool_name", "seconds", "session_id", "message_id")
        .iterator(chunk_size=10_000)
    )


def _drop(key: int, ids: list[str]) -> None:
    """Plain ``DELETE`` by the ``(store_key, session_id)`` indexes: the ORM's ``delete()``
    prepares every id of every chunk as a lookup, a second of a big store's first build."""
    with connection.cursor() as cursor:
        for chunk in (ids[i : i + IN_CHUNK] for i in range(0, len(ids), IN_CHUNK)):
            marks = state_db.marks(chunk)
            for model in (SummaryTool, SummarySkill, SummaryCall, StoredSummary):
                table = connection.ops.quote_name(model._meta.db_table)
                cursor.execute(
                    f"DELETE FROM {table} WHERE store_key = %s AND session_id IN ({marks})",
                    [key, *chunk],
                )


def drop(key: int, ids: list[str]) -> None:
    """Forget the stored summaries of these sessions (stale, or gone from the window)."""
    if not ids:
        return
    try:
        with transaction.atomic():
            _drop(key, ids)
    except DatabaseError as exc:
        log.warning("stale insights summaries not dropped: %s", exc)


def _insert(model, columns: tuple[str, ...], rows: list[tuple]) -> None:
    """Plain ``INSERT`` of many rows: the ORM's per-field preparation of ``bulk_create``
    costs seconds for the hundred thousand rows of a big store's first build."""
    if not rows:
        return
    table = connection.ops.quote_name(model._meta.db_table)
    names = ", ".join(connection.ops.quote_name(c) for c in columns)
    marks = state_db.marks(columns)
    with connection.cursor() as cursor:
        for i in range(0, len(rows), SAVE_BATCH):
            cursor.executemany(
                f"INSERT INTO {table} ({names}) VALUES ({marks})", rows[i : i + SAVE_BATCH]
            )


_COMMON = ("store_key", "session_id", "started_at", "source", "model")
_HEAD_COLUMNS = (*_COMMON, "message_count", *ROLES, "updated_at")


def save(key: int, summaries: dict, attributes: dict[str, tuple]) -> None:
    """Store (or replace) these summaries of this file, with what a window filters their
    sessions on (``attributes``: ``(started_at, source, model)`` as the state.db has them)."""
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    heads, tool_rows, skill_rows, call_rows = [], [], [], []
    for sid, s in summaries.items():
        common = (key, sid, *attributes.get(sid, (None, None, None)))
        heads.append((*common, s.message_count, s.user, s.assistant, s.tool, s.stored, now))
        tool_rows += [(*common, n, c, r) for n, c, r in s.tools]
        skill_rows += [(*common, k, v, m, last) for k, v, m, last in s.skills]
        call_rows += [(*common, name, sec, mid) for name, sec, mid in s.calls]
    # Inserted: whoever asks for summaries first drops those that are stale, so none of these
    # is stored, unless another process stored the same sessions meanwhile; then the unique
    # constraint stops this transaction, and the second attempt replaces them whole (it drops
    # them first; when the other process commits them between that DELETE and this INSERT,
    # which PostgreSQL lets both run, the third attempt's DELETE sees them).
    for attempt in (1, 2, 3):
        try:
            with transaction.atomic():
                if attempt > 1:
                    _drop(key, list(summaries))
                _insert(StoredSummary, _HEAD_COLUMNS, heads)
                _insert(SummaryTool, (*_COMMON, "tool_name", "count", "result_rows"), tool_rows)
                _insert(
                    SummarySkill, (*_COMMON, "skill", "loads", "edits", "last_used"), skill_rows
                )
                _insert(SummaryCall, (*_COMMON, "tool_name", "seconds", "message_id"), call_rows)
            return
        except IntegrityError as exc:
            if attempt == 3:
                log.warning("insights summaries not stored: %s", exc)
        except DatabaseError as exc:
            log.warning("insights summaries not stored: %s", exc)
            return


def high_water(key: int) -> int | None:
    try:
        return (
            SummaryMark.objects.filter(store_key=key).values_list("high_water", flat=True).first()
        )
    except DatabaseError:
        return None


def advance(key: int, current: int | None, dirty: list[str] | None) -> None:
    """Drop the summaries of the ``dirty`` sessions (None: all) and remember ``current``."""
    try:
        with transaction.atomic():
            if dirty is None:
                for model in (SummaryTool, SummarySkill, SummaryCall, StoredSummary):
                    model.objects.filter(store_key=key).delete()
            else:
                _drop(key, dirty)
            SummaryMark.objects.update_or_create(store_key=key, defaults={"high_water": current})
    except DatabaseError as exc:
        log.warning("stored insights summaries not refreshed: %s", exc)


# --- A build in the background -------------------------------------------------------------


def claim_build(key: int, total: int) -> bool:
    """Become the one build of this file (no other live one): True when claimed."""
    now = time.time()
    try:
        with transaction.atomic():
            SummaryMark.objects.get_or_create(store_key=key)
            claimed = (
                SummaryMark.objects.filter(store_key=key)
                .filter(
                    Q(build_heartbeat__isnull=True)
                    | Q(build_heartbeat__lt=now - BUILD_STALE_SECONDS)
                )
                .update(build_total=total, build_done=0, build_heartbeat=now)
            )
        return claimed == 1
    except DatabaseError as exc:
        log.warning("insights summary build not started: %s", exc)
        return False


def build_advanced(key: int, done: int) -> None:
    try:
        SummaryMark.objects.filter(store_key=key).update(
            build_done=F("build_done") + done, build_heartbeat=time.time()
        )
    except DatabaseError as exc:
        log.warning("insights summary build progress not stored: %s", exc)


def build_finished(key: int) -> None:
    try:
        SummaryMark.objects.filter(store_key=key).update(build_heartbeat=None)
    except DatabaseError as exc:
        log.warning("insights summary build end not stored: %s", exc)


def build_progress(key: int) -> tuple[int, int] | None:
    """``(done, total)`` of the build running now, or None when none runs."""
    try:
        row = (
            SummaryMark.objects.filter(
                store_key=key, build_heartbeat__gte=time.time() - BUILD_STALE_SECONDS
            )
            .values_list("build_done", "build_total")
            .first()
        )
    except DatabaseError:
        return None
    return (int(row[0]), int(row[1])) if row else None
