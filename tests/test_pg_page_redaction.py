"""Pages of a PostgreSQL profile hide the secrets planted in every column, as a file's do.

The store of ``tests/test_page_redaction.py`` (secrets in every column Hermes stores text in,
in each layout) is loaded into a schema and served as the PostgreSQL profile ``team``; every
page, list, export and old-API answer of it is read as an analyst and as a viewer.  An answer
of 200 shows no 8 characters of any secret (the same decoding as on SQLite: HTML entities,
JSON escapes, URL escapes, JSON inside JSON); a page family not ported to PostgreSQL answers
501 and is held to the same rule once it answers 200.
"""

from __future__ import annotations

import time

import pytest
from django.core.cache import cache
from django.db import connections

from hermes_explorer import stores
from hermes_explorer.stores import REGISTRY
from tests import test_page_redaction as pr
from tests.builders import StateDB
from tests.hermes_pg import hermes_pg  # noqa: F401
from tests.profile_home import allow_new_aliases
from tests.roles_helpers import client_for

pytestmark = pytest.mark.django_db(databases="__all__")


@pytest.fixture(scope="module", params=["current", "legacy", "doc"])
def secret_schema(request, hermes_pg, tmp_path_factory):  # noqa: F811
    path = tmp_path_factory.mktemp(f"pg-page-{request.param}") / "state.db"
    with StateDB.create(path, request.param) as db:
        ids = pr._plant(db, time.time())
    schema = f"page_{request.param}"
    hermes_pg.load(path, schema)
    return f"{hermes_pg.reader_url}?schema={schema}", ids


@pytest.fixture
def team_ids(secret_schema, settings, request):
    allow_new_aliases(
        request.getfixturevalue("monkeypatch"), request.getfixturevalue("django_db_blocker")
    )
    source, ids = secret_schema
    settings.HERMES_STORES, settings.HERMES_SINGLE_FILE = f"team={source}", False
    REGISTRY.rescan()
    cache.clear()
    assert [s.postgres for s in stores.all_stores()] == [True]
    yield ids
    for one in stores.all_stores():
        connections[one.alias].close()
    REGISTRY.rescan()


def urls(ids: list[str]) -> list[str]:
    found = [*pr.LIST_PAGES, *pr.LIST_EXPORTS, "/state/system_prompts.json?_size=max"]
    for sid in ids:
        found += [f"/sessions/{sid}/{show}" for show in pr.SHOWS]
        found += [f"/sessions/{sid}/timeline/{show}" for show in ("", pr.SHOWS[-1])]
        found += [f"/sessions/{sid}/export.{kind}?{pr.ALL_SHOWN}" for kind in ("md", "json")]
        found += [
            f"/sessions/{sid}/timeline/?{pr.ALL_SHOWN}&_export={kind}" for kind in ("json", "csv")
        ]
    return found


@pytest.mark.parametrize("role", ["analyst", "viewer"])
def test_every_page_of_a_schema_hides_every_secret(team_ids, role):
    client = client_for(role)
    read = []
    for url in urls(team_ids):
        response = client.get(url, follow=True)
        assert response.status_code < 500 or response.status_code == 501, (url, response)
        if response.status_code != 200:
            continue
        body = b"".join(response.streaming_content) if response.streaming else response.content
        pr._assert_hidden(body.decode("utf-8", errors="replace"), f"{url} ({role}, PostgreSQL)")
        read.append(url)
    # The families ported today are among those read: the lists, the exports, the old API.
    assert {"/sessions/?flags=all", "/state/sessions"} <= set(read), read
    if role == "analyst":
        assert {"/state/messages", "/state/messages.json?_size=max"} <= set(read), read
        assert {"/messages/?_export=json", "/sessions/?flags=all&_export=dataset"} <= set(read)
        assert any(url.endswith("/export.md?" + pr.ALL_SHOWN) for url in read), read
