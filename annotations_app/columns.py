"""The session table's annotation cells: a selection checkbox (bulk tagging) and the tags,
the user's star and the note count of each row, for one page read in one go."""

from __future__ import annotations

from django.utils.html import escape
from django.utils.safestring import mark_safe
from django.utils.translation import gettext

from sessions_app.formatting import per_language

from . import permissions, selectors
from .models import Score
from .targets import current_store
from .templatetags.annotations import note_indicator, tag_chips

# The bulk-tag form's id: each row's checkbox joins it through ``form=``.
BULK_FORM_ID = "bulk-tag"
EMPTY = mark_safe("")


@per_language
def _words() -> dict[str, str]:
    """The words every row repeats, escaped, in the page's language (once per language)."""
    return {
        "star": f'<span class="starred" title="{escape(gettext("Starred by you"))}" '
        f'aria-label="{escape(gettext("Starred"))}">★</span> ',
        "select": escape(gettext("Select session %(id)s")),
    }


class AnnotationCells:
    """The annotations of a page's rows, by ``(store key, session id)`` (two profiles may
    share a session id)."""

    def __init__(self, rows, user, keys=None, facet_stores=None) -> None:
        """``rows`` of the store read now, or ``keys`` (``(store key, session id)`` pairs of
        several stores); with ``facet_stores``, their tag facet in the same statement."""
        self.store = current_store()
        if keys is None:
            keys = [(self.store, r.id) for r in rows]
        self.by_id, self.facets = selectors.read(keys, user, facet_stores)
        self.selectable = permissions.can_annotate(user)
        # The score facet (every score, with its values' counts) when the tag facet is asked;
        # the scores column is shown once the team has defined a score.
        if facet_stores is not None:
            self.score_facets = selectors.score_facets(facet_stores)
            self.scored = bool(self.score_facets)
        else:
            self.score_facets = None
            self.scored = Score.objects.exists()
        self.words = _words()

    def select_cell(self, record):
        # Plain escaping rather than format_html: two cells a row, fifty rows a page.
        value = escape(record.id)
        return mark_safe(
            f'<input type="checkbox" name="session" value="{value}" form="{BULK_FORM_ID}" '
            f'aria-label="{self.words["select"] % {"id": value}}">'
        )

    def _found(self, record):
        # A row of a list over several profiles names its profile (the store key there).
        return self.by_id.get((getattr(record, "store_name", None) or self.store, record.id))

    def scores_cell(self, record):
        found = self._found(record)
        return escape(found.score_summary) if found is not None else EMPTY

    def tags_cell(self, record):
        found = self._found(record)
        if found is None:
            return EMPTY
        star = self.words["star"] if found.starred else ""
        return mark_safe(f"{star}{tag_chips(found.tags)} {note_indicator(found.notes_count)}")
