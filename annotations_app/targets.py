"""The rows that anchor a session's annotations, named by ``(store key, session id)`` (the key
a profile's annotations are kept under: docs/profiles.md, "Annotations").
"""

from __future__ import annotations

from collections.abc import Iterable

from hermes_explorer import store
from profiles_app.links import store_key as current_store
from redaction import redact_text

from .models import AnnotatedSession

TITLE_CHARS = 300


def _session_keys(session_ids: list[str]) -> dict[str, tuple]:
    """``{id: (started_at, source, title)}`` of those sessions the state.db has."""
    if not session_ids:
        return {}
    has_title = store.shape().has_column("sessions", "title")
    title = f"substr(title, 1, {TITLE_CHARS})" if has_title else "NULL"
    found: dict[str, tuple] = {}
    for start in range(0, len(session_ids), 500):
        part = session_ids[start : start + 500]
        marks = store.marks(part)
        for sid, started_at, source, head in store.rows(
            f"SELECT id, started_at, source, {title} FROM sessions WHERE id IN ({marks})",
            part,
        ):
            found[sid] = (started_at, source or "", head or "")
    return found


def sessions_in_store(session_ids: Iterable[str]) -> set[str]:
    return set(_session_keys(list(dict.fromkeys(session_ids))))


def targets_for(session_ids: Iterable[str]) -> dict[str, AnnotatedSession]:
    """The anchors of these sessions, made for those that have none yet; an id the state.db
    lacks (a typo, a forged form) gets none."""
    wanted = list(dict.fromkeys(session_ids))
    key = current_store()
    existing = {
        t.session_id: t for t in AnnotatedSession.objects.filter(store=key, session_id__in=wanted)
    }
    missing = [sid for sid in wanted if sid not in existing]
    for sid, (started_at, source, title) in _session_keys(missing).items():
        existing[sid], _ = AnnotatedSession.objects.get_or_create(
            store=key,
            session_id=sid,
            # The copy is redacted whatever the setting: no raw stored text is kept here.
            defaults={
                "started_at": started_at,
                "source": source,
                "title": redact_text(title)[0][:TITLE_CHARS] if title else "",
            },
        )
    return existing


def target_for(session_id: str) -> AnnotatedSession | None:
    return targets_for([session_id]).get(session_id)
