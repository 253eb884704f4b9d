"""The message table.  Only the primary key orders the whole table, so pages walk ids and
check unindexed filters row by row, under a short deadline: a scan out of time says so on the
page rather than hold a worker.
"""

from __future__ import annotations

from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext, gettext_noop
from django.views.decorators.http import require_GET

from .. import exports, selectors
from ..exports.merged import export_parts, merged_export
from ..filters import MessageFilter
from ..links import link_message_rows
from ..listing import KeysetTableView
from ..merged_list import MergedListMixin, chosen_stores, find_session
from ..models import Message
from ..tables import MessageTable

MAX_PER_PAGE = 1000
# Parameters of this page that mean nothing to the search page.
LIST_ONLY_PARAMS = ("sort", "cursor", "size", "_export")


def export_filename_bits(filterset) -> list[str]:
    data = filterset.form.cleaned_data
    bits = [str(data[key]) for key in ("session_id", "role", "tool_name") if data.get(key)]
    bits += list(data.get("source") or [])
    for key, label in (("date_from", "from"), ("date_to", "to")):
        if data.get(key):
            bits.append(f"{label}-{data[key].isoformat()}")
    return bits


class MessageListView(MergedListMixin, KeysetTableView):
    model = Message
    filterset_class = MessageFilter
    table_class = MessageTable
    template_name = "sessions_app/message_list.html"
    default_sort = selectors.DEFAULT_MESSAGE_SORT
    invalid_note = gettext_noop("Some filters are not valid; fix them to see messages.")
    # Seconds the page query may scan before we give up and ask for a narrower filter.
    page_budget = 2.0
    filtered_session = None  # the session of ``?session_id=``, when found

    def get(self, request, *args, **kwargs):
        if request.GET.get("q", "").strip():
            # A search: the same filters, shown as hits with snippets.
            params = request.GET.copy()
            for name in LIST_ONLY_PARAMS:
                params.pop(name, None)
            return redirect(reverse("search:results") + "?" + params.urlencode())
        return super().get(request, *args, **kwargs)

    def get_sorts(self):
        return selectors.MESSAGE_SORTS

    def get_per_page(self) -> int:
        raw = self.request.GET.get("size")
        try:
            size = int(raw or self.per_page)
        except ValueError:
            self.notes.append(
                gettext("Page size “%(raw)s” is not a number: showing %(n)s.")
                % {"raw": raw, "n": self.per_page}
            )
            return self.per_page
        if not 1 <= size <= MAX_PER_PAGE:
            size = min(max(size, 1), MAX_PER_PAGE)
            self.notes.append(
                gettext("Page size kept between 1 and %(max)s: showing %(n)s.")
                % {"max": MAX_PER_PAGE, "n": size}
            )
        return size

    def export(self):
        if not self.filterset.is_valid():
            return exports.invalid_filters_response(self.filterset.form)
        parts = export_parts(self.request)
        bits = export_filename_bits(self.filterset)
        if parts is not None:
            return merged_export(
                self.request,
                parts,
                self._store_plan,
                noun="messages",
                filename_bits=bits,
                preview=exports.wants_preview(self.request),
            )
        return exports.export_messages(
            self.request, self.filterset.qs, self.keyset, filename_bits=bits
        )

    def _store_plan(self):
        """The export plan of the store being read (None: the filters do not apply there)."""
        filterset = self.get_filterset(self.get_filterset_class())
        if not filterset.is_valid():
            return None
        preview = exports.wants_preview(self.request)
        return exports.message_rows(filterset.qs, self.keyset, preview=preview)

    def get_count(self, filtered):
        # One session: its index bounds the count.
        return selectors.capped_count(filtered) if self.session_id else None

    def page_queryset(self, filtered):
        return selectors.messages_for_table(filtered)

    def prepare_rows(self, rows):
        return link_message_rows(rows)

    def _fill_page(self):
        self.session_id = self.filterset.form.cleaned_data.get("session_id")
        if self.session_id:
            self.filtered_session = find_session(self.session_id, chosen_stores(self.request))
        super()._fill_page()

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "filtered_session": self.filtered_session}


message_list = require_GET(MessageListView.as_view())
