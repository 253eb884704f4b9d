"""Shared fixtures: real-shaped state.db files of every shape, and signed-in clients.

The ``hermes`` alias is pointed at a fixture file per test (``use_store``); the files are built
once per session from the project's own DDL (``tests/builders.py``), never mocked.
"""

from __future__ import annotations

import os

import pytest
from django.db import connections

from hermes_fixtures.ddl import SHAPES
from tests.builders import build_nasty_db

HERMES_DBS = ["default", "hermes"]


@pytest.fixture(scope="session", autouse=True)
def _placeholder_store(django_db_blocker):
    """The settings name a placeholder state.db; make it a real (empty, current-shape) file so
    that tests which never pick a store, and Django's teardown, find something to open."""
    from django.conf import settings

    from tests.builders import StateDB

    path = settings.DATABASES["hermes"]["NAME"]
    if not os.path.exists(path):
        StateDB.create(path, "current").close()


@pytest.fixture(autouse=True)
def _english_first():
    """Every test starts in the default language: a French request leaves French active in the
    thread (LocaleMiddleware does not deactivate it), which a later test must not inherit."""
    from django.utils import translation

    translation.activate("en")
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def _templates_unrecorded(request):
    """Django's test set-up records every template a response renders and copies its context
    (``response.context``, ``response.templates``): with the form widgets' templates, a fifth of
    a page's time here.  Only the tests marked ``render_context`` read them, so only they pay."""
    from django.template.base import Template
    from django.test.utils import _TestState

    saved = getattr(_TestState, "saved_data", None)
    if saved is None or request.node.get_closest_marker("render_context"):
        yield
        return
    recording, Template._render = Template._render, saved.template_render
    yield
    Template._render = recording


@pytest.fixture
def insights_now(monkeypatch):
    """An empty cache and the insights clock at ``NASTY_NOW`` (the fixtures' "now")."""
    from django.core.cache import cache

    from tests.builders import NASTY_NOW

    cache.clear()
    monkeypatch.setattr("insights_app.stats.current_time", lambda: NASTY_NOW)


def use_store(path) -> None:
    """Point the read-only ``hermes`` connection at another state.db file."""
    connection = connections["hermes"]
    connection.close()
    connection.settings_dict["NAME"] = str(path)


@pytest.fixture(scope="session")
def nasty_stores(tmp_path_factory):
    """One nasty fixture file per shape, built once: {shape: NastyFacts}."""
    base = tmp_path_factory.mktemp("stores")
    return {shape: build_nasty_db(base / f"{shape}.db", shape) for shape in SHAPES}


@pytest.fixture(params=SHAPES)
def store(request, nasty_stores):
    """Each test using this runs once per shape, against that shape's nasty fixture."""
    facts = nasty_stores[request.param]
    use_store(facts.path)
    yield facts
    connections["hermes"].close()


@pytest.fixture
def current_store(nasty_stores):
    facts = nasty_stores["current"]
    use_store(facts.path)
    yield facts
    connections["hermes"].close()


@pytest.fixture
def staff_user(django_user_model):
    return django_user_model.objects.create_user(
        username="staff", password="pw-staff-123", is_staff=True, is_superuser=True
    )


@pytest.fixture
def staff_client(client, staff_user):
    client.force_login(staff_user)
    return client


@pytest.fixture(scope="module")
def home_facts(request, tmp_path_factory):
    """A HERMES_HOME of several profiles of different layouts (``tests/profile_home.py``), built
    once per module with its ``HOME_SESSIONS_PER_PROFILE`` sessions per profile (7 by default)."""
    from tests.profile_home import build_home

    per = getattr(request.module, "HOME_SESSIONS_PER_PROFILE", 7)
    return build_home(tmp_path_factory.mktemp("home") / ".hermes", per=per)


@pytest.fixture
def home(settings, home_facts, request):
    """The explorer serving that HERMES_HOME for one test."""
    from hermes_explorer.stores import REGISTRY
    from tests.profile_home import serve_home

    serve_home(settings, home_facts.home, request)
    yield home_facts
    REGISTRY.rescan()
