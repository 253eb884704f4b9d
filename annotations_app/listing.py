"""The session list's annotation filters and columns, as a mixin of its keyset table view:
``?tag=``, ``?starred=1``, ``?has_note=1`` and ``?score=`` narrow the list through the walk of
:mod:`.crossdb`; ``?noscore=`` leaves the scored sessions out by id.
"""

from __future__ import annotations

import dataclasses

import django_filters
from django.db.models import Q
from django.utils.html import escape
from django.utils.safestring import mark_safe
from django.utils.translation import gettext, gettext_lazy
from django.views.decorators.http import require_GET

from accounts_app.roles import can_export, can_see_content
from hermes_explorer.hermes_db.current import current_alias
from insights_app.people_data import person_ids
from sessions_app.filters import SessionFilter
from sessions_app.formatting import number, per_language
from sessions_app.selectors import COUNT_CAP, CappedCount
from sessions_app.sqlfunctions import Redacted
from sessions_app.views.sessions import SessionListView

from . import crossdb, dataset, permissions, selectors
from .forms import selection_from
from .models import Score
from .targets import current_store
from .templatetags.annotations import note_indicator, tag_chips

# Query parameters that are the annotation filters, the list's own navigation or the profiles
# it spans.
OWN_PARAMS = frozenset(
    {"tag", "starred", "has_note", "score", "noscore", "review", "sort", "cursor", "profile"}
)
# Sessions of one profile carrying the selection that a list over several profiles names.
MERGED_IDS_CAP = 5_000
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

    def __init__(self, user, keys, facet_stores=None) -> None:
        """``keys``: ``(store key, session id)`` pairs; with ``facet_stores``, their tag facet
        in the same statement."""
        self.store = current_store()
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


class AnnotationFiltersMixin:
    def prepare(self, request) -> None:
        self.selection = selection_from(request)
        self.annotation_cells = None
        super().prepare(request)

    def get(self, request, *args, **kwargs):
        if request.GET.get("_export", "").strip().lower() == dataset.FORMAT:
            self.prepare(request)
            return dataset.export(self)
        return super().get(request, *args, **kwargs)

    def get_sorts(self):
        sorts = super().get_sorts()
        if self.selection.active:
            return {k: v for k, v in sorts.items() if crossdb.supports(v)}
        return sorts

    def unknown_sort_note(self, sort):
        if self.selection.active and sort in super().get_sorts():
            return gettext(
                "Last activity changes while a session runs, so tag, star, note and score filters "
                "cannot sort by it: showing newest first."
            )
        return super().unknown_sort_note(sort)

    def get_count(self, filtered):
        if not self.selection.active:
            return super().get_count(self._without_scored(filtered))
        n = self.selection.count(COUNT_CAP)
        note = gettext(
            "The count is of the sessions carrying these tags, stars, notes or scores, before the "
            "other filters."
        )
        # Over several profiles this runs once per profile: the note is said once.
        if any(v for k, v in self.request.GET.items() if k not in OWN_PARAMS):
            self._note_once(note)
        return CappedCount(value=n, capped=n > COUNT_CAP)

    def paginate(self, queryset, token, per_page):
        if not self.selection.active:
            return super().paginate(queryset, token, per_page)
        for name in self.selection.unknown_tags:
            self.notes.append(
                gettext("No tag is named “%(name)s”: no session matches.") % {"name": name}
            )
        for name in self.selection.unknown_scores:
            self.notes.append(
                gettext("No score is named “%(name)s”: no session matches.") % {"name": name}
            )
        return crossdb.paginate(self.selection, queryset, self.keyset, token, per_page)

    def _note_once(self, note: str) -> None:
        if note not in self.notes:
            self.notes.append(note)

    def _merged(self) -> bool:
        """Whether the page spans several profiles (each one's rows prepared in turn)."""
        return getattr(self, "merged_parts", None) is not None

    def page_queryset(self, filtered):
        return self._only_selected(super().page_queryset(filtered))

    def key_queryset(self, filtered):
        return self._only_selected(super().key_queryset(filtered))

    def rows_queryset(self):
        # The selection chose the rows already (through the keys): none is filtered again.
        self._unselected = True
        try:
            return super().rows_queryset()
        finally:
            self._unselected = False

    def _per_store(self, name: str, compute):
        """``compute()``, once for each store the page reads."""
        known = self.__dict__.setdefault(name, {})
        alias = current_alias()
        if alias not in known:
            known[alias] = compute()
        return known[alias]

    def _without_scored(self, qs):
        """``qs`` without the sessions a ``noscore`` filter leaves out (named by id)."""
        excluded = self._per_store("_excluded_ids", self.selection.excluded_ids)
        if excluded is None:
            return qs
        ids, capped = excluded
        if capped:
            self._note_once(
                gettext("Only the first %(cap)s scored sessions are left out of this list.")
                % {"cap": number(crossdb.MAX_EXCLUDED)}
            )
        return qs.exclude(id__in=ids)

    def _only_selected(self, qs):
        qs = self._without_scored(qs)
        if self._merged() and self.selection.active and not getattr(self, "_unselected", False):
            # Over several profiles: each profile's annotated sessions named by id.
            ids = self._per_store(
                "_selected_ids", lambda: self.selection.session_ids(MERGED_IDS_CAP + 1)
            )
            if len(ids) > MERGED_IDS_CAP:
                ids = ids[:MERGED_IDS_CAP]
                self._note_once(
                    gettext(
                        "Over several profiles, only the first %(cap)s sessions of a profile "
                        "carrying these tags, stars, notes or scores are listed; choose one profile to see "
                        "them all."
                    )
                    % {"cap": number(MERGED_IDS_CAP)}
                )
            qs = qs.filter(id__in=ids)
        return qs

    def prepare_rows(self, rows):
        rows = super().prepare_rows(rows)
        store = current_store()
        keys = [(store, row.id) for row in rows]
        if self._merged():
            # The annotations of every profile's rows are looked up together.
            self.__dict__.setdefault("_annotation_keys", []).extend(keys)
        else:
            # The tag facet beside the table comes in the same statement as the rows'.
            self.annotation_cells = AnnotationCells(self.request.user, keys, [store])
        return rows

    def get_table_kwargs(self):
        if self._merged():
            keys = self.__dict__.get("_annotation_keys", [])
            cells = AnnotationCells(self.request.user, keys, self._facet_stores())
            # Bulk tagging names sessions by id alone, so it is left to a profile's own list.
            cells.selectable = False
        else:
            cells = self.annotation_cells or AnnotationCells(self.request.user, [])
        self._table_cells = cells
        return {**super().get_table_kwargs(), "annotations": cells}

    def _facet_stores(self) -> list[str]:
        if self._merged():
            return [store.name for store in self.merged_parts]
        return [current_store()]

    def narrowed(self, plan):
        """An export ``plan`` of the list without what ``noscore`` leaves out, and only the
        sessions carrying an active selection."""
        plan = dataclasses.replace(plan, queryset=self._without_scored(plan.queryset))
        return crossdb.SelectedPlan(plan, self.selection) if self.selection.active else plan

    def export(self):
        user = self.request.user
        return super().export(extend=lambda plan: self.narrowed(crossdb.extend_plan(plan, user)))

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        user = self.request.user
        cells = getattr(self, "_table_cells", None)
        facets, scores = getattr(cells, "facets", None), getattr(cells, "score_facets", None)
        if facets is None:  # no table (the page ran out of time): the facets alone
            facets = selectors.tag_facets(self._facet_stores())
        if scores is None:
            scores = selectors.score_facets(self._facet_stores())
        # (score id, value) pairs filtered on; value None: any value.
        chosen = {(s.pk, v) for s, v in self.selection.scores}
        context.update(
            tag_facets=facets,
            score_facets=[
                (s, [(v, n, (s.pk, v) in chosen) for v, n in values], (s.pk, None) in chosen)
                for s, values in scores
            ],
            unscored={s.pk for s in self.selection.noscores},
            selection=self.selection,
            chosen_tags={t.name.lower() for t in self.selection.tags},
            can_annotate=permissions.can_annotate(user) and not self._merged(),
            can_review=permissions.can_annotate(user),
            # A queue walks one profile's list (sessions are named by id alone there): a list
            # over several profiles offers each profile's share of it.
            review_stores=self.merged_parts if self._merged() else None,
            can_export_dataset=can_see_content(user) and can_export(user),
            bulk_form_id=BULK_FORM_ID,
        )
        return context


class PersonSessionFilter(SessionFilter):
    """The session filters, whose user id may also name a person staff joined on
    ``/people/``: their ids in this profile, each on its platform (compared as shown)."""

    user_id = django_filters.CharFilter(
        method="filter_user_id", label=gettext_lazy("User id or person")
    )

    def filter_user_id(self, queryset, name, value):
        ids = person_ids(value)
        if ids is None:
            return SessionFilter.base_filters["user_id"].filter(queryset, value)
        wanted = Q(pk__in=[])
        for source, uid in ids:
            wanted |= Q(source=source, _user_seen=uid)
        return (
            queryset.filter(user_id__in=[uid for _, uid in ids])
            .alias(_user_seen=Redacted("user_id"))
            .filter(wanted)
        )


class AnnotatedSessionListView(AnnotationFiltersMixin, SessionListView):
    """``/sessions/``: the session list with the team's stars, tags and notes (filters,
    columns, facets, exports)."""

    filterset_class = PersonSessionFilter


session_list = require_GET(AnnotatedSessionListView.as_view())
