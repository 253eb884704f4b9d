"""``/people/``: who talks to the agents, one row per person of the window
(:mod:`.people_data`), filtered, sorted and exported; staff join a person's ids here."""

from __future__ import annotations

from types import SimpleNamespace

from django.conf import settings
from django.contrib import messages
from django.db import transaction
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext, gettext_lazy
from django.views.decorators.http import require_GET, require_POST
from django_tables2 import RequestConfig

from accounts_app.middleware import forbidden
from accounts_app.roles import STAFF, Capability, has_capability
from hermes_explorer import store
from hermes_explorer import stores as registry
from hermes_explorer.hermes_db.deadline import query_budget
from profiles_app.access import restricted_to
from sessions_app import exports
from sessions_app.facets import distinct_values
from sessions_app.merged_list import chosen_stores
from sessions_app.timefmt import iso

from .merged import merged_sources
from .models import Person, PersonId
from .people_data import COLUMNS, people, store_key
from .people_forms import JoinForm, PeopleForm
from .people_tables import JOIN_FORM_ID, PeopleTable

JOIN = Capability("join_people", STAFF, gettext_lazy("join user ids into a person"))


def _export_row(row: dict) -> dict:
    return {
        **{key: row[key] for key in COLUMNS},
        "platforms": ",".join(sorted(row["platforms"])),
        "profiles": ",".join(sorted(row["profiles"])),
        "estimated_cost_usd": round(row["estimated_cost_usd"], 6),
        "first_session_at": iso(row["first_session_at"]) or None,
        "last_session_at": iso(row["last_session_at"]) or None,
    }


@require_GET
def people_list(request):
    notes: list[str] = []
    parts = chosen_stores(request, notes)
    sources = distinct_values("source") if parts is None else merged_sources(parts)
    form = PeopleForm(request.GET or None, sources=sources)
    fmt = exports.requested_format(request)
    if form.is_bound and not form.is_valid():
        if fmt:
            return exports.invalid_filters_response(form)
        return render(request, "insights_app/people.html", {"form": form, "table": None})
    with query_budget(settings.HERMES_INSIGHTS_TIMEOUT):
        rows = people(form.window(), parts, notes)
        rows = [row for row in rows if not form.is_bound or form.matches(row)]
    if fmt is not None:
        rows.sort(key=lambda r: (-(r["last_session_at"] or 0), r["user_id"]))
        return exports.stream_export(
            fmt=fmt,
            columns=COLUMNS,
            chunks=[[_export_row(row) for row in rows]],
            filename=exports.export_filename("people", [form.window().label], fmt),
            spreadsheet=exports.wants_spreadsheet(request),
            raw=exports.wants_raw(request),
        )
    table = PeopleTable(
        [SimpleNamespace(**row) for row in rows], sessions_url=reverse("sessions:list")
    )
    RequestConfig(request, paginate=False).configure(table)
    can_join = has_capability(request.user, JOIN)
    table.exclude = (() if can_join else ("join",)) + (("profiles",) if parts is None else ())
    context = {
        "form": form,
        "table": table,
        "notes": notes,
        "count": len(rows),
        "window": form.window(),
        "join_form": JoinForm(visible=None) if can_join else None,
        "join_form_id": JOIN_FORM_ID,
        "no_users": not store.shape().has_column("sessions", "user_id"),
        "no_display_names": not store.shape().has_column("sessions", "display_name"),
    }
    return render(request, "insights_app/people.html", context)


def _visible(request):
    """Whether the user may join ids of the store named ``key``: one they can see."""
    names = restricted_to(request)
    if not registry.multi():
        return lambda key: key == store_key()
    return lambda key: registry.by_name(key) is not None and (names is None or key in names)


@require_POST
def join(request):
    """Staff join the chosen ids into a person, or (no name) take them out of theirs."""
    if not has_capability(request.user, JOIN):
        return forbidden(request, JOIN)
    back = request.POST.get("next", "")
    back = back if back.startswith("?") else ""
    form = JoinForm(request.POST, visible=_visible(request))
    if not form.is_valid():
        messages.error(request, " ".join(e for errors in form.errors.values() for e in errors))
        return redirect(reverse("people:list") + back)
    name, keys = form.cleaned_data["name"], form.cleaned_data["id"]
    with transaction.atomic():
        for key, source, uid in keys:
            PersonId.objects.filter(store=key, source=source, user_id=uid).delete()
        if name:
            person, _ = Person.objects.get_or_create(name=name)
            PersonId.objects.bulk_create(
                PersonId(person=person, store=key, source=source, user_id=uid)
                for key, source, uid in keys
            )
        Person.objects.filter(ids__isnull=True).delete()
    messages.success(
        request,
        gettext("Joined into “%(name)s”.") % {"name": name}
        if name
        else gettext("The chosen ids are no longer joined."),
    )
    return redirect(reverse("people:list") + back)
