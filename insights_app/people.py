"""``/people/``: who talks to the agents, one row per person of the window
(:mod:`.people_data`), filtered, sorted (by django-tables2) and exported; staff join a
person's ids here."""

from __future__ import annotations

import json
from types import SimpleNamespace

import django_tables2 as tables
from django import forms
from django.conf import settings
from django.contrib import messages
from django.db import transaction
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode
from django.utils.translation import gettext, gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from accounts_app.middleware import forbidden
from accounts_app.roles import STAFF, Capability, has_capability
from hermes_explorer import store
from hermes_explorer import stores as registry
from hermes_explorer.hermes_db.deadline import query_budget
from profiles_app.access import restricted_to
from sessions_app import exports
from sessions_app.facets import distinct_values
from sessions_app.formatting import number, usd
from sessions_app.merged_list import chosen_stores
from sessions_app.tables import NUM, KeysetTable
from sessions_app.templatetags.explorer import source_badge, time_html
from sessions_app.timefmt import iso

from .forms import InsightsForm
from .merged import merged_sources
from .models import Person, PersonId
from .people_data import COLUMNS, people, store_key

JOIN = Capability("join_people", STAFF, gettext_lazy("join user ids into a person"))


class PeopleForm(InsightsForm):
    user = forms.CharField(
        required=False,
        label=gettext_lazy("User, person or name contains"),
        max_length=200,
    )

    def matches(self, row: dict) -> bool:
        wanted = (self.cleaned_data.get("user") or "").casefold()
        return not wanted or any(
            wanted in (row[k] or "").casefold() for k in ("user_id", "display_name", "person")
        )


class IdsField(forms.MultipleChoiceField):
    """Joinable ids as ``[profile, platform, user id]`` in JSON, each of a profile the user
    may see (``visible``, set by the form)."""

    def valid_value(self, value) -> bool:
        try:
            key = json.loads(value)
        except ValueError:
            return False
        return (
            isinstance(key, list)
            and len(key) == 3
            and all(isinstance(part, str) and 0 < len(part) <= 500 for part in key)
            and self.visible(key[0])
        )

    def clean(self, value):
        return [tuple(json.loads(one)) for one in super().clean(value)]


class JoinForm(forms.Form):
    """Staff join the chosen ids into the person of that name (made when new); without a
    name, the chosen ids leave their person."""

    name = forms.CharField(
        required=False,
        max_length=Person._meta.get_field("name").max_length,
        label=gettext_lazy("Person"),
        help_text=gettext_lazy("Empty: the chosen ids are no longer joined."),
    )
    id = IdsField(error_messages={"invalid_choice": gettext_lazy("That id cannot be joined here.")})

    def __init__(self, data=None, *, visible):
        super().__init__(data)
        self.fields["id"].visible = visible

    def clean_name(self):
        return " ".join(self.cleaned_data["name"].split())  # one line, single spaces


JOIN_FORM_ID = "join-people"


class PeopleTable(KeysetTable):
    """The people of the window, sorted by django-tables2 (``sort=``, then user id) on the
    values as read: user ids and display names are redacted text, so they sort as the reader
    sees them.  The body is built as the session tables build theirs."""

    join = tables.Column(verbose_name=gettext_lazy("Join"), accessor="keys", orderable=False)
    person = tables.Column(verbose_name=gettext_lazy("Person"))
    user_id = tables.Column(verbose_name=gettext_lazy("User"))
    display_name = tables.Column(verbose_name=gettext_lazy("Display name"))
    platforms = tables.Column(verbose_name=gettext_lazy("Platforms"), orderable=False)
    profiles = tables.Column(verbose_name=gettext_lazy("Profiles"), orderable=False)
    sessions = tables.Column(verbose_name=gettext_lazy("Sessions"), attrs=NUM)
    messages = tables.Column(verbose_name=gettext_lazy("Messages"), attrs=NUM)
    tokens = tables.Column(verbose_name=gettext_lazy("Tokens"), attrs=NUM)
    estimated_cost_usd = tables.Column(verbose_name=gettext_lazy("Estimated cost"), attrs=NUM)
    first_session_at = tables.Column(verbose_name=gettext_lazy("First session"))
    last_session_at = tables.Column(verbose_name=gettext_lazy("Last session"))

    class Meta(KeysetTable.Meta):
        attrs = {"class": "data-table people"}
        order_by = "-last_session_at"

    def __init__(self, data, *, sessions_url: str, **kwargs):
        # Not the keyset pages' presorted rows: these are ordered here.
        tables.Table.__init__(self, sorted(data, key=lambda r: r.user_id), **kwargs)
        self.sessions_url = sessions_url

    def render_person(self, value):
        return format_html(
            '<a href="{}?{}">{}</a>', self.sessions_url, urlencode({"user_id": value}), value
        )

    def render_join(self, value):
        return format_html_join(
            " ",
            '<label title="{}"><input type="checkbox" name="id" value="{}" form="{}"> {} · {}</label>',
            ((k[0], json.dumps(list(k)), JOIN_FORM_ID, k[2], k[1]) for k in sorted(value)),
        )

    def render_user_id(self, record):
        return format_html_join(", ", "{}", ((self.render_person(i),) for i in sorted(record.ids)))

    def render_platforms(self, value):
        return format_html_join(" ", "{}", ((source_badge(p),) for p in sorted(value)))

    def render_profiles(self, value):
        return ", ".join(sorted(value))

    def render_sessions(self, value):
        return number(value)

    render_messages = render_tokens = render_sessions

    def render_estimated_cost_usd(self, value):
        return usd(value)

    def render_first_session_at(self, value):
        return time_html(value)

    render_last_session_at = render_first_session_at


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
    tables.RequestConfig(request, paginate=False).configure(table)
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
