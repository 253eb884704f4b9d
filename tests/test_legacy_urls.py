"""The old Datasette URLs on every shape: each maps to the rows Datasette would have shown,
checked against the file with plain SQL."""

from __future__ import annotations

import sqlite3
from urllib.parse import parse_qs, urlsplit

import pytest
from django.urls import reverse

from legacy_app import paging

pytestmark = pytest.mark.django_db(databases=["default", "hermes"])


def sql(path, query, params=()):
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return conn.execute(query, params).fetchall()


def column(path, query, params=()):
    return [r[0] for r in sql(path, query, params)]


def redirected(client, url, params=None):
    response = client.get(url, params or {})
    assert response.status_code == 302, (url, response.status_code)
    return response["Location"]


def query_of(location):
    parts = urlsplit(location)
    return parts.path, parse_qs(parts.query)


def table_ids(response):
    return [row.record.id for row in response.context["table"].rows]


def follow(client, url, params=None):
    response = client.get(url, params or {}, follow=True)
    assert response.status_code == 200
    return response


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
    location = redirected(staff_client, "/state", {"sql": query})
    path, params = query_of(location)
    assert path == reverse("sql:console")
    assert params["sql"] == [query]


# Sessions ------------------------------------------------------------------------------------
def test_sessions_by_source_show_datasettes_rows_with_a_link(staff_client, store):
    # Datasette listed sessions by id; the explorer's list is newest first: not the same
    # order, so the page shows Datasette's rows and links to the explorer's list.
    response = staff_client.get("/state/sessions", {"source": "telegram"})
    assert response.status_code == 200
    assert table_ids(response) == column(
        store.path, "SELECT id FROM sessions WHERE source = 'telegram' ORDER BY id"
    )
    html = response.content.decode()
    assert f'href="{reverse("sessions:list")}?source=telegram"' in html
    assert "Datasette listed sessions by id" in html


@pytest.mark.parametrize(("param", "order"), [("_sort_desc", "DESC"), ("_sort", "ASC")])
def test_sessions_sort_is_carried(staff_client, store, param, order):
    response = follow(staff_client, "/state/sessions", {"source": "cli", param: "started_at"})
    expected = column(
        store.path,
        f"SELECT id FROM sessions WHERE source = 'cli' ORDER BY started_at {order}, id {order}",
    )
    assert table_ids(response) == expected
    sort = response.context["sort"]
    assert sort == ("-started_at" if order == "DESC" else "started_at")


def test_sessions_next_token_continues_after_that_row(staff_client, store):
    rows = sql(store.path, "SELECT started_at, id FROM sessions ORDER BY started_at, id")
    started_at, sid = rows[2]
    location = redirected(
        staff_client, "/state/sessions", {"_sort": "started_at", "_next": f"{started_at},{sid}"}
    )
    response = follow(staff_client, location)
    assert table_ids(response) == [r[1] for r in rows[3:]]


@pytest.mark.parametrize(
    ("params", "where"),
    [
        ({"title__contains": "plan"}, "title LIKE '%plan%'"),
        ({"user_id": "5127340981"}, "user_id = '5127340981'"),
        ({"user_id__exact": "5127340981"}, "user_id = '5127340981'"),
        ({"message_count__gte": "4"}, "message_count >= 4"),
        ({"estimated_cost_usd__lte": "0.01"}, "estimated_cost_usd <= 0.01"),
        ({"source__in": "cron,discord"}, "source IN ('cron', 'discord')"),
    ],
)
def test_session_filters_with_an_explorer_equivalent_link_to_it(staff_client, store, params, where):
    response = staff_client.get("/state/sessions", params)
    assert response.status_code == 200
    assert table_ids(response) == column(
        store.path, f"SELECT id FROM sessions WHERE {where} ORDER BY id"
    )
    closest = response.context["closest"]
    assert closest.startswith(reverse("sessions:list") + "?")
    sorted_params = {**params, "_sort_desc": "started_at"}
    path, _query = query_of(redirected(staff_client, "/state/sessions", sorted_params))
    assert path == reverse("sessions:list")


@pytest.mark.parametrize(
    ("params", "where", "order"),
    [
        ({"message_count__gt": "3"}, "message_count > 3", "id"),
        ({"message_count__lt": "3"}, "message_count < 3", "id"),
        ({"message_count": "4"}, "message_count = 4", "id"),
        ({"ended_at__isnull": "1"}, "ended_at IS NULL", "id"),
        ({"ended_at__notnull": "1"}, "ended_at IS NOT NULL", "id"),
        ({"source__not": "cli"}, "source != 'cli'", "id"),
        ({"title": "Old times"}, "title = 'Old times'", "id"),
        ({"model__endswith": "gpt-5"}, "model LIKE '%gpt-5'", "id"),
        (
            {"started_at__gt": "1767000000", "_sort_desc": "started_at"},
            "started_at > 1767000000",
            "started_at DESC, id DESC",
        ),
        ({"_sort": "id"}, "1", "id"),
        ({"_sort_desc": "id", "_size": "3"}, "1", "id DESC"),
        ({"source": "cli", "_sort": "id"}, "source = 'cli'", "id"),
    ],
)
def test_other_session_filters_are_answered_directly(staff_client, store, params, where, order):
    response = staff_client.get("/state/sessions", params)
    assert response.status_code == 200
    assert response.templates[0].name == "legacy_app/table.html"
    size = int(params.get("_size", 100))
    expected = column(
        store.path, f"SELECT id FROM sessions WHERE {where} ORDER BY {order} LIMIT {size}"
    )
    assert table_ids(response) == expected


def test_direct_pages_follow_datasette_next_tokens(staff_client, store):
    expected = column(store.path, "SELECT id FROM sessions ORDER BY id")
    seen, params = [], {"_sort": "id", "_size": "4"}
    for _ in range(50):
        response = staff_client.get("/state/sessions", params)
        seen += table_ids(response)
        next_url = response.context["next_url"]
        if not next_url:
            break
        params = {k: v[0] for k, v in parse_qs(urlsplit(next_url).query).items()}
    assert seen == expected


def test_session_row_and_id_filter_open_the_session(staff_client, store):
    sid = store.xss_session_id
    assert redirected(staff_client, f"/state/sessions/{sid}") == reverse(
        "sessions:detail", args=[sid]
    )
    assert redirected(staff_client, "/state/sessions", {"id": sid}) == reverse(
        "sessions:detail", args=[sid]
    )


# Messages ------------------------------------------------------------------------------------
def test_messages_of_a_session_are_all_its_rows_in_id_order(staff_client, store):
    sid = store.history_session_id
    response = follow(staff_client, "/state/messages", {"session_id": sid})
    # Datasette showed every row (compacted, rewound, hidden too), by id, 100 per page.
    assert table_ids(response) == column(
        store.path, "SELECT id FROM messages WHERE session_id = ? ORDER BY id LIMIT 100", (sid,)
    )


def test_messages_pages_of_a_long_session(staff_client, store):
    sid = store.big_session_id
    expected = column(
        store.path, "SELECT id FROM messages WHERE session_id = ? ORDER BY id", (sid,)
    )
    response = follow(staff_client, "/state/messages", {"session_id": sid})
    assert table_ids(response) == expected[:100]
    # Datasette's _next for a primary-key order is the last id seen.
    response = follow(staff_client, "/state/messages", {"session_id": sid, "_next": expected[99]})
    assert table_ids(response) == expected[100:200]
    response = follow(staff_client, "/state/messages", {"session_id": sid, "_size": "7"})
    assert table_ids(response) == expected[:7]


@pytest.mark.parametrize(
    ("params", "where", "order"),
    [
        ({"role": "user"}, "role = 'user'", "id"),
        ({"role": "user", "_sort_desc": "id"}, "role = 'user'", "id DESC"),
        ({"tool_name__exact": "terminal"}, "tool_name = 'terminal'", "id"),
    ],
)
def test_message_filters_redirect_to_the_same_rows(staff_client, store, params, where, order):
    location = redirected(staff_client, "/state/messages", params)
    assert location.startswith(reverse("messages:list"))
    response = follow(staff_client, "/state/messages", params)
    assert table_ids(response) == column(
        store.path, f"SELECT id FROM messages WHERE {where} ORDER BY {order} LIMIT 100"
    )


@pytest.mark.parametrize(
    ("params", "where", "order", "limit"),
    [
        ({"id__gt": "400", "_size": "5"}, "id > 400", "id", 5),
        ({"id__lte": "10"}, "id <= 10", "id", 100),
        ({"content__contains": "telegram"}, "content LIKE '%telegram%'", "id", 100),
        (
            {"tool_name__isnull": "1", "role": "tool"},
            "tool_name IS NULL AND role = 'tool'",
            "id",
            100,
        ),
        (
            {"role": "user", "_sort_desc": "timestamp"},
            "role = 'user'",
            "timestamp DESC, id DESC",
            100,
        ),
        ({"role__in": '["user", "tool"]'}, "role IN ('user', 'tool')", "id", 100),
        (
            {"token_count__gte": "10", "token_count__lt": "20"},
            "token_count >= 10 AND token_count < 20",
            "id",
            100,
        ),
    ],
)
def test_other_message_filters_are_answered_directly(
    staff_client, store, params, where, order, limit
):
    response = staff_client.get("/state/messages", params)
    assert response.status_code == 200
    assert response.templates[0].name == "legacy_app/table.html"
    assert table_ids(response) == column(
        store.path, f"SELECT id FROM messages WHERE {where} ORDER BY {order} LIMIT {limit}"
    )


def test_message_row_opens_it_in_its_transcript(staff_client, store):
    location = redirected(staff_client, f"/state/messages/{store.rare_message_id}")
    assert location == reverse(
        "sessions:message", args=[store.rare_session_id, store.rare_message_id]
    )
    assert redirected(staff_client, "/state/messages", {"id": store.rare_message_id}) == location
    assert staff_client.get("/state/messages/999999999").status_code == 404


def test_search_shows_datasettes_rows_and_links_the_search_page(staff_client, store):
    response = staff_client.get("/state/messages", {"_search": store.rare_word})
    assert response.status_code == 200
    assert table_ids(response) == [store.rare_message_id]
    path, params = query_of(response.context["closest"])
    assert path == reverse("search:results") and params["q"] == [store.rare_word]
    within = staff_client.get(
        "/state/messages", {"_search": "telegram", "session_id": store.xss_session_id}
    )
    assert {r.record.session_id for r in within.context["table"].rows} == {store.xss_session_id}
    raw = staff_client.get("/state/messages", {"_search": "a OR b", "_searchmode": "raw"})
    assert query_of(raw.context["closest"])[1]["mode"] == ["advanced"]


# Downloads -----------------------------------------------------------------------------------
def test_csv_and_json_suffixes_answer_datasettes_api_with_the_same_rows(staff_client, store):
    import json

    response = staff_client.get("/state/sessions.json", {"source": "cli", "_size": "max"})
    assert response.status_code == 200
    data = json.loads(response.content)
    assert data["columns"][0] == "id" and data["primary_keys"] == ["id"]
    assert [r[0] for r in data["rows"]] == column(
        store.path, "SELECT id FROM sessions WHERE source = 'cli' ORDER BY id"
    )
    sid = store.xss_session_id
    response = staff_client.get("/state/messages.json", {"session_id": sid, "_size": "max"})
    rows = json.loads(response.content)["rows"]
    assert [r[0] for r in rows] == column(
        store.path, "SELECT id FROM messages WHERE session_id = ? ORDER BY id", (sid,)
    )
    response = staff_client.get("/state/messages.csv", {"session_id": sid, "_stream": "on"})
    assert response.status_code == 200
    lines = b"".join(response.streaming_content).decode().split("\r\n")
    assert lines[0].startswith("id,session_id,role,")


def test_a_download_with_any_filter_gives_datasettes_page_of_rows(staff_client, store):
    response = staff_client.get(
        "/state/messages.csv", {"id__gt": "5", "_size": "3", "_col": "role"}
    )
    assert response.status_code == 200
    lines = b"".join(response.streaming_content).decode().split("\r\n")
    assert lines[0] == "id,role"
    assert [int(line.split(",")[0]) for line in lines[1:4]] == column(
        store.path, "SELECT id FROM messages WHERE id > 5 ORDER BY id LIMIT 3"
    )


# Unknown and bad parameters -------------------------------------------------------------------
def test_unknown_parameters_are_ignored_with_a_note(staff_client, store):
    response = follow(
        staff_client, "/state/sessions", {"source": "cli", "frobnicate": "1", "_facet": "model"}
    )
    html = response.content.decode()
    assert "Unknown parameter “frobnicate”: ignored." in html
    assert "“_facet” has no equivalent here" in html
    assert sorted(table_ids(response)) == sorted(
        column(store.path, "SELECT id FROM sessions WHERE source = 'cli'")
    )
    direct = staff_client.get(
        "/state/messages", {"id__gt": "1", "nosuchcolumn__gt": "3", "role__regex": "x"}
    )
    notes = direct.context["notes"]
    assert any("nosuchcolumn__gt" in n for n in notes)
    assert any("__regex" in n for n in notes)


@pytest.mark.parametrize(
    ("url", "params"),
    [
        ("/state/sessions", {"message_count": "abc"}),
        ("/state/sessions", {"started_at__gt": "yesterday"}),
        ("/state/sessions", {"_next": "garbage", "_sort": "id"}),
        ("/state/sessions", {"_next": "$null,x", "_sort": "started_at"}),
        ("/state/sessions", {"_size": "lots"}),
        ("/state/sessions", {"_sort": "nosuchcolumn"}),
        ("/state/messages", {"_next": "abc"}),
        ("/state/messages", {"id": "abc"}),
        ("/state/messages", {"role": "<script>alert(1)</script>", "id__gt": "0"}),
        ("/state/messages", {"_search": '"unbalanced', "_searchmode": "raw"}),
        ("/state/sessions", {"_search": "x"}),
        ("/state/session_model_usage", {}),
        ("/state/sessions/no/such", {}),
        ("/state/sessions/%2E%2E", {}),
        ("/state/messages.json", {"_shape": "objects", "id__gt": "3"}),
    ],
)
def test_bad_old_urls_never_error(staff_client, store, url, params):
    response = staff_client.get(url, params, follow=True)
    assert response.status_code in (200, 404), (url, params, response.status_code)
    if response.status_code == 200 and hasattr(response, "content"):
        assert "<script>alert(1)</script>" not in response.content.decode()


def test_invalid_values_match_no_row(staff_client, store):
    response = staff_client.get("/state/sessions", {"message_count": "abc"})
    assert table_ids(response) == []
    assert any("not a valid value" in n for n in response.context["notes"])


def test_tilde_encoding_round_trips():
    for value in ("20251230_101500_a1b2c3", "a,b", "1767225600.5", "東京 x/y", "~2C"):
        assert paging.tilde_decode(paging.tilde_encode(value)) == value
    assert paging.tilde_decode("api~2D9f") == "api-9f"


def test_rowid_sort_on_messages_is_the_id(staff_client, store):
    response = follow(staff_client, "/state/messages", {"_sort_desc": "rowid", "role": "user"})
    assert table_ids(response) == column(
        store.path, "SELECT id FROM messages WHERE role = 'user' ORDER BY id DESC LIMIT 100"
    )


def test_a_redirected_session_list_renders_every_row_of_its_page(staff_client, tmp_path):
    from tests.builders import StateDB
    from tests.conftest import use_store

    path = tmp_path / "many.db"
    db = StateDB.create(path, "legacy")
    for i in range(40):
        db.session(f"20251201_0000{i:02d}_aaaaaa", source="telegram", started_at=1_764_547_200 + i)
    db.session("20251202_000000_bbbbbb", source="cli")
    db.close()
    use_store(path)
    response = follow(staff_client, "/state/sessions", {"source": "telegram"})
    body = response.content.decode().split("<tbody", 1)[1].split("</tbody>", 1)[0]
    assert body.count("<tr") == 40
    assert "20251202_000000_bbbbbb" not in body
