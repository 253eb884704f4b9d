"""The messages of one session after a given id (for following), with a transcript page's
query, cut, pairing and redaction; a result whose call came in an earlier batch stands alone.
"""

from __future__ import annotations

from .selectors import (
    TranscriptEntry,
    transcript_entries,
    transcript_messages,
    transcript_rows,
)
from .visibility import Visibility

# At most this many new messages per poll; the next poll continues from the last one sent.
BATCH = 50


def entries_after(
    session_id: str, after: int, visibility: Visibility
) -> tuple[list[TranscriptEntry], int]:
    """The new entries, and the id the next poll continues from (``after`` if none)."""
    base = transcript_messages(session_id, visibility).filter(id__gt=after)
    messages = list(transcript_rows(base).order_by("id")[:BATCH])
    newest = messages[-1].id if messages else after
    return transcript_entries(messages), newest


# A session is running when open and started within the last day, or active this recently.
RECENT_ACTIVITY = 15 * 60
# A session left open longer than this is not "running": it was never closed.
OPEN_HORIZON = 86_400.0


def follow_state(session, transcript, visibility: Visibility, now: float) -> dict | None:
    """What the session page needs to offer "Follow", or None."""
    if transcript is None or transcript.page < transcript.pages:
        return None
    started = session.started_at or 0
    # From the instance only: a deferred attribute would query a column the file may lack.
    activity = session.__dict__.get("last_activity_at") or started
    last = 0
    for entry in transcript.entries:
        activity = max(activity, entry.message.timestamp or 0)
        last = max(last, entry.message.id)
        for call in entry.calls:
            if call.result is not None:
                last = max(last, call.result.message.id)
    running = (session.ended_at is None and now - started <= OPEN_HORIZON) or (
        now - activity <= RECENT_ACTIVITY
    )
    return {"last_id": last, "query": "?show=" + visibility.as_param()} if running else None
