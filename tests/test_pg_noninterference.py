"""Non-interference on a PostgreSQL profile: twin schemas that differ only inside secrets
answer alike.

The twins of ``tests/twins.py`` (the same sessions and messages, the same text after
redaction, other secret values) are loaded into two schemas per layout and served, in turn,
as the one PostgreSQL profile ``team``; the crawl, the probes and the generated queries of
``tests/test_noninterference.py`` must get byte-identical answers from both (status, content
type, body).  A page family not ported to PostgreSQL answers 501 from both, and is covered
as it is ported, with no change here.

On PostgreSQL every search, filter, sort, facet and count a reader who cannot reveal asks for
is decided in Python on the redacted text, so it is where a raw value could slip through: the
same probes as on SQLite.  Each request here connects to the other
schema, so the default run keeps to fewer cases than the SQLite test (each page family and
filter on a layout or two, both roles, both languages) and a tenth of its generated queries
(``HERMES_TWIN_EXAMPLES``: 50 by default, spread as there over twelve cases); the long mode
(``HERMES_TWIN_EXAMPLES=5000``) runs every layout, role and language.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command
from django.db import connections

from hermes_explorer import stores
from hermes_explorer.stores import REGISTRY
from tests import test_noninterference as ni
from tests.hermes_pg import hermes_pg  # noqa: F401
from tests.profile_home import allow_new_aliases
from tests.roles_helpers import client_for
from tests.twins import Twins

pytestmark = pytest.mark.django_db(databases="__all__")


@pytest.fixture(autouse=True)
def _own_search_index(settings, tmp_path):
    """Each test's own local word indexes: one built by a test is not another's."""
    settings.HERMES_SEARCH_INDEX_DIR = tmp_path / "search-index"


EXAMPLES = max(ni.EXAMPLES // 10, 12)


@dataclass
class SchemaTwins:
    """Twins loaded into two schemas; ``point(side)`` serves one of them as profile team."""

    files: Twins
    a: str
    b: str

    def __getattr__(self, name):  # the probes' material: the files' secrets and ids
        return getattr(self.files, name)

    def point(self, side: str) -> None:
        # Straight onto the test's settings (the fixture's own layer, undone after the test):
        # one more override per request would stack thousands of layers.
        django_settings.HERMES_STORES = f"team={getattr(self, side)}"
        REGISTRY.rescan()
        stores.all_stores()


@pytest.fixture(scope="module")
def loaded(hermes_pg, tmp_path_factory):  # noqa: F811
    """The twins of each layout, each side in a schema of its own (loaded once per module)."""
    found = {}
    for layout in ni.LAYOUTS:
        files = ni.build_twins(tmp_path_factory.mktemp(f"pg-twins-{layout}"), layout, now=ni.NOW)
        urls = {}
        for side in ("a", "b"):
            schema = f"twin_{layout}_{side}"
            hermes_pg.load(getattr(files, side), schema)
            urls[side] = f"{hermes_pg.reader_url}?schema={schema}"
        found[layout] = (files, urls)
    return found


@pytest.fixture
def twins(loaded, settings, request):
    allow_new_aliases(
        request.getfixturevalue("monkeypatch"), request.getfixturevalue("django_db_blocker")
    )
    settings.HERMES_SINGLE_FILE, settings.HERMES_STORES = False, ""
    yield {
        layout: SchemaTwins(files, urls["a"], urls["b"]) for layout, (files, urls) in loaded.items()
    }
    for one in stores.all_stores():
        connections[one.alias].close()
    REGISTRY.rescan()


def test_the_twins_are_served_from_their_schemas(twins):
    """The premise: each side is read from its own schema, whose text differs from the
    other's only inside secrets, and whose rows are the file's."""
    from hermes_explorer import store

    pair = twins["current"]
    seen = {}
    for side in ("a", "b"):
        pair.point(side)
        (team,) = stores.all_stores()
        assert team.postgres and team.name == "team"
        with stores.using(team):
            seen[side] = store.rows("SELECT title FROM sessions ORDER BY id")
    assert seen["a"] != seen["b"] and len(seen["a"]) == len(pair.session_ids)
    assert any(secret in str(seen["a"]) for secret in pair.secrets_a)


def cases(*default):
    """Every layout, role and language in the long mode; else ``default`` (the CPU budget:
    each request here reconnects to another schema)."""
    return ni.cases(*default)


@pytest.mark.parametrize(
    "layout, role, language",
    cases(("current", "analyst", "en"), ("legacy", "viewer", "fr")),
)
def test_every_page_answers_the_same_from_both_schemas(twins, layout, role, language):
    pair = twins[layout]
    urls = ni.page_urls(pair) + ni.session_page_urls(pair, (0, 3, 5))
    ni.check(client_for(role), pair, urls, language)


@pytest.mark.parametrize("layout, role, language", cases(("doc", "viewer", "fr")))
def test_list_filters_answer_the_same_from_both_schemas(twins, layout, role, language):
    ni.check(client_for(role), twins[layout], ni.probe_urls(twins[layout]), language)


@pytest.mark.parametrize("layout, role, language", cases(("current", "analyst", "en")))
def test_the_old_api_answers_the_same_from_both_schemas(twins, layout, role, language):
    ni.check(client_for(role), twins[layout], ni.api_urls(twins[layout]), language)


@pytest.mark.parametrize("layout, role, language", cases(("current", "analyst", "en")))
def test_full_text_search_answers_the_same_from_both_schemas(twins, layout, role, language):
    ni.check(client_for(role), twins[layout], ni.search_urls(twins[layout]), language)


@pytest.mark.parametrize("layout, role, language", cases(("current", "viewer", "fr")))
def test_search_through_the_local_index_answers_the_same_from_both_schemas(
    twins, layout, role, language
):
    """With each schema's local word index built (which holds the secrets' words), search and
    the generated queries still answer alike: the index only proposes, the redacted text
    decides."""
    pair = twins[layout]
    for side in ("a", "b"):
        pair.point(side)
        out = io.StringIO()
        call_command("search_index", stdout=out, stderr=out)
        added = re.search(r"([\d,]+) messages added, up to id", out.getvalue())
        assert added and int(added[1].replace(",", "")) == len(pair.message_ids), out.getvalue()
    client = client_for(role)
    ni.check(client, pair, ni.search_urls(pair), language)
    found = ni._generated(client, pair, ni.search_url(pair))
    assert not found, f"{len(found)} differ:\n" + "\n\n".join(found[:10])


@pytest.mark.parametrize("layout, role, language", cases(("legacy", "analyst", "fr")))
def test_generated_queries_answer_the_same_from_both_schemas(
    twins, layout, role, language, monkeypatch
):
    # EXAMPLES over the twelve (layout, role) cases of the two strategies of the SQLite test.
    monkeypatch.setattr(ni, "EXAMPLES", EXAMPLES)
    pair = twins[layout]
    client = client_for(role)
    found = ni._generated(client, pair, ni.search_url(pair))
    found += ni._generated(client, pair, ni.list_url(pair), language)
    assert not found, f"{len(found)} differ:\n" + "\n\n".join(found[:10])
