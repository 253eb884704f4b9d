"""The HTML built in Python for speed is the HTML the slower, general way gives.

Each fast path (links without ``reverse()`` per row, the shared table cells, search hits) is compared with what Django itself produces for the same input,
including hostile values.
"""

from __future__ import annotations

import datetime as dt
from html import escape

import pytest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from sessions_app.links import TranscriptLinks
from sessions_app.templatetags.explorer import cost_badge, source_badge, time_html

HOSTILE = ["plain", "<b>\"x\" & 'y'</b>", "", "  ", "é✓", "0", mark_safe("<i>safe</i>")]


def _structure(html: str) -> list[tuple]:
    """Tags with their attributes (as a set) and the stripped text between them."""
    from html.parser import HTMLParser

    found: list[tuple] = []

    class Walk(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append(("<", tag, frozenset(attrs)))

        def handle_endtag(self, tag):
            found.append((">", tag))

        def handle_data(self, data):
            if data.strip():
                found.append(("text", data.strip()))

    Walk(convert_charrefs=True).feed(html)
    return found


IDS = ["20260812_185518_bb884a", "a-b_c", "with space", "ümlaut", "a:b", "..", ".", "x.y", "%41"]


@pytest.mark.parametrize("session_id", IDS)
def test_links_are_the_links_reverse_gives(session_id):
    links = TranscriptLinks()
    assert links.session(session_id) == reverse("sessions:detail", args=[session_id])
    for message_id in (0, 7, 987654321, 10**12):
        assert links.message(session_id, message_id) == reverse(
            "sessions:message", args=[session_id, message_id]
        )


def test_links_under_a_script_prefix():
    from django.urls import get_script_prefix, set_script_prefix

    before = get_script_prefix()
    set_script_prefix("/explorer/")
    try:
        links = TranscriptLinks()
        assert links.session("abc") == "/explorer/sessions/abc/"
        assert links.message("abc", 5) == reverse("sessions:message", args=["abc", 5])
    finally:
        set_script_prefix(before)


def test_an_unroutable_id_gives_no_link():
    links = TranscriptLinks()
    assert links.session("a/b") is None
    assert links.session("") is None
    assert links.message("a/b", 1) is None


def _time_html_reference(epoch_value, *, seconds=False, age=False, empty="—"):
    from django.contrib.humanize.templatetags.humanize import naturaltime
    from django.utils import timezone

    from sessions_app.timefmt import from_epoch

    moment = from_epoch(epoch_value)
    if moment is None:
        return empty
    local = timezone.localtime(moment)
    html = format_html(
        '<time datetime="{}" title="{}">{}</time>',
        local.isoformat(timespec="seconds"),
        local.strftime("%Y-%m-%d %H:%M:%S %Z"),
        local.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M"),
    )
    if age:
        html = format_html('{}<span class="age">{}</span>', html, naturaltime(moment))
    return html


@pytest.mark.parametrize(
    "value", [0, 1_750_000_000, 1_750_000_000.999, -62_000_000_000, "1e9", None, "x", 1e30]
)
@pytest.mark.parametrize("zone", ["UTC", "Europe/Paris", "America/St_Johns", "Asia/Kolkata"])
def test_time_cells_match_the_format_html_version(value, zone, settings):
    from django.utils import timezone

    settings.TIME_ZONE = zone
    with timezone.override(zone):
        for seconds in (False, True):
            for age in (False, True):
                assert str(time_html(value, seconds=seconds, age=age)) == str(
                    _time_html_reference(value, seconds=seconds, age=age)
                )


AGE_SECONDS = [
    0,
    1,
    59,
    60,
    61,
    3_599,
    3_600,
    7_201,
    86_399,
    86_400,
    90_061,
    2_592_000,
    31_536_000,
    40_000_000,
    100_000_000,
    400_000_000,
]


@pytest.mark.parametrize("language", ["en", "fr"])
def test_ages_are_what_naturaltime_writes(language, monkeypatch):
    """The ages beneath start times read their phrases from a per-language memory: the same
    text as Django's ``naturaltime`` for every unit, past and future, in both languages, and
    again when asked a second time."""
    from django.contrib.humanize.templatetags import humanize
    from django.utils import timezone, translation

    now = dt.datetime(2026, 11, 30, 14, 5, 7, tzinfo=dt.UTC)

    class Fixed(dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return now if tz else now.replace(tzinfo=None)

    monkeypatch.setattr(humanize, "datetime", Fixed)
    with translation.override(language), timezone.override("UTC"):
        for seconds in AGE_SECONDS:
            for moment in (
                now - dt.timedelta(seconds=seconds),
                now + dt.timedelta(seconds=seconds),
            ):
                expected = str(humanize.naturaltime(moment))
                for _ in range(2):
                    html = str(time_html(moment.timestamp(), age=True))
                    assert html.endswith(f'<span class="age">{escape(expected)}</span>'), html


@pytest.mark.parametrize("source", ["telegram", "<x>", "", None, "A B", "ü"])
def test_source_badges_are_cached_but_the_same(source):
    from django.utils.text import slugify

    expected = format_html(
        '<span class="badge source source-{}">{}</span>', slugify(source) or "none", source
    )
    assert source_badge(source) == expected
    assert source_badge(source) == expected  # the cached one
    assert source_badge(["un", "hashable"]).startswith('<span class="badge source')


class _Record:
    def __init__(self, **values):
        self.__dict__.update(values)


@pytest.mark.parametrize(
    "values",
    [
        {"cost_status": "included"},
        {"cost_status": "unknown"},
        {"cost_status": "actual", "actual_cost_usd": 1234.5},
        {"cost_status": "actual", "actual_cost_usd": None, "estimated_cost_usd": 0.01},
        {"estimated_cost_usd": 0},
        {"estimated_cost_usd": "<b>"},
        {},
    ],
)
def test_cost_badges(values):
    html = str(cost_badge(_Record(**values)))
    assert html.startswith('<span class="cost ')
    assert "<b>" not in html
    if values.get("cost_status") == "actual" and values.get("actual_cost_usd") is not None:
        assert '<span class="cost actual" title="Provider-reported cost">$1,234.5000</span>' == html


# The filter sidebars' fields: the template they replace, kept here as the reference.
HIT_TEMPLATE = """{% load explorer %}<li class="hit role-{{ hit.role|slugify }}">
  <div class="hit-head">
    {% if hit.url %}<a class="hit-link" href="{{ hit.url }}">{% if hit.title %}{{ hit.title }}{% else %}<span class="untitled">{{ hit.session_id }}</span>{% endif %}</a>{% else %}<span class="untitled">{{ hit.session_id }}</span>{% endif %}
    {% if hit.source %}<span class="badge source source-{{ hit.source|slugify }}">{{ hit.source }}</span>{% endif %}
    <span class="role">{{ hit.role|default:"—" }}</span>
    {% if hit.tool_name %}<span class="tool-name">{{ hit.tool_name }}</span>{% endif %}
    {% if hit.visibility != "live" %}<span class="badge warn" title="Not part of the live transcript">{{ hit.visibility }}</span>{% endif %}
    {% if hit.timestamp is not None %}{{ hit.timestamp|time_cell }}{% endif %}
    <span class="muted copy-id">#{{ hit.id }} <button type="button" class="copy" data-copy="{{ hit.id }}" aria-label="Copy message id {{ hit.id }}" title="Copy message id">Copy</button>
</span>
  </div>
  <p class="snippet">{% if hit.snippet %}{{ hit.snippet }}{% else %}<span class="muted">(the match is in the tool call or tool name)</span>{% endif %}</p>
</li>
"""  # noqa: E501


@pytest.mark.parametrize(
    "values",
    [
        {},
        {"title": None, "source": None, "timestamp": None, "role": None, "snippet": ""},
        {"session_id": "odd/id <x>", "title": "<b>T</b> & co", "tool_name": "<t>"},
        {"visibility": "rewound", "role": "tool", "source": "Tele Gram ü", "timestamp": 0},
        {"snippet": mark_safe("a <mark>hit</mark> &amp; more"), "id": 10**12},
    ],
)
def test_search_hits_render_as_the_template_did(values):
    from django.template import Context, Template

    from sessions_app.search.hits_html import hits_html
    from sessions_app.search.statements import Hit

    base = {
        "id": 42,
        "session_id": "20260101_000000_abcdef",
        "role": "user",
        "tool_name": None,
        "timestamp": 1_750_000_000.5,
        "title": "A title",
        "source": "telegram",
        "snippet": mark_safe("the <mark>word</mark>"),
    }
    hit = Hit(**{**base, **values})
    expected = Template(HIT_TEMPLATE).render(Context({"hit": hit}))
    assert hits_html([hit, hit]) == expected * 2


@pytest.mark.parametrize(
    "value",
    [
        "<a & 'b'>",
        mark_safe("<i>ok</i>"),
        0,
        -12_345_678,
        10**20,
        True,
        None,
        1.5,
        1e-7,
        float("nan"),
        dt.date(2026, 1, 2),
        ["<x>"],
    ],
)
@pytest.mark.parametrize("grouping", [False, True])
def test_text_html_is_what_a_template_variable_renders(value, grouping, settings):
    from django.utils.formats import localize
    from django.utils.html import conditional_escape

    from sessions_app.templatetags.explorer import text_html

    settings.USE_THOUSAND_SEPARATOR = grouping
    assert text_html(value) == conditional_escape(localize(value))


@pytest.mark.parametrize("language", ["en", "fr"])
def test_grouped_numbers_are_what_intcomma_gives(language):
    from django.contrib.humanize.templatetags.humanize import intcomma
    from django.utils import translation

    from sessions_app.templatetags.explorer import grouped

    values = [0, 7, -3, 999, 1000, 1234, -1234567, 10**18, 1234.5, 0.25, -0.5, 1e14 + 0.5]
    values += [None, "12345", "abc", "", True, float("nan"), float("inf"), 1e300]
    with translation.override(language):
        for value in values:
            assert grouped(value) == intcomma(value), value
