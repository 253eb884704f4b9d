"""Session table, session page (metadata, usage, lineage, transcript)."""

from __future__ import annotations

import functools
import time

from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext, gettext_noop
from django.views.decorators.http import require_GET

from accounts_app.roles import can_see_content
from hermes_explorer import store
from profiles_app.links import store_reverse
from redaction import redact

from .. import exports, selectors
from ..exports.merged import export_parts, merged_export
from ..exports.request import session_filename_bits
from ..filters import SessionFilter
from ..following import follow_state
from ..listing import KeysetTableView
from ..merged_list import MergedListMixin
from ..models import SECRET_SESSION_COLUMNS, Message, Session
from ..tables import SessionTable
from ..visibility import Visibility


class SessionListView(MergedListMixin, KeysetTableView):
    model = Session
    filterset_class = SessionFilter
    table_class = SessionTable
    template_name = "sessions_app/session_list.html"
    default_sort = selectors.DEFAULT_SESSION_SORT
    invalid_note = gettext_noop("Some filters are not valid; fix them to see sessions.")

    def get_sorts(self):
        return selectors.session_sort_options(self.shape)

    def get_filterset(self, filterset_class):
        filterset = super().get_filterset(filterset_class)
        filterset.time_ordered = "started_at" in self.sort or "last_active" in self.sort
        return filterset

    def export(self, extend=None):
        """``extend`` (plan → plan, called reading each store): another app's columns."""
        parts = export_parts(self.request)
        if parts is None:
            return exports.export_session_list(
                self.request, self.filterset, self.keyset, extend=extend
            )
        if self.filterset.is_bound and not self.filterset.is_valid():
            return exports.invalid_filters_response(self.filterset.form)
        return merged_export(
            self.request,
            parts,
            functools.partial(self._store_plan, extend),
            noun="sessions",
            filename_bits=session_filename_bits(self.filterset),
        )

    def _store_plan(self, extend=None):
        """The export plan of the store being read (None: it cannot give this list)."""
        self.shape = store.shape()
        filterset = self.get_filterset(self.get_filterset_class())
        if self.sort not in self.get_sorts() or not filterset.is_valid():
            return None
        queryset = selectors.sessions_for_table(filterset.qs, sort=self.sort)
        plan = exports.session_rows(queryset, self.keyset)
        return extend(plan) if extend is not None else plan

    def get_count(self, filtered):
        return selectors.capped_count(filtered)

    def page_queryset(self, filtered):
        return selectors.sessions_for_table(filtered, sort=self.sort)

    def key_queryset(self, filtered):
        return selectors.sessions_for_keys(filtered, sort=self.sort)

    def get_table_kwargs(self):
        # Titles are metadata; the first user message of an untitled session is content.
        return {
            **super().get_table_kwargs(),
            "shape": self.shape,
            "show_previews": can_see_content(self.request.user),
        }


@require_GET
def session_detail(request, session_id: str):
    return render(request, "sessions_app/session_detail.html", session_context(request, session_id))


def session_context(request, session_id: str) -> dict:
    """What the session page shows (another app's page may extend it: the review page)."""
    session = selectors.session_detail(session_id)
    if session is None:
        raise Http404(gettext("No session with this id in the state.db."))
    visibility = Visibility.from_params(request.GET.getlist("show"))
    shape = store.shape()
    # Viewers see metadata, usage and lineage; content is not even queried for them.
    content = can_see_content(request.user)
    transcript = None
    if content:
        try:
            page = max(1, min(int(request.GET.get("page", 1)), 10**9))
        except ValueError:
            page = 1
        transcript = selectors.transcript_page(session.id, visibility, page)
    hidden = frozenset() if content else frozenset(SECRET_SESSION_COLUMNS)
    return {
        "session": session,
        "usage": selectors.session_usage(session),
        "lineage": selectors.session_lineage(session),
        "transcript": transcript,
        "visibility": visibility,
        "shape": shape,
        "system_prompt": selectors.system_prompt_of(session) if content else None,
        "fields": selectors.recorded_fields(session.id, hidden=hidden),
        "not_recorded": shape.not_recorded_labels(),
        "follow": follow_state(session, transcript, visibility, time.time()),
    }


def _message(session_id: str, message_id: int, *columns: str) -> Message:
    message = (
        Message.objects.only_readable("id", "session", *columns)
        .filter(pk=message_id, session_id=session_id)
        .first()
    )
    if message is None:
        raise Http404(gettext("No such message in this session."))
    return message


@require_GET
def message_in_transcript(request, session_id: str, message_id: int):
    """Land on one message inside its transcript: the right page, scrolled to it."""
    message = _message(session_id, message_id, "active", "compacted", "display_kind")
    visibility = Visibility.from_params(request.GET.getlist("show"))
    if message.visibility != "live":
        visibility = visibility.with_kind(message.visibility)
    page = selectors.message_position(session_id, message.id, visibility)
    url = store_reverse("sessions:detail", [session_id])
    return redirect(f"{url}?page={page}&show={visibility.as_param()}#m{message.id}")


@require_GET
def message_text(request, session_id: str, message_id: int):
    """The whole content of one message as plain text (for megabyte tool outputs)."""
    message = _message(session_id, message_id, "content")
    response = HttpResponse(redact(message.text), content_type="text/plain; charset=utf-8")
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    return response
