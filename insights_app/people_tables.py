"""The table of ``/people/``: django-tables2 columns, ordered by django-tables2 itself."""

from __future__ import annotations

import django_tables2 as tables
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode
from django.utils.translation import gettext_lazy

from sessions_app.formatting import number, usd
from sessions_app.tables import KeysetTable
from sessions_app.templatetags.explorer import source_badge, time_html

from .people_forms import id_value

NUM = {"td": {"class": "num"}, "th": {"class": "num"}}
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
            ((key[0], id_value(key), JOIN_FORM_ID, key[2], key[1]) for key in sorted(value)),
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
