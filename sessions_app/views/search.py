"""``/search/?q=…``: :func:`sessions_app.search.run_search` never raises on user text."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET

from hermes_explorer import host_slots, store

from .. import search
from ..facets import distinct_values
from ..filters import OpenChoiceField, OpenMultipleChoiceField, role_choices
from ..merged_list import chosen_stores, find_session, requested_profiles
from ..search.merged import merged_choices, merged_search
from ..timefmt import day_end_epoch, day_start_epoch


class SearchForm(forms.Form):
    q = forms.CharField(
        label=_("Search"),
        required=False,
        widget=forms.TextInput(attrs={"type": "search", "placeholder": _("words to find")}),
    )
    mode = forms.ChoiceField(label=_("Match"), choices=list(search.MODES.items()), required=False)
    sort = forms.ChoiceField(label=_("Order"), choices=list(search.SORTS.items()), required=False)
    source = OpenMultipleChoiceField(
        label=_("Source"), required=False, widget=forms.CheckboxSelectMultiple
    )
    role = OpenChoiceField(label=_("Role"), required=False)
    tool_name = forms.CharField(label=_("Tool name"), required=False, max_length=200)
    session_id = forms.CharField(label=_("Session id"), required=False, max_length=200)
    date_from = forms.DateField(
        label=_("From"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    date_to = forms.DateField(
        label=_("To"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    show = forms.MultipleChoiceField(
        label=_("Include"),
        choices=[("hidden", _("hidden scaffolding"))],
        required=False,
        widget=forms.CheckboxSelectMultiple,
    )

    def __init__(self, data, *, shape):
        super().__init__(data)
        self.fields["source"].choices = [(s, s) for s in distinct_values("source")]
        self.fields["role"].choices = role_choices(data.get("role") or "")
        if not shape.has_column("messages", "display_kind"):
            del self.fields["show"]

    def to_request(self, *, page: int, before: int | None) -> search.SearchRequest:
        data = self.cleaned_data
        return search.SearchRequest(
            text=data.get("q") or "",
            mode=data.get("mode") or "words",
            sort=data.get("sort") or "rank",
            sources=tuple(data.get("source") or ()),
            role=data.get("role") or "",
            tool_name=data.get("tool_name") or "",
            session_id=data.get("session_id") or "",
            since=day_start_epoch(data["date_from"]) if data.get("date_from") else None,
            until=day_end_epoch(data["date_to"]) if data.get("date_to") else None,
            page=page,
            before=before,
            include_hidden="hidden" in (data.get("show") or ()),
        )


def _positive_int(request: HttpRequest, name: str, *, cap: int) -> int | None:
    try:
        value = int(request.GET.get(name, ""))
    except ValueError:
        return None
    return value if 1 <= value <= cap else None


@require_GET
def search_results(request: HttpRequest) -> HttpResponse:
    shape = store.shape()
    data = request.GET.copy()
    if "\x00" in data.get("q", ""):
        # A NUL cannot be searched for and would only make the form invalid.
        data["q"] = data["q"].replace("\x00", "")
    notes: list[str] = []
    parts = chosen_stores(request, notes)
    form = SearchForm(data, shape=shape)
    if parts is not None:
        form.fields["source"].choices = merged_choices(parts)
    result = None
    session = None
    status = 200
    if form.is_valid():
        # Relevance pages stop at RANKED_CAP hits; a later page number is the first page.
        page = _positive_int(request, "page", cap=search.RANKED_CAP // search.PER_PAGE) or 1
        before = _positive_int(request, "before", cap=2**62)
        req = form.to_request(page=page, before=before)
        try:
            with host_slots.take("search", settings.HERMES_SEARCH_CONCURRENCY):
                if parts is None:
                    result = search.run_search(req)
                else:
                    result = merged_search(req, parts, request.GET.get("pos"))
                    result.notes[:0] = notes
        except host_slots.Busy:
            result = search.SearchResult(request=req)
            result.error = gettext(
                "Too many searches are running on this server right now: search again in a moment."
            )
            status = 429
        session_id = form.cleaned_data.get("session_id")
        if session_id:
            session = find_session(session_id, parts)
    response = render(
        request,
        "sessions_app/search_results.html",
        {
            "form": form,
            "result": result,
            "filtered_session": session,
            "q": request.GET.get("q", ""),
            "shape": shape,
            "merged_profiles": parts,
            "chosen_profiles": requested_profiles(request),
        },
        status=status,
    )
    if status == 429:
        response["Retry-After"] = str(host_slots.RETRY_SECONDS)
    return response
