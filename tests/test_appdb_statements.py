"""How many statements the list and search pages send to the app database, pinned.

On PostgreSQL each statement is a round trip over the network, paid on every page: the
signed-in session is read with its user and with whether the team has any tag or annotated
session at all; a list page then reads its rows' annotations and the tag facet in one more
statement, a search page its hits' tags, and neither when there is nothing to find.  Runs on
the default SQLite app database and, with ``-p tests.real_servers``, on PostgreSQL and Redis,
where the counts must be the same.  The warm pages send nothing to the cache either: what they
keep there is copied into each worker (``hermes_explorer.near_cache``).
"""

from __future__ import annotations

import pytest
from django.core.cache import caches
from django.db import connections
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotations_app.models import Tag
from tests.roles_helpers import make_user

pytestmark = pytest.mark.django_db(databases=["default", "hermes"])

PAGES = {
    "sessions": "/sessions/",
    "sessions, one source": "/sessions/?source=telegram&sort=-started_at",
    "sessions by source": "/sessions/?sort=source",
    "messages": "/messages/",
    "messages of one session": "/messages/?session_id={big}",
    "messages, role": "/messages/?role=user",
    "search, a word": "/search/?q={rare}",
    "search, common word": "/search/?q={common}",
    "search, tagged hits": "/search/?q=keyboard",
}
# The session with its user (and the annotation flags); then, once the team annotates, one
# statement for a list page's rows with the facet, one for a search page's hits' tags.
WITHOUT_ANNOTATIONS = dict.fromkeys(PAGES, 1)
WITH_ANNOTATIONS = {
    **dict.fromkeys(PAGES, 1),
    "sessions": 2,
    "sessions, one source": 2,
    "sessions by source": 2,
    "search, a word": 2,
    "search, common word": 2,
    "search, tagged hits": 2,
}


class CacheCalls:
    """Counts the calls to the shared cache's backend (each a round trip on Redis)."""

    NAMES = ("get", "get_many", "set", "set_many", "add", "delete", "delete_many", "incr", "touch")

    def __init__(self, monkeypatch) -> None:
        self.calls: list[str] = []
        backend = type(caches["default"])
        for name in self.NAMES:
            original = getattr(backend, name)

            def counted(cache, *args, _name=name, _original=original, **kwargs):
                self.calls.append(_name)
                return _original(cache, *args, **kwargs)

            monkeypatch.setattr(backend, name, counted)


@pytest.fixture
def analyst(client):
    user = make_user("analyst", username="counted")
    client.force_login(user)
    return client


def _statements(client, url: str, cache: CacheCalls | None = None) -> list[str]:
    assert client.get(url).status_code == 200  # warm the caches
    if cache is not None:
        cache.calls.clear()
    with CaptureQueriesContext(connections["default"]) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return [q["sql"] for q in queries]


def _url(page: str, store) -> str:
    return PAGES[page].format(
        big=store.big_session_id, rare=store.rare_word, common=store.common_word
    )


@pytest.mark.parametrize("page", list(PAGES))
def test_a_team_without_annotations_costs_one_statement_a_page(
    analyst, current_store, monkeypatch, page
):
    cache = CacheCalls(monkeypatch)
    assert len(_statements(analyst, _url(page, current_store), cache)) == WITHOUT_ANNOTATIONS[page]
    assert cache.calls == []


def _annotate(client, store) -> None:
    incident = Tag.objects.create(name="incident", colour="red", description="broke")
    Tag.objects.create(name="unused", colour="grey")
    sessions = [store.big_session_id, store.multimodal_session_id]
    response = client.post(
        reverse("annotations:bulk_tag"),
        {"tag": incident.pk, "session": sessions, "next": "/sessions/"},
    )
    assert response.status_code == 302
    assert client.post(reverse("annotations:star", args=[store.big_session_id])).status_code == 302


@pytest.mark.parametrize("page", list(PAGES))
def test_a_team_with_annotations_costs_one_more_statement_on_lists_and_search(
    analyst, current_store, monkeypatch, page
):
    _annotate(analyst, current_store)
    cache = CacheCalls(monkeypatch)
    assert len(_statements(analyst, _url(page, current_store), cache)) == WITH_ANNOTATIONS[page]
    assert cache.calls == []


def test_the_one_statement_shows_the_rows_tags_star_and_the_facet(analyst, current_store):
    _annotate(analyst, current_store)
    response = analyst.get("/sessions/")
    facets = [(t.name, t.colour, n) for t, n in response.context["tag_facets"]]
    assert facets == [("incident", "red", 2), ("unused", "grey", 0)]
    found = response.context["table"].annotations.by_id
    store = response.context["table"].annotations.store
    big, other = (
        found[(store, sid)]
        for sid in (current_store.big_session_id, current_store.multimodal_session_id)
    )
    assert [t.name for t in big.tags] == ["incident"] and big.starred
    assert [t.name for t in other.tags] == ["incident"] and not other.starred
    body = response.content.decode()
    assert body.count('class="badge tag tag-red"') == 3  # the two rows', the facet's
    assert body.count('class="starred"') == 1
    hits = analyst.get("/search/?q=keyboard").content.decode()
    assert 'class="badge tag tag-red"' in hits


def test_a_tag_written_elsewhere_shows_on_the_next_page(analyst, current_store):
    """The flags are read with every request's session, never kept: a tag written through
    another connection (another instance) shows on the very next page."""
    assert analyst.get("/sessions/").context["tag_facets"] == []
    assert 'class="badge tag' not in analyst.get("/search/?q=keyboard").content.decode()
    other = make_user("analyst", username="elsewhere")
    from django.test import Client

    elsewhere = Client()
    elsewhere.force_login(other)
    _annotate(elsewhere, current_store)
    response = analyst.get("/sessions/")
    assert [t.name for t, _n in response.context["tag_facets"]] == ["incident", "unused"]
    assert 'class="badge tag tag-red"' in response.content.decode()
    # The star is the other user's own: not shown to this one.
    assert 'class="starred"' not in response.content.decode()
    assert 'class="badge tag tag-red"' in analyst.get("/search/?q=keyboard").content.decode()


def test_the_cache_counter_sees_a_cache_call(monkeypatch):
    cache = CacheCalls(monkeypatch)
    caches["default"].get_many(["a", "b"])
    caches["default"].get("a")
    # (the file cache's get_many asks each key in turn: counted too)
    assert cache.calls[0] == "get_many" and cache.calls[-1] == "get"


def test_a_pooler_without_prepared_statements_gets_the_same_page(
    analyst, current_store, monkeypatch
):
    _annotate(analyst, current_store)

    def seen():
        response = analyst.get("/sessions/")
        facets = [
            (t.pk, t.name, t.colour, t.description, n) for t, n in response.context["tag_facets"]
        ]
        hits = analyst.get("/search/?q=keyboard").content.decode().count("badge tag tag-red")
        return facets, response.context["table"].annotations.by_id, hits

    before = seen()
    assert before[1] and before[2]
    connection = connections["default"]
    if connection.vendor == "postgresql":  # ``?prepared_statements=0`` in DATABASE_URL
        monkeypatch.setitem(connection.__dict__, "prepares_statements", False)
    assert seen() == before
