"""The session table's annotation cells: a selection checkbox (bulk tagging) and the tags,
the user's star and the note count of each row, for one page read in one go."""

from __future__ import annotations

from django.utils.html import escape
from django.utils.safestring import mark_safe

from . import permissions, selectors
from .templatetags.annotations import note_indicator, tag_chips

# The bulk-tag form's id: each row's checkbox belongs to it through ``form=``, so that the
# table needs no form of its own around it.
BULK_FORM_ID = "bulk-tag"
EMPTY = mark_safe("")
STAR = '<span class="starred" title="Starred by you" aria-label="Starred">★</span> '


class AnnotationCells:
    def __init__(self, rows, user) -> None:
        self.by_id = selectors.for_sessions([r.id for r in rows], user)
        self.selectable = permissions.can_annotate(user)

    def select_cell(self, record):
        # Plain escaping rather than format_html: two cells a row, fifty rows a page.
        value = escape(record.id)
        return mark_safe(
            f'<input type="checkbox" name="session" value="{value}" form="{BULK_FORM_ID}" '
            f'aria-label="Select session {value}">'
        )

    def tags_cell(self, record):
        found = self.by_id.get(record.id)
        if found is None:
            return EMPTY
        star = STAR if found.starred else ""
        return mark_safe(f"{star}{tag_chips(found.tags)} {note_indicator(found.notes_count)}")
