"""The session table's annotation cells: a selection checkbox (bulk tagging) and the tags,
the user's star and the note count of each row, for one page read in one go."""

from __future__ import annotations

from django.utils.html import format_html
from django.utils.safestring import mark_safe

from . import permissions, selectors
from .templatetags.annotations import note_indicator, tag_chips

# The bulk-tag form's id: each row's checkbox belongs to it through ``form=``, so that the
# table needs no form of its own around it.
BULK_FORM_ID = "bulk-tag"


class AnnotationCells:
    def __init__(self, rows, user) -> None:
        self.by_id = selectors.for_sessions([r.id for r in rows], user)
        self.selectable = permissions.can_annotate(user)

    def select_cell(self, record):
        return format_html(
            '<input type="checkbox" name="session" value="{}" form="{}" aria-label="Select {}">',
            record.id,
            BULK_FORM_ID,
            record.title or record.id,
        )

    def tags_cell(self, record):
        found = self.by_id.get(record.id, selectors.NONE)
        star = (
            mark_safe('<span class="starred" title="Starred by you" aria-label="Starred">★</span> ')
            if found.starred
            else ""
        )
        return format_html(
            "{}{} {}", star, tag_chips(found.tags), note_indicator(found.notes_count)
        )
