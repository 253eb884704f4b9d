"""The ``i18n`` template library with kept translations writes what Django's own writes.

A literal ``{% translate %}`` keeps its translation per language: the same template rendered
in French, then English, then French again never shows the other language's words, inside
``{% language %}`` blocks too, and a page's chrome follows each request's language.
"""

from __future__ import annotations

import pytest
from django.template import Context, Engine, Template
from django.test import Client
from django.urls import reverse
from django.utils import translation

from hermes_explorer.i18n_tags import (
    LiteralBlockTranslateNode,
    LiteralTranslateNode,
    translate_ahead,
)
from sessions_app.formatting import REQUEST_LANGUAGE
from tests.roles_helpers import make_user

VALUES = {"label": "Sessions <x>", "n": 1234.5, "items": [1, "<b>", 2]}

SOURCES = [
    '{% translate "Filters" %}',
    '{% trans "Sign out" %}',
    '{% translate "Main" context "navigation" %}',
    '{% translate "{n} on" context "active filters" %}',
    '{% translate "Filters" noop %}',
    '{% translate "Filters" as word %}[{{ word }}]',
    '{% translate "Search" as word context "filter" %}[{{ word }}]',
    '{% translate "Filters"|upper %}',
    "{% translate label %}",
    '{% translate "100% <b>&</b> it\'s" %}',
    '{% autoescape off %}{% translate "<b>&</b>" %}{% endautoescape %}',
    '{% translate "Filters" %}{% language "fr" %}{% translate "Filters" %}{% endlanguage %}'
    '{% translate "Filters" %}',
    '{% language "en" %}{% translate "Sign out" %}{% endlanguage %}{% translate "Sign out" %}',
    "{% blocktranslate with messages=n %}sessions · {{ messages }} messages{% endblocktranslate %}",
    "{% blocktranslate with path=label %}Reading <code>{{ path }}</code> read-only"
    "{% endblocktranslate %}",
    "{% autoescape off %}{% blocktranslate with path=label %}Reading <code>{{ path }}</code>"
    " read-only{% endblocktranslate %}{% endautoescape %}",
    "{% blocktranslate with cost=n|floatformat:2 asvar said %}{{ cost }} est."
    "{% endblocktranslate %}[{{ said }}]",
    '{% blocktranslate context "x" %}Filters {{ label }}{% endblocktranslate %}',
    "{% blocktranslate trimmed with messages=n %}\n  sessions · {{ messages }}\n  messages"
    "{% endblocktranslate %}",
    "{% blocktranslate %}{{ missing }} 100% {{ label }}{% endblocktranslate %}",
    "{% blocktranslate count counter=items|length %}Reading {{ counter }} profile read-only{% plural %}"
    "Reading {{ counter }} profiles read-only{% endblocktranslate %}",
    "{% for x in items %}{% blocktranslate with messages=x %}sessions · {{ messages }} messages"
    "{% endblocktranslate %}{% endfor %}",
]


def _render(libraries: dict, source: str, lang: str, *, request_language: bool) -> str:
    engine = Engine(libraries=libraries)
    template = engine.from_string("{% load i18n %}" + source)
    context = Context(VALUES)
    token = REQUEST_LANGUAGE.set(lang if request_language else None)
    try:
        with translation.override(lang):
            return template.render(context)
    finally:
        REQUEST_LANGUAGE.reset(token)


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("request_language", [True, False])
@pytest.mark.parametrize("ahead", [False, True], ids=["kept-on-render", "kept-ahead"])
def test_translate_writes_what_django_writes(source, request_language, ahead):
    ours = {"i18n": "hermes_explorer.i18n_tags"}
    django = {"i18n": "django.templatetags.i18n"}
    engine = Engine(libraries=ours)
    kept = engine.from_string("{% load i18n %}" + source)
    if ahead:  # as a worker's start does (hermes_explorer.warmup)
        translate_ahead(["fr", "en"])
    for lang in ("fr", "en", "fr", "en"):  # the second round from the kept translations
        expected = _render(django, source, lang, request_language=request_language)
        token = REQUEST_LANGUAGE.set(lang if request_language else None)
        try:
            with translation.override(lang):
                got = kept.render(Context(VALUES))
        finally:
            REQUEST_LANGUAGE.reset(token)
        assert got == expected, (lang, source)


def test_only_literal_messages_are_kept():
    def nodes(source):
        template = Engine(libraries={"i18n": "hermes_explorer.i18n_tags"}).from_string(
            "{% load i18n %}" + source
        )
        return [type(n) for n in template.nodelist]

    assert LiteralTranslateNode in nodes('{% translate "Filters" context "x" %}')
    assert LiteralTranslateNode not in nodes("{% translate label %}")
    assert LiteralTranslateNode not in nodes('{% translate "Filters"|upper %}')
    assert LiteralTranslateNode not in nodes('{% translate "Filters" context ctx %}')
    assert LiteralBlockTranslateNode in nodes(
        "{% blocktranslate %}a {{ b }}{% endblocktranslate %}"
    )
    plural = "{% blocktranslate count c=n %}a{% plural %}b{% endblocktranslate %}"
    assert LiteralBlockTranslateNode not in nodes(plural)


def test_the_project_templates_load_the_kept_translations():
    template = Template('{% load i18n %}{% translate "Filters" %}')
    assert isinstance(template.nodelist[-1], LiteralTranslateNode)


@pytest.mark.django_db(databases=["default", "hermes"])
def test_switching_language_between_requests_switches_the_chrome(current_store):
    client = Client()
    client.force_login(make_user("staff", "staff-i18n-tags"))
    url = reverse("sessions:list")
    for lang, mine, other in [
        ("fr", "Se déconnecter", "Sign out"),
        ("en", "Sign out", "Se déconnecter"),
        ("fr", "Se déconnecter", "Sign out"),
        ("en", "Sign out", "Se déconnecter"),
    ]:
        html = client.get(url, HTTP_ACCEPT_LANGUAGE=lang).content.decode()
        assert f'<html lang="{lang}"' in html
        assert mine in html and other not in html, lang
        words = ("Filtres", "Filters") if lang == "fr" else ("Filters", "Filtres")
        assert f'data-word-filters="{words[0]}"' in html
        assert f'data-word-filters="{words[1]}"' not in html
