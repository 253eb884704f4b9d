"""The old Datasette API and the SQL console on a profile kept in a PostgreSQL schema.

The differential rule: a URL on ``/p/team/…`` (the schema) answers the same rows and figures
as on ``/p/file/…`` (the SQLite file the schema was loaded from).
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest

from hermes_fixtures.demo.builder import build_demo_db
from legacy_app.api.operators import OPERATORS
from legacy_app.api.tokens import tilde_encode
from tests.builders import NASTY_NOW, StateDB
from tests.hermes_pg import hermes_pg as hermes_pg_server  # noqa: F401
from tests.test_noninterference import LONG  # noqa: E402
from tests.test_pg_door import at, serve  # noqa: F401

pytestmark = pytest.mark.django_db(databases="__all__")


@pytest.fixture
def pg(hermes_pg_server):  # noqa: F811
    return hermes_pg_server


# Every layout in the long mode (``HERMES_TWIN_EXAMPLES=5000``); the current one by default.
@pytest.fixture(params=["current", "legacy", "doc"] if LONG else ["current"])
def both(request, pg, serve, client, staff_user):  # noqa: F811
    shape = request.param
    serve(file=pg.stores[shape].path, team=at(pg.reader_url, pg.schema(shape)))
    client.force_login(staff_user)
    return client


def body(response) -> bytes:
    if response.streaming:
        return b"".join(response.streaming_content)
    return response.content


def answer(response):
    """What a response says, without what differs by nature (timings, the server's host)."""
    text = body(response)
    if "json" not in response["Content-Type"]:
        return response.status_code, text.replace(b"/p/team/", b"/p/file/")
    data = json.loads(text.replace(b"/p/team/", b"/p/file/"))
    if isinstance(data, dict):
        # The schema's catalog names no foreign keys; each server words its errors its way.
        for key in ("query_ms", "query", "expandable_columns", "error"):
            data.pop(key, None)
    return response.status_code, data


def explain(a, b) -> str:
    """Where two answers differ first."""
    if a[0] != b[0] or not isinstance(a[1], dict) or not isinstance(b[1], dict):
        return f"{a[0]} {str(a[1])[-300:]} != {b[0]} {str(b[1])[-300:]}"
    for key in a[1]:
        if a[1][key] != b[1].get(key):
            if key == "rows":
                for x, y in zip(a[1]["rows"], b[1]["rows"], strict=False):
                    if x != y:
                        return f"row {x} != {y}"
                return f"{len(a[1]['rows'])} rows != {len(b[1]['rows'])}"
            return f"{key}: {str(a[1][key])[:300]} != {str(b[1].get(key))[:300]}"
    return "?"


def probe(client, url):
    a = client.get("/p/file" + url)
    b = client.get("/p/team" + url)
    return answer(a), answer(b)


def common_columns(client, table: str) -> list[str]:
    """The columns ``table`` has on both sides (Hermes's PostgreSQL layout has its own)."""
    sides = [
        json.loads(client.get(f"/p/{side}/state/{table}.json?_size=0").content)["columns"]
        for side in ("file", "team")
    ]
    return [c for c in sides[0] if c in sides[1]]


def same(client, table: str, query: str = "") -> dict:
    """The JSON of ``/state/<table>.json?<query>`` on the file and on the schema, asserted
    equal on the columns both have; returns the file's."""
    cols = "&".join(f"_col={c}" for c in common_columns(client, table))
    url = f"/state/{table}.json?{cols}&{query}"
    a, b = probe(client, url)
    assert a == b, (url, explain(a, b))
    assert a[0] in (200, 400), url
    return a[1]


# Columns of each type, with values that match some rows, none, and the other type.
COLUMNS = {
    "sessions": {
        "title": ["Migration plan, part 1", "migration%", "*plan*", "a", "2"],
        "source": ["cli", "CLI", "t?l*", "[ct]*", "3"],
        "message_count": ["2", "2.0", "3", "abc", "1e1"],
        "started_at": ["1763769600", "1763769600.0", "1.7e9", "x"],
        "estimated_cost_usd": ["0.000625", "1.125", "0"],
        "model_config": ['{"a": 1}', "1"],
    },
    "messages": {
        "role": ["user", "ASSISTANT", "tool", "u%"],
        "content": ["%alert%", "*HTML*", "hello", "Posted"],
        "token_count": ["13", "12.5", "abc"],
        "tool_calls": ["terminal", "web_search", "x"],
        "timestamp": ["1767052810", "1767052810.0"],
        "active": ["1", "0", "yes"],
    },
}


@pytest.mark.parametrize("op", sorted(OPERATORS))
def test_every_operator_on_every_column_type_gives_the_files_rows(both, op):
    for table, columns in COLUMNS.items():
        common = common_columns(both, table)
        for column, values in columns.items():
            if column not in common:
                continue
            if OPERATORS[op].no_argument:
                values = ["1"]
            for value in values:
                if op in ("in", "notin"):
                    value = f'["{value}", 2, null]' if value != "abc" else f"{value},3"
                if op == "date":
                    value = "2025-11-22"
                same(both, table, urlencode({f"{column}__{op}": value}))


def walk(client, side: str, url: str) -> list:
    """Every page of a ``next_url`` loop from ``url`` on one side."""
    pages, url = [], f"/p/{side}{url}"
    while url:
        data = json.loads(client.get(url).content)
        pages.append((data["rows"], data["next"]))
        url = data["next_url"] and data["next_url"].partition("testserver")[2]
        assert len(pages) < 400, url
    return pages


SORTS = [
    ("sessions", "_sort=title"),
    ("sessions", "_sort_desc=title"),
    ("sessions", "_sort=started_at"),
    ("sessions", "_sort_desc=message_count"),
    ("sessions", "_sort=estimated_cost_usd&source__not=cli"),
    ("sessions", "_sort_desc=id"),
    ("messages", "_sort=role"),
    ("messages", "_sort_desc=timestamp&role__in=user,tool"),
    ("messages", "_sort=tool_name"),
]


@pytest.mark.parametrize("table,query", SORTS)
def test_sort_walks_with_next_give_the_files_pages(both, table, query):
    cols = "&".join(f"_col={c}" for c in common_columns(both, table))
    url = f"/state/{table}.json?{cols}&_size=7&{query}"
    file_pages = walk(both, "file", url)
    assert walk(both, "team", url) == file_pages
    rows = [row for page, _ in file_pages for row in page]
    assert len({row[0] for row in rows}) == len(rows)


FACETS = [
    ("sessions", "_facet=source&_facet=model&_facet=title"),
    ("sessions", "_facet_date=started_at&_facet=message_count&_facet_size=3"),
    ("sessions", "_facet=user_id&source=cli"),
    ("messages", "_facet=role&_facet=tool_name&role=assistant"),
]


@pytest.mark.parametrize("table,query", FACETS)
def test_facets_count_as_on_the_file(both, table, query):
    data = same(both, table, query)
    assert data["facet_results"]


def test_html_and_csv_pages_give_the_files_rows(both):
    cols = "&".join(f"_col={c}" for c in common_columns(both, "sessions"))
    for url in (
        f"/state/sessions.csv?{cols}&_sort=title",
        f"/state/sessions.csv?{cols}&_stream=on&source__not=cli",
    ):
        a, b = probe(both, url)
        assert a == b, url
    # The page names its profile: the same rows are there.
    url = f"/state/sessions?{cols}&_sort=title&_facet=source&_size=5"
    a, b = probe(both, url)
    assert a[0] == b[0] == 200
    first = same(both, "sessions", "_sort=title&_size=5")["rows"][0][0]
    assert first.encode() in a[1] and first.encode() in b[1]
    assert probe(both, "/state/messages/1.json")[1][0] == 200


@pytest.mark.parametrize("query", ["", "&_sort=input_tokens", "&_sort_desc=model"])
def test_an_analyst_walks_the_usage_rows_by_their_place_on_a_schema(pg, serve, query):  # noqa: F811
    """The usage rows' key holds text shown redacted, so a reader who cannot reveal reads them
    keyed by rowid on a file; a PostgreSQL table has none, the row's place (``ctid``) keys it:
    the same rows, page by page, and each row's own URL answers."""
    from tests.roles_helpers import client_for

    serve(file=pg.stores["current"].path, team=at(pg.reader_url, pg.schema("current")))
    client = client_for("analyst")
    url = f"/state/session_model_usage.json?_size=2{query}"
    pages = {side: walk(client, side, url) for side in ("file", "team")}
    # The first value of a row is its rowid, or its place on the schema.
    assert [[r[1:] for r in rows] for rows, _ in pages["team"]] == [
        [r[1:] for r in rows] for rows, _ in pages["file"]
    ]
    assert len(pages["file"]) > 2
    place = pages["team"][0][0][0][0]
    row = client.get(f"/p/team/state/session_model_usage/{tilde_encode(place)}.json")
    assert row.status_code == 200
    assert json.loads(row.content)["rows"][0][1:] == pages["team"][0][0][0][1:]


SECRET_SID = "20260101_080000_5ec7e7"
API_KEY = "sk-proj-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv"


def test_a_key_in_a_title_is_redacted_and_no_filter_confirms_it_on_a_schema(
    pg,
    serve,  # noqa: F811
    client,
    staff_user,
    tmp_path,
):
    path = tmp_path / "titled.db"
    with StateDB.create(path, "current") as db:
        db.session(SECRET_SID, source="cli", title=f"use {API_KEY} here", started_at=NASTY_NOW)
        for n in range(6):
            db.session(f"20260101_0{n}0000_aaaaa{n}", source="cli", title=f"plain {n}")
    pg.load(path, "legacy_titled")
    serve(file=str(path), team=at(pg.reader_url, "legacy_titled"))
    client.force_login(staff_user)
    for url in (
        "/state/sessions.json?_col=title&_sort=title&_size=2",
        "/state/sessions.json?_col=title&_facet=title",
        "/state/sessions.json?_col=title&title__contains=redacted",
        "/state/sessions.json?_col=title&title__not=use+%5Bredacted%3A+openai+key%5D+here",
    ):
        assert walk(client, "team", url) == walk(client, "file", url), url
        assert API_KEY[8:20] not in body(client.get("/p/team" + url)).decode()
    for probe_ in (
        {"title__contains": API_KEY[:14]},
        {"title__startswith": f"use {API_KEY[:12]}"},
        {"title": f"use {API_KEY} here"},
        {"title__gte": f"use {API_KEY[:10]}"},
        {"title__glob": f"*{API_KEY[8:12]}*"},
    ):
        got = json.loads(client.get("/p/team/state/sessions.json", probe_).content)
        assert got["rows"] == [], probe_


def test_a_demo_store_answers_the_same_from_its_schema(
    pg,
    serve,  # noqa: F811
    client,
    staff_user,
    tmp_path,
):
    path = tmp_path / "demo.db"
    build_demo_db(path, sessions=40, messages=1500, seed=7, now=NASTY_NOW)
    pg.load(path, "legacy_demo")
    serve(file=str(path), team=at(pg.reader_url, "legacy_demo"))
    client.force_login(staff_user)
    for table, query in [*SORTS, *FACETS, ("messages", "_facet_array=tool_calls")]:
        same(client, table, query + "&_size=50")
    for query in ("content__contains=error", "tool_name__glob=*_*", "token_count__gte=100"):
        same(client, "messages", query)


# --- The SQL console on a schema ------------------------------------------------------------


@pytest.fixture
def console(pg, serve, client, staff_user):  # noqa: F811
    serve(team=at(pg.reader_url, "hermes_current"))
    client.force_login(staff_user)

    def run(sql: str, **params):
        return client.post("/p/team/sql/", {"sql": sql, **params})

    return run


@pytest.mark.render_context
def test_the_console_reads_a_schema_in_postgresqls_dialect(console, pg):
    page = console(
        "SELECT count(*) AS n, sum(message_count)::bigint AS m, 'a%b' AS pct, now()::date::text "
        "AS today, :who AS who FROM sessions WHERE id <> :who",
        who="x",
    )
    assert page.status_code == 200, page.content[:500]
    assert page.context["error"] is None
    (row,) = page.context["rows"]
    assert row[0]["text"] == str(len(pg.stores["current"].session_ids))
    assert row[2]["text"] == "a%b" and row[4]["text"] == "x"
    # PostgreSQL allows a select list of no columns: its rows show, none of its cells.
    empty = console("SELECT FROM sessions LIMIT 3")
    assert empty.status_code == 200 and empty.context["error"] is None, empty.content[:500]
    assert [list(r) for r in empty.context["rows"]] == [[], [], []]
    casts = console("SELECT 1.5::numeric AS a, '{\"k\": 1}'::jsonb AS b, 2::numeric AS c")
    assert [c["text"] for c in casts.context["rows"][0]] == ["1.5", '{"k": 1}', "2"]


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO sessions (id, source, started_at) VALUES ('x', 'cli', 1)",
        "SET TRANSACTION READ WRITE; INSERT INTO sessions (id, source, started_at) "
        "VALUES ('x', 'cli', 1)",
        "SELECT 1; DELETE FROM messages",
        "COPY sessions TO STDOUT",
        "SELECT lo_create(0)",
        "SELECT set_config('transaction_read_only', 'off', true)",
        "CREATE FUNCTION hermes_x() RETURNS int LANGUAGE sql AS 'SELECT 1'",
        "WITH gone AS (DELETE FROM messages RETURNING id) SELECT count(*) FROM gone",
        "SELECT dblink_exec('dbname=explorer', 'DELETE FROM hermes_current.messages')",
        "SELECT nextval('messages_id_seq')",
    ],
)
@pytest.mark.render_context
def test_every_write_through_the_console_is_refused_and_the_schema_unchanged(console, pg, sql):
    from tests.test_pg_door import snapshot

    before = snapshot(pg)
    page = console(sql)
    assert page.status_code == 400, page.content[:300]
    assert page.context["error"]
    assert snapshot(pg) == before


@pytest.mark.render_context
def test_the_console_stops_a_statement_at_its_timeout_and_caps_rows(console, settings):
    settings.HERMES_SQL_TIMEOUT = 0.5
    page = console("SELECT pg_sleep(5)")
    assert page.status_code == 400 and "limit" in page.context["error"]
    settings.HERMES_SQL_TIMEOUT, settings.HERMES_SQL_MAX_ROWS = 5, 25
    page = console("SELECT m.id FROM messages m, messages n, messages o")
    assert page.status_code == 200 and len(page.context["rows"]) == 25
    assert page.context["result"].truncated


@pytest.mark.parametrize("slug", ["sessions-with-cost", "stats-per-channel", "search-messages"])
@pytest.mark.render_context
def test_the_canned_queries_have_a_postgresql_version(console, client, slug):
    page = client.post("/p/team/sql/", {"query": slug, "keyword": "hello"})
    assert page.status_code == 200 and page.context["error"] is None, page.context["error"]
    listed = client.get("/p/team/sql/saved/").content.decode()
    assert "search-messages-fts" not in listed and slug in listed


def test_where_runs_through_the_console_on_a_schema(both):
    data = same(both, "sessions", "_where=message_count+>+2&_sort=started_at&title__contains=a")
    assert data["rows"]
    assert same(both, "sessions", "_where=nosuch+>+1")["status"] == 400


def test_the_database_json_counts_each_table_as_the_file(both):
    tables = [
        {
            t["name"]: t["count"]
            for t in json.loads(both.get(f"/p/{side}/state.json").content)["tables"]
        }
        for side in ("file", "team")
    ]
    for name in ("sessions", "messages", "schema_version"):
        assert tables[0][name] == tables[1][name], name
    row = probe(both, "/state/messages/1.json?_col=id")
    assert row[0][0] == row[1][0] == 200
