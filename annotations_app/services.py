"""Writing annotations: every change is one call here, after the view checked the role and the
input; each keeps the anchor's ``notes_count`` in step and is in the audit trail.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import F

from accounts_app import audit

from .models import AnnotatedSession, Note, SavedView, Score, SessionScore, SessionTag, Star, Tag

# Audit actions (the audit trail's ``action`` column).
STAR = "star"
UNSTAR = "unstar"
TAG = "tag"
UNTAG = "untag"
NOTE = "note"
NOTE_EDIT = "note_edit"
NOTE_DELETE = "note_delete"
TAG_VOCABULARY = "tag_vocabulary"
VIEW_SAVE = "view_save"
VIEW_DELETE = "view_delete"
SCORE = "score"
UNSCORE = "unscore"
SCORE_DEFINITION = "score_definition"


def _log(request, action: str, target: AnnotatedSession | None, detail: str) -> None:
    if target is not None:
        detail = f"store={target.store}; {detail}"
    audit.record(request, action, session_id=getattr(target, "session_id", ""), detail=detail)


def toggle_star(request, target: AnnotatedSession) -> bool:
    """Star the session for the request's user, or remove their star; True if now starred."""
    with transaction.atomic():
        deleted, _ = Star.objects.filter(target=target, user=request.user).delete()
        if not deleted:
            star = Star(target=target, user=request.user)
            star.copy_keys(target)
            star.save()
        _log(request, UNSTAR if deleted else STAR, target, "")
    return not deleted


def add_tag(request, targets: list[AnnotatedSession], tag: Tag) -> int:
    """Put ``tag`` on every target that lacks it; the number newly tagged."""
    with transaction.atomic():
        tagged = SessionTag.objects.filter(tag=tag, target__in=targets)
        have = set(tagged.values_list("target_id", flat=True))
        new = []
        for target in targets:
            if target.pk in have:
                continue
            row = SessionTag(target=target, tag=tag, added_by=request.user)
            row.copy_keys(target)
            new.append(row)
        SessionTag.objects.bulk_create(new)
        for row in new:
            _log(request, TAG, row.target, f"tag={tag.name}")
    return len(new)


def remove_tag(request, target: AnnotatedSession, tag: Tag) -> bool:
    with transaction.atomic():
        deleted, _ = SessionTag.objects.filter(target=target, tag=tag).delete()
        if deleted:
            _log(request, UNTAG, target, f"tag={tag.name}")
    return bool(deleted)


def add_note(request, target: AnnotatedSession, text: str) -> Note:
    with transaction.atomic():
        note = Note.objects.create(
            target=target,
            author=request.user,
            author_name=request.user.get_username(),
            text=text,
        )
        AnnotatedSession.objects.filter(pk=target.pk).update(notes_count=F("notes_count") + 1)
        _log(request, NOTE, target, f"note={note.pk}")
    return note


def edit_note(request, note: Note, text: str) -> None:
    with transaction.atomic():
        before = note.text
        note.text = text
        note.save(update_fields=["text", "updated_at"])
        _log(request, NOTE_EDIT, note.target, f"note={note.pk}; before={before}")


def delete_note(request, note: Note) -> None:
    with transaction.atomic():
        target = note.target
        _log(request, NOTE_DELETE, target, f"note={note.pk}; by={note.author_name}; {note.text}")
        note.delete()
        AnnotatedSession.objects.filter(pk=target.pk, notes_count__gt=0).update(
            notes_count=F("notes_count") - 1
        )


def save_tag(request, tag: Tag, *, created: bool) -> None:
    with transaction.atomic():
        tag.save()
        verb = "created" if created else "changed"
        _log(request, TAG_VOCABULARY, None, f"{verb} tag={tag.name}; colour={tag.colour}")


def delete_tag(request, tag: Tag) -> None:
    with transaction.atomic():
        uses = tag.session_tags.count()
        _log(request, TAG_VOCABULARY, None, f"deleted tag={tag.name}; was on {uses} sessions")
        tag.delete()


def save_view(request, view: SavedView) -> None:
    with transaction.atomic():
        view.save()
        shared = "shared" if view.shared else "personal"
        _log(request, VIEW_SAVE, None, f"view={view.name}; {shared}; url={view.url}")


def delete_view(request, view: SavedView) -> None:
    with transaction.atomic():
        _log(request, VIEW_DELETE, None, f"view={view.name}; url={view.url}")
        view.delete()


def press_score(request, target: AnnotatedSession, score: Score, value: str) -> str | None:
    """The request's user gives ``target`` the ``value`` of ``score``, replacing their own
    earlier value; pressing the value they gave clears it.  Their value now, or None."""
    with transaction.atomic():
        mine = SessionScore.objects.filter(target=target, score=score, user=request.user)
        before = mine.values_list("value", flat=True).first()
        if before == value:
            mine.delete()
            _log(request, UNSCORE, target, f"score={score.name}; was={value}")
            return None
        if before is None:
            row = SessionScore(target=target, score=score, user=request.user, value=value)
            row.copy_keys(target)
            row.save()
        else:
            mine.update(value=value)
        _log(request, SCORE, target, f"score={score.name}; value={value}; before={before or ''}")
    return value


def save_score(request, score: Score, *, created: bool) -> None:
    with transaction.atomic():
        score.save()
        verb = "created" if created else "changed"
        _log(request, SCORE_DEFINITION, None, f"{verb} score={score.name}; values={score.values}")


def delete_score(request, score: Score) -> None:
    with transaction.atomic():
        uses = score.session_scores.count()
        _log(request, SCORE_DEFINITION, None, f"deleted score={score.name}; {uses} scores given")
        score.delete()
