"""The per-session summaries of :mod:`insights_app.summaries`, kept in the app's database.

Computing a session's summary reads all its messages; keeping it in process memory only means
every restart, and every worker, pays for the whole store again.  Here each summary is also
stored in the explorer's own database (:class:`~insights_app.models.StoredSummary`, never the
state.db), keyed by the state.db file's identity (name, device, inode: a replaced file starts
afresh) and the session id, so that every worker and every later process reuses it.

Freshness is the same rule as in memory, shared through the database:

* each stored summary carries the session's ``message_count`` when it was computed; a
  different count makes it stale (it is recomputed and replaced);
* :class:`~insights_app.models.SummaryMark` keeps the highest ``messages.id`` the stored
  summaries have seen.  A process starting up reads it, so the rows appended while no process
  ran still name the sessions whose stored summaries must go; a lower maximum (rows deleted,
  file rebuilt) drops every stored summary of that file.

Failures to read or write the app database never fail a report: the summaries are then simply
computed, as without this store.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable

from django.db import DatabaseError, transaction
from django.db.models import TextField
from django.db.models.functions import Cast

from hermes_explorer import store as state_db

from .models import StoredSummary, SummaryMark

log = logging.getLogger(__name__)
IN_CHUNK = 500  # ids per IN (…) when loading chosen sessions
WHOLE_FILE_FROM = 2000  # sessions beyond which the whole file's rows are read at once
SAVE_BATCH = 1000


def store_key() -> str:
    """The state.db file open now, as a key."""
    return hashlib.sha256(repr(state_db.file_identity()).encode()).hexdigest()


def encode(summary) -> list:
    return [
        summary.user,
        summary.assistant,
        summary.tool,
        summary.stored,
        [list(t) for t in summary.tools],
        [list(s) for s in summary.skills],
    ]


def decode(message_count: int | None, data: list):
    from .summaries import SessionSummary

    user, assistant, tool, stored, tools, skills = data
    return SessionSummary(
        message_count,
        user,
        assistant,
        tool,
        stored,
        tuple(map(tuple, tools)),
        tuple(map(tuple, skills)),
    )


def load(key: str, session_ids: Iterable[str] | None = None) -> dict:
    """Stored summaries of this file (all, or of these sessions), by session id.

    The rows are read as text and decoded in one ``json.loads`` of them all (per-row decoding
    costs several times more on a big window).
    """
    wanted = None if session_ids is None else list(session_ids)
    try:
        rows = StoredSummary.objects.filter(store_key=key)
        if wanted is None or len(wanted) > WHOLE_FILE_FROM:
            # Most of the file: one read of it is cheaper than thousands of seeks.
            chunks = [rows]
        else:
            chunks = [
                rows.filter(session_id__in=wanted[i : i + IN_CHUNK])
                for i in range(0, len(wanted), IN_CHUNK)
            ]
        keep = None if wanted is None else set(wanted)
        found: list[tuple[str, int | None, str]] = []
        for chunk in chunks:
            for sid, count, text in chunk.annotate(text=Cast("data", TextField())).values_list(
                "session_id", "message_count", "text"
            ):
                if keep is None or sid in keep:
                    found.append((sid, count, text))
        decoded = json.loads("[" + ",".join(text for _, _, text in found) + "]")
        return {
            sid: decode(count, data) for (sid, count, _), data in zip(found, decoded, strict=True)
        }
    except (DatabaseError, ValueError, TypeError) as exc:
        log.warning("stored insights summaries not read: %s", exc)
        return {}


def save(key: str, summaries: dict) -> None:
    """Store (or replace) these summaries of this file."""
    objs = [
        StoredSummary(store_key=key, session_id=sid, message_count=s.message_count, data=encode(s))
        for sid, s in summaries.items()
    ]
    try:
        for i in range(0, len(objs), SAVE_BATCH):
            StoredSummary.objects.bulk_create(
                objs[i : i + SAVE_BATCH],
                update_conflicts=True,
                unique_fields=["store_key", "session_id"],
                update_fields=["message_count", "data", "updated_at"],
            )
    except DatabaseError as exc:
        log.warning("insights summaries not stored: %s", exc)


def high_water(key: str) -> int | None:
    try:
        mark = SummaryMark.objects.filter(store_key=key).values_list("high_water", flat=True)
        return next(iter(mark), None)
    except DatabaseError:
        return None


def advance(key: str, current: int | None, dirty: list[str] | None) -> None:
    """The file's messages reached ``current``: drop the stored summaries of the ``dirty``
    sessions (all of them when None), and remember the mark."""
    try:
        with transaction.atomic():
            rows = StoredSummary.objects.filter(store_key=key)
            if dirty is None:
                rows.delete()
            else:
                for i in range(0, len(dirty), IN_CHUNK):
                    rows.filter(session_id__in=dirty[i : i + IN_CHUNK]).delete()
            SummaryMark.objects.update_or_create(store_key=key, defaults={"high_water": current})
    except DatabaseError as exc:
        log.warning("stored insights summaries not refreshed: %s", exc)


def forget(key: str | None = None) -> None:
    """Drop the stored summaries (of one file, or all)."""
    rows, marks = StoredSummary.objects.all(), SummaryMark.objects.all()
    if key is not None:
        rows, marks = rows.filter(store_key=key), marks.filter(store_key=key)
    rows.delete()
    marks.delete()
