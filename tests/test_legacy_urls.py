"""The old Datasette URLs on every shape: a page shows exactly the rows its ``.json`` gives (one
engine), which are Datasette's rows, checked against the file with plain SQL."""

from __future__ import annotations

import re
import sqlite3
from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest
from django.urls import reverse

from legacy_app.api.tokens import tilde_decode, tilde_encode

pytestmark = pytest.mark.django_db(databases=["default", "hermes"])


def sql(path, query, params=()):
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return conn.execute(query, params).fetchall()


def column(path, query, params=()):
    return [r[0] for r in sql(path, query, params)]


def page_rows(response) -> list[list[str]]:
    """The cells of the page's table, as text."""
    assert response.status_code == 200, response.status_code
    body = response.content.decode().split("<tbody", 1)[1].split("</tbody>", 1)[0]
    rows = []
    for row in re.findall(r"<tr>(.*?)</tr>", body, re.S):
        cells = re.findall(r"<td>(.*?)</td>", row, re.S)
        rows.append([unescape(re.sub(r"<[^>]+>", "", c)) for c in cells])
    return [r for r in rows if r and "No rows." not in r[0]]


def api_rows(client, url, params) -> list[list[str]]:
    """The same URL's rows from the API, as the page writes them."""
    data = client.get(url + ".json", {**params, "_shape": "arrays"}).json()

    def text(value):
        if value is None:
            return "—"
        if isinstance(value, dict):
            value = value.get("label", value.get("value"))
        value = str(value)
        return value if len(value) <= 300 else value[:300] + "…"

    return [[text(v) for v in row] for row in data["rows"]]


# The database page and its SQL ---------------------------------------------------------------
@pytest.mark.parametrize("url", ["/state", "/state/"])
def test_database_page_lists_the_tables(staff_client, store, url):
    response = staff_client.get(url)
    assert response.status_code == 200
    html = response.content.decode()
    for target in (reverse("sessions:list"), reverse("messages:list"), reverse("search:results")):
        assert f'href="{target}"' in html


def test_database_page_links_the_console_for_roles_that_may_use_it(store):
    from tests.roles_helpers import client_for

    console = f'href="{reverse("sql:console")}"'
    assert console in client_for("staff").get("/state").content.decode()
    assert console not in client_for("analyst").get("/state").content.decode()


def test_state_sql_goes_to_the_console_with_the_query(staff_client, store):
    query = "SELECT title, source FROM sessions LIMIT 3"
    response = staff_client.get("/state", {"sql": query})
    assert response.status_code == 302
    parts = urlsplit(response["Location"])
    assert parts.path == reverse("sql:console")
    assert parse_qs(parts.query)["sql"] == [query]


# One engine: the page is the API's rows ------------------------------------------------------
SAME_ROWS = [
    ("/state/sessions", {}),
    ("/state/sessions", {"source": "telegram", "_sort_desc": "started_at"}),
    ("/state/sessions", {"source": "telegram", "_sort": "started_at"}),
    ("/state/sessions", {"message_count__gte": "3", "_sort": "message_count"}),
    ("/state/sessions", {"end_reason__not": "idle", "_sort": "started_at"}),
    ("/state/sessions", {"source__in": "cli,telegram", "_size": "3"}),
    ("/state/sessions", {"title__contains": "a", "_size": "5"}),
    ("/state/sessions", {"source__glob": "te*"}),
    ("/state/sessions", {"source__like": "%li%"}),
    ("/state/sessions", {"title__isnull": "1"}),
    ("/state/sessions", {"_sort": "title", "_size": "4"}),
    ("/state/sessions", {"_facet": "source"}),
    ("/state/sessions", {"_where": "message_count > 2"}),
    ("/state/messages", {}),
    ("/state/messages", {"role": "user", "_sort_desc": "id"}),
    ("/state/messages", {"role__in": "tool,assistant", "_size": "7"}),
    ("/state/messages", {"id__gt": "5", "id__lt": "40"}),
    ("/state/messages", {"_search": "the"}),
    ("/state/session_model_usage", {}),
    ("/state/session_model_usage", {"_sort_desc": "input_tokens"}),
    ("/state/session_daily_usage", {}),
    ("/state/schema_version", {}),
    ("/state/state_meta", {}),
]


@pytest.mark.parametrize("url, params", SAME_ROWS)
def test_a_page_shows_the_rows_its_json_gives(staff_client, store, url, params):
    table = url.rsplit("/", 1)[1]
    if not sql(store.path, "SELECT 1 FROM sqlite_master WHERE name = ?", (table,)):
        assert staff_client.get(url, params).status_code == 404
        return
    page = page_rows(staff_client.get(url, params))
    assert page == api_rows(staff_client, url, params)


def test_pages_follow_datasettes_next_tokens(staff_client, store):
    params = {"_sort": "started_at", "_size": "4"}
    seen, url, pages = [], "/state/sessions", 0
    while url and pages < 50:
        response = staff_client.get(url, params if pages == 0 else None)
        seen += [r[0] for r in page_rows(response)]
        found = re.search(r'rel="next" href="([^"]+)"', response.content.decode())
        url = unescape(found.group(1)) if found else None
        pages += 1
    assert seen == column(store.path, "SELECT id FROM sessions ORDER BY started_at, id")


def test_the_page_shows_facets_counts_and_a_link_to_the_explorer(staff_client, store):
    html = staff_client.get("/state/sessions", {"_facet": "source", "source": "cli"}).content
    html = html.decode()
    assert "Facet source" in html
    (n,) = sql(store.path, "SELECT count(*) FROM sessions WHERE source = 'cli'")[0]
    assert f"{n} row" in html
    assert 'href="/sessions/?source=cli"' in html


def test_ids_open_their_explorer_pages(staff_client, store):
    sid = column(store.path, "SELECT id FROM sessions ORDER BY id LIMIT 1")[0]
    html = staff_client.get("/state/sessions", {"id": sid}).content.decode()
    assert f'href="/sessions/{sid}/"' in html
    mid, msid = sql(store.path, "SELECT id, session_id FROM messages ORDER BY id LIMIT 1")[0]
    html = staff_client.get("/state/messages", {"id": mid}).content.decode()
    assert f'href="/sessions/{msid}/messages/{mid}/"' in html


def test_a_search_links_the_search_page(staff_client, store):
    html = staff_client.get("/state/messages", {"_search": "hello world"}).content.decode()
    assert 'href="/search/?q=hello%20world"' in html


def test_row_urls_open_the_session_and_the_message(staff_client, store):
    sid = column(store.path, "SELECT id FROM sessions ORDER BY id LIMIT 1")[0]
    response = staff_client.get(f"/state/sessions/{tilde_encode(sid)}")
    assert response.status_code == 302 and response["Location"] == f"/sessions/{sid}/"
    mid, msid = sql(store.path, "SELECT id, session_id FROM messages ORDER BY id LIMIT 1")[0]
    response = staff_client.get(f"/state/messages/{mid}")
    assert response["Location"] == f"/sessions/{msid}/messages/{mid}/"


def test_a_refused_filter_runs_no_query_and_says_why(store):
    from tests.roles_helpers import client_for

    response = client_for("analyst").get("/state/messages", {"content__contains": "sk-"})
    assert response.status_code == 400
    assert "content may hold redacted secrets" in response.content.decode()


@pytest.mark.parametrize(
    "url, params",
    [
        ("/state/sessions", {"_sort": "no_such_column"}),
        ("/state/sessions", {"_size": "lots"}),
        ("/state/sessions", {"message_count": "abc"}),
        ("/state/sessions", {"_next": "garbage,,,"}),
        ("/state/messages", {"role": "<script>alert(1)</script>", "id__gt": "0"}),
        ("/state/messages", {"_search": '"unbalanced', "_searchmode": "raw"}),
        ("/state/sessions", {"_search": "x"}),
        ("/state/sessions/no/such", {}),
        ("/state/sessions/%2E%2E", {}),
        ("/state/nosuchtable", {}),
        ("/state/messages_fts", {}),
    ],
)
def test_bad_old_urls_never_error(staff_client, store, url, params):
    response = staff_client.get(url, params)
    assert response.status_code in (200, 302, 400, 404), (url, params, response.status_code)
    assert "<script>alert(1)</script>" not in response.content.decode()


def test_tilde_encoding_round_trips():
    for value in ("20251230_101500_a1b2c3", "a,b", "1767225600.5", "東京 x/y", "~2C"):
        assert tilde_decode(tilde_encode(value)) == value
    assert tilde_decode("api~2D9f") == "api-9f"
