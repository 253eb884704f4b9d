"""What a worker does as it starts, so that its first requests do not: the literal translations
of every template in every language, and the statement that reads each request's session.

(The URL resolvers.)
"""

from __future__ import annotations

import pytest
from django.conf import settings
from django.db import connections
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts_app import session_read
from hermes_explorer import i18n_tags, warmup
from tests.roles_helpers import make_user

LANGUAGES = [code for code, _name in settings.LANGUAGES]


@pytest.fixture
def warmed(monkeypatch):
    monkeypatch.setattr(warmup.gc, "freeze", lambda: None)  # keep the test process as it was
    monkeypatch.setattr(session_read, "_plans", {})
    warmup.warm_up()


def test_every_literal_translation_is_kept_in_every_language(warmed):
    nodes = list(i18n_tags._KEEPING)
    literal = [n for n in nodes if isinstance(n, i18n_tags.LiteralTranslateNode)]
    block = [n for n in nodes if isinstance(n, i18n_tags.LiteralBlockTranslateNode)]
    assert len(literal) > 100 and block  # the project's templates are compiled
    for node in literal:
        assert {(lang, True) for lang in LANGUAGES} <= set(node.kept), node.filter_expression
    for node in block:
        assert set(LANGUAGES) <= set(node.kept)
    sign_out = [n for n in literal if n.filter_expression.var.literal == "Sign out"]
    assert sign_out and {n.kept[("fr", True)] for n in sign_out} == {"Se déconnecter"}


@pytest.mark.django_db(databases=["default", "hermes"])
def test_the_session_statement_is_compiled_without_reading_a_table(monkeypatch, current_store):
    monkeypatch.setattr(warmup.gc, "freeze", lambda: None)
    monkeypatch.setattr(session_read, "_plans", {})
    with CaptureQueriesContext(connections["default"]) as queries:
        warmup.warm_up()
    # Compiling may probe what the database supports (Django asks SQLite once whether it has
    # JSON); it reads no table.
    assert not [q["sql"] for q in queries if " FROM " in q["sql"].upper()]
    assert session_read._plans

    def compile_again(*args):
        raise AssertionError("compiled again in a request")

    monkeypatch.setattr(session_read, "_compile", compile_again)
    client = Client()
    client.force_login(make_user("viewer", "reader"))
    page = client.get(reverse("sessions:list"))
    assert page.status_code == 200
    assert page.wsgi_request.user.username == "reader"


def test_a_start_goes_on_when_the_statement_cannot_be_compiled(monkeypatch, caplog):
    monkeypatch.setattr(warmup.gc, "freeze", lambda: None)
    monkeypatch.setattr(session_read, "_plans", {})

    def broken(*args):
        raise RuntimeError("the app database is not up yet")

    monkeypatch.setattr(session_read, "_compile", broken)
    warmup.warm_up()
    assert "session statement not compiled ahead" in caplog.text
