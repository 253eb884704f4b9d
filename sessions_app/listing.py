"""One list pipeline for every keyset-paged table of the state.db: sort → filterset →
``_export``? → keyset page (never ``OFFSET``) → table, with django-tables2 and django-filter.
"""

from __future__ import annotations

from django.utils.translation import gettext, gettext_noop
from django_filters.views import FilterView
from django_tables2 import SingleTableMixin

from hermes_explorer import store
from hermes_explorer.hermes_db.deadline import QueryTimeout, query_budget

from . import exports


class KeysetTableView(SingleTableMixin, FilterView):
    """Subclasses give ``default_sort``, ``get_sorts()`` and ``export()``, and override the
    hooks below as needed."""

    default_sort = ""
    per_page = 50
    # Seconds the page query may run before the page says "narrow it" (None: the default).
    page_budget: float | None = None
    invalid_note = gettext_noop("Some filters are not valid; fix them to see rows.")
    table_pagination = False  # the keyset page is the pagination

    def get_filterset_kwargs(self, filterset_class):
        # Always bound, so the defaults (visibility, archived and hidden left out) apply.
        return {**super().get_filterset_kwargs(filterset_class), "data": self.request.GET}

    def get_count(self, filtered):
        return None

    def unknown_sort_note(self, sort: str) -> str:
        return gettext("Unknown sort “%(sort)s”: showing newest first.") % {"sort": sort}

    def page_queryset(self, filtered):
        return filtered

    def key_queryset(self, filtered):
        """``page_queryset`` as far as the order needs: a merged list reads every candidate's."""
        return self.page_queryset(filtered)

    def rows_queryset(self):
        """What the table shows of any row, unfiltered (a merged page's rows by primary key)."""
        return self.page_queryset(self.get_queryset())

    def prepare_rows(self, rows: list) -> list:
        return rows

    def paginate(self, queryset, token: str | None, per_page: int):
        return self.keyset.paginate(queryset, token, per_page)

    def get_per_page(self) -> int:
        return self.per_page

    def prepare(self, request) -> None:
        self.notes: list[str] = []
        self.shape = store.shape()
        sorts = self.get_sorts()
        self.sort = request.GET.get("sort", self.default_sort)
        if self.sort not in sorts:
            self.notes.append(self.unknown_sort_note(self.sort))
            self.sort = self.default_sort
        self.keyset = sorts[self.sort]
        self.filterset = self.get_filterset(self.get_filterset_class())

    def get(self, request, *args, **kwargs):
        self.prepare(request)
        if exports.requested_format(request):
            return self.export()
        self.rows, self.page, self.count, self.timed_out = [], None, None, False
        if self.filterset.is_bound and not self.filterset.is_valid():
            self.notes.append(gettext(self.invalid_note))
        else:
            self._fill_page()
        self.object_list = self.rows
        return self.render_to_response(self.get_context_data(filter=self.filterset))

    def _fill_page(self) -> None:
        per_page = self.get_per_page()
        try:
            with query_budget(self.page_budget):
                filtered = self.filterset.qs
                self.count = self.get_count(filtered)
                self.page = self.paginate(
                    self.page_queryset(filtered), self.request.GET.get("cursor"), per_page
                )
        except QueryTimeout:
            if self.page_budget is None:
                raise
            self.timed_out, self.page = True, None
            return
        self.rows = self.prepare_rows(self.page.rows)
        self.notes.extend(self.page.notes)

    def get_table_kwargs(self):
        return {"order_by": self.sort}

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context.update(
            page=self.page,
            count=self.count,
            notes=self.notes,
            sort=self.sort,
            shape=self.shape,
            timed_out=self.timed_out,
            budget=self.page_budget,
        )
        return context
