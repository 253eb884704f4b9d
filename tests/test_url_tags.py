"""``{% url %}`` keeps an argument-less URL once reversed: the same URL Django's tag gives,
for each script prefix (a profile's ``/p/<name>/``) and current application, and the page's
navigation still follows the person's role."""

from __future__ import annotations

import pytest
from django.template import Context, Engine, Template
from django.test import Client
from django.urls import NoReverseMatch, get_script_prefix, reverse, set_script_prefix

from hermes_explorer.url_tags import KeptURLNode
from tests.roles_helpers import make_user

SOURCES = [
    "{% url 'sessions:list' %}",
    "{% url 'sessions:list' as u %}[{{ u }}]",
    "{% url 'no-such-name' as u %}[{{ u }}]",
    '{% url "insights:index" %}',
    "{% autoescape off %}{% url 'sessions:list' %}{% endautoescape %}",
    "{% url name %}",
    "{% url 'sessions:detail' sid %}",
]


def _engine(builtins):
    return Engine(builtins=builtins)


@pytest.mark.parametrize("source", SOURCES)
def test_url_writes_what_django_writes(source):
    ours = _engine(["hermes_explorer.url_tags"]).from_string(source)
    stock = _engine([]).from_string(source)
    before = get_script_prefix()
    try:
        for prefix in ("/", "/p/alpha/", "/", "/p/b%C3%A9ta/", "/p/alpha/"):
            set_script_prefix(prefix)
            values = {"name": "live:index", "sid": "20260101_000000_abcdef"}
            assert ours.render(Context(values)) == stock.render(Context(values)), prefix
    finally:
        set_script_prefix(before)


def test_a_missing_name_without_as_still_raises():
    template = _engine(["hermes_explorer.url_tags"]).from_string("{% url 'no-such-name' %}")
    with pytest.raises(NoReverseMatch):
        template.render(Context())


def test_only_fixed_names_without_arguments_are_kept():
    def first(source):
        return type(_engine(["hermes_explorer.url_tags"]).from_string(source).nodelist[0])

    assert first("{% url 'sessions:list' %}") is KeptURLNode
    assert first("{% url name %}") is not KeptURLNode
    assert first("{% url 'sessions:detail' sid %}") is not KeptURLNode
    assert first("{% url 'sessions:list'|lower %}") is not KeptURLNode


def test_the_project_templates_keep_their_urls():
    assert type(Template("{% url 'sessions:list' %}").nodelist[0]) is KeptURLNode


@pytest.mark.django_db(databases=["default", "hermes"])
def test_navigation_follows_each_requests_role(current_store):
    analyst, viewer = Client(), Client()
    analyst.force_login(make_user("analyst", "analyst-url-tags"))
    viewer.force_login(make_user("viewer", "viewer-url-tags"))
    messages = f'href="{reverse("messages:list")}"'
    for _ in range(2):
        assert messages in analyst.get(reverse("sessions:list")).content.decode()
        assert messages not in viewer.get(reverse("sessions:list")).content.decode()
