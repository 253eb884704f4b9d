"""``/people/``: who talks to the agents: one row per user of the window.

A *user* is a non-empty ``sessions.user_id`` (gateway sessions record the platform's sender;
cron and subagent sessions have none).  The window and its source and model filters are the
insights window (:mod:`insights_app.window`): sessions started in it.  Per user: platforms,
display name (the latest recorded, where the file has the column), sessions, messages
(``message_count``), tokens and estimated cost by Hermes's rules as the insights overview
counts them (each session's ``session_model_usage`` rows plus its residual, so auxiliary usage
counts; :mod:`insights_app.figures.models`), and the first and last session started.

One grouped statement per store; over several profiles, the rows of one ``user_id`` are added
up and its profiles listed.  User ids and display names are metadata: redacted for every role
when read, and the ``user`` filter matches the redacted text only (it confirms nothing the
page does not show).
"""

from __future__ import annotations

import sqlite3
from types import SimpleNamespace

import django_tables2 as tables
from django import forms
from django.conf import settings
from django.db import DatabaseError
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET

from hermes_explorer import store
from hermes_explorer import stores as registry
from hermes_explorer.hermes_db.deadline import query_budget
from redaction import redact, redaction_enabled
from sessions_app import exports
from sessions_app.facets import distinct_values
from sessions_app.formatting import number, usd
from sessions_app.merged_list import chosen_stores
from sessions_app.tables import KeysetTable
from sessions_app.templatetags.explorer import source_badge, time_html
from sessions_app.timefmt import iso

from . import stats
from .figures.registry import TOKEN_KEYS
from .forms import InsightsForm
from .profiles import merged_sources
from .window import scope_of, window_span

COLUMNS = [
    "user_id",
    "display_name",
    "platforms",
    "profiles",
    "sessions",
    "messages",
    "tokens",
    "estimated_cost_usd",
    "first_session_at",
    "last_session_at",
]


def people_sql(scope) -> str:
    """Per user: platforms, sessions, messages, tokens, cost, first and last start; then per
    (user, display name) its last start, to pick the latest name."""
    c, u = scope.scol, scope.ucol
    if scope.has_usage:
        # Each counter: its usage rows plus the session's residual (never below them).
        sums = [f"MAX(COALESCE({c(n)}, 0), COALESCE(SUM({u(n)}), 0))" for n in TOKEN_KEYS]
        cost = (
            f"MAX(COALESCE({c('estimated_cost_usd', 'NULL')}, 0.0),"
            f" COALESCE(SUM({u('estimated_cost_usd', 'NULL')}), 0.0))"
        )
        # As the insights pass groups (:func:`.figures.per_session.per_session_cte`): by
        # rowid, the table's order, unless the window is a narrow share of the file, where
        # ``+s.rowid`` lets SQLite find its sessions by the ``started_at`` index (measured
        # on the benchmark store: 30 days 42 → 25 ms, 365 days unchanged).
        join = "LEFT JOIN session_model_usage u ON u.session_id = s.id"
        group = f"GROUP BY {'+' if scope.narrow else ''}s.rowid"
    else:
        sums = [f"COALESCE({c(n)}, 0)" for n in TOKEN_KEYS]
        cost, join, group = f"COALESCE({c('estimated_cost_usd', 'NULL')}, 0.0)", "", ""
    name = c("display_name", "NULL")
    return f"""
        WITH per AS MATERIALIZED (
            SELECT s.user_id AS uid, COALESCE(NULLIF(s.source, ''), 'unknown') AS source,
                   {name} AS dn, s.started_at AS st, COALESCE(s.message_count, 0) AS messages,
                   {" + ".join(sums)} AS tokens, {cost} AS cost
            FROM sessions s {join}
            WHERE {scope.where} AND s.user_id IS NOT NULL AND s.user_id <> '' {group})
        SELECT uid, NULL, GROUP_CONCAT(DISTINCT source), COUNT(*), SUM(messages), SUM(tokens),
               SUM(cost), MIN(st), MAX(st)
        FROM per GROUP BY uid
        UNION ALL
        SELECT uid, dn, NULL, NULL, NULL, NULL, NULL, NULL, MAX(st)
        FROM per WHERE dn IS NOT NULL AND dn <> '' GROUP BY uid, dn"""


# How long the users of a window are reused while the file does not change (a "last N days"
# window slides with the clock: as the insights report's ``REPORT_TTL``).  Measured on the
# benchmark store in the same rounds: see docs/performance.md.
PEOPLE_TTL = 60


def store_people(window, now: float, profile: str | None = None) -> dict[str, dict]:
    """The users of the window in the store open now, by (redacted) user id; reused while
    the file is unchanged, for ``PEOPLE_TTL`` seconds at most."""
    return store.while_unchanged(
        "people",
        (window, redaction_enabled(), profile),
        lambda: _store_people(window, now, profile),
        PEOPLE_TTL,
    )


def _store_people(window, now: float, profile: str | None) -> dict[str, dict]:
    scope, _first, _last = window_span(scope_of(window, now))
    people: dict[str, dict] = {}
    if not scope.shape.has_column("sessions", "user_id"):
        return people
    names: dict[str, tuple[float, str]] = {}
    # Per user: sessions, messages, tokens, cost, first and last start.
    for uid, dn, platforms, *counts in store.rows(people_sql(scope), list(scope.params)):
        uid, last = redact(uid), counts[-1]
        if platforms is None:  # a display name and when it was last seen
            if uid not in names or (last or 0) > names[uid][0]:
                names[uid] = (last or 0, redact(dn))
            continue
        row = people.setdefault(uid, _empty(uid))
        _add(row, set(platforms.split(",")), {profile} - {None}, *counts)
    for uid, (_at, dn) in names.items():
        if uid in people:
            people[uid]["display_name"] = dn
    return people


def _empty(uid: str) -> dict:
    return {
        "user_id": uid,
        "display_name": None,
        "platforms": set(),
        "profiles": set(),
        "sessions": 0,
        "messages": 0,
        "tokens": 0,
        "estimated_cost_usd": 0.0,
        "first_session_at": None,
        "last_session_at": None,
    }


def _add(row, platforms, profiles, n, messages, tokens, cost, first, last) -> None:
    row["platforms"] |= platforms
    row["profiles"] |= profiles
    row["sessions"] += n or 0
    row["messages"] += messages or 0
    row["tokens"] += tokens or 0
    row["estimated_cost_usd"] += cost or 0.0
    firsts = [v for v in (row["first_session_at"], first) if v is not None]
    lasts = [v for v in (row["last_session_at"], last) if v is not None]
    row["first_session_at"] = min(firsts, default=None)
    row["last_session_at"] = max(lasts, default=None)


def people(window, parts, notes: list[str]) -> list[dict]:
    """Every user of the window: of the store open now, or added up over ``parts``."""
    now = stats.current_time()
    if parts is None:
        return list(store_people(window, now).values())
    merged: dict[str, dict] = {}
    for part in parts:
        try:
            with registry.using(part):
                found = store_people(window, now, part.name)
        except (DatabaseError, sqlite3.Error) as exc:
            notes.append(
                registry.unavailable_note(part, registry.REGISTRY.failed(part, exc).reason)
            )
            continue
        for uid, row in found.items():
            into = merged.setdefault(uid, _empty(uid))
            into["display_name"] = into["display_name"] or row["display_name"]
            _add(into, *(row[k] for k in COLUMNS[2:]))
    return list(merged.values())


class PeopleForm(InsightsForm):
    user = forms.CharField(
        required=False,
        label=gettext_lazy("User or name contains"),
        max_length=200,
    )

    def __init__(self, data=None, **kwargs):
        super().__init__(data, activity_days=False, **kwargs)

    def matches(self, row: dict) -> bool:
        wanted = (self.cleaned_data.get("user") or "").casefold()
        return not wanted or any(
            wanted in (row[k] or "").casefold() for k in ("user_id", "display_name")
        )


NUM = {"td": {"class": "num"}, "th": {"class": "num"}}
DEFAULT_SORT = "-last_session_at"


class PeopleTable(KeysetTable):
    """The users, sorted here (:func:`sorted_people`); the body built as the session
    tables build theirs (:class:`sessions_app.tables.KeysetTable`)."""

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

    def __init__(self, *args, sessions_url: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.sessions_url = sessions_url

    def render_user_id(self, value):
        return format_html(
            '<a href="{}?{}">{}</a>', self.sessions_url, urlencode({"user_id": value}), value
        )

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


def sorted_people(rows: list[dict], sort: str) -> tuple[list, str]:
    """The rows as records sorted by ``sort`` (a column, ``-`` for descending; an unknown or
    unsortable one is the default), empty values last, then by user id."""
    name = sort.lstrip("-")
    if name not in PeopleTable.base_columns or not PeopleTable.base_columns[name].orderable:
        sort, name = DEFAULT_SORT, DEFAULT_SORT.lstrip("-")
    ordered = sorted(rows, key=lambda r: r["user_id"])
    present = [r for r in ordered if r[name] is not None]
    present.sort(key=lambda r: r[name], reverse=sort.startswith("-"))
    missing = [r for r in ordered if r[name] is None]
    return [SimpleNamespace(**r) for r in present + missing], sort


def _export_rows(rows: list[dict]) -> list[dict]:
    return [
        {
            **row,
            "platforms": ",".join(sorted(row["platforms"])),
            "profiles": ",".join(sorted(row["profiles"])),
            "estimated_cost_usd": round(row["estimated_cost_usd"], 6),
            "first_session_at": iso(row["first_session_at"]) or None,
            "last_session_at": iso(row["last_session_at"]) or None,
        }
        for row in rows
    ]


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
    if form.is_bound:
        rows = [row for row in rows if form.matches(row)]
    if fmt is not None:
        rows.sort(key=lambda r: (-(r["last_session_at"] or 0), r["user_id"]))
        return exports.stream_export(
            fmt=fmt,
            columns=COLUMNS,
            chunks=[_export_rows(rows)],
            filename=exports.export_filename("people", [form.window().label], fmt),
            spreadsheet=exports.wants_spreadsheet(request),
            raw=exports.wants_raw(request),
        )
    records, sort = sorted_people(rows, request.GET.get("sort", DEFAULT_SORT))
    table = PeopleTable(records, order_by=sort, sessions_url=reverse("sessions:list"))
    if parts is None:
        table.exclude = ("profiles",)
    context = {
        "form": form,
        "table": table,
        "notes": notes,
        "count": len(rows),
        "window": form.window(),
        "shape": store.shape(),
        "no_users": not store.shape().has_column("sessions", "user_id"),
        "no_display_names": not store.shape().has_column("sessions", "display_name"),
    }
    return render(request, "insights_app/people.html", context)
