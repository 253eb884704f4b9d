"""The old Datasette API on /state/…: roles, redaction, no oracle, errors a script can read.

Datasette's own behaviour is checked against the real Datasette in
``tests/test_datasette_differential.py``; these tests check what only the explorer adds.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3

import pytest
from django.db import connections

from accounts_app.models import AuditEvent
from redaction import redact
from tests.builders import NASTY_NOW, StateDB
from tests.conftest import use_store
from tests.roles_helpers import client_for, script_client_for

pytestmark = pytest.mark.django_db(databases=["default", "hermes"])

SECRET_SID = "20260101_080000_5ec7e7"
PLAIN_SID = "20260101_090000_c1ea12"
PROMPT = "You are the deploy bot. The vault passphrase is tangerine-42."
API_KEY = "sk-proj-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv"


@pytest.fixture
def api_store(tmp_path):
    path = tmp_path / "api.db"
    with StateDB.create(path, "current") as db:
        db.session(
            SECRET_SID,
            source="telegram",
            title="Deploy",
            system_prompt=PROMPT,
            model_config={"model": "openai/gpt-5", "api_key": API_KEY},
            started_at=NASTY_NOW - 7200,
        )
        db.session(PLAIN_SID, source="cli", title="Chat", started_at=NASTY_NOW - 3600)
        db.message(SECRET_SID, "user", f"deploy with OPENAI_API_KEY={API_KEY} please")
        db.message(SECRET_SID, "assistant", "Deployed the release.")
        db.message(PLAIN_SID, "user", "hello there, deploy nothing")
        for n in range(30):
            db.message(PLAIN_SID, "assistant", f"line {n} of the weather report")
        db.system_prompt("h1", PROMPT)
        db.refresh_counters()
    use_store(path)
    yield path
    connections["hermes"].close()


def body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def as_json(response):
    return json.loads(body(response))


def column_of(data, name):
    i = data["columns"].index(name)
    return [r[i] for r in data["rows"]]


# Viewers -----------------------------------------------------------------------------------
def test_viewers_read_session_metadata_with_content_columns_null(api_store):
    viewer = client_for("viewer")
    data = as_json(viewer.get("/state/sessions.json"))
    assert "system_prompt" in data["columns"] and "model_config" in data["columns"]
    assert column_of(data, "system_prompt") == [None, None]
    assert column_of(data, "model_config") == [None, None]
    assert column_of(data, "title") == ["Deploy", "Chat"]
    text = body(viewer.get("/state/sessions.csv", {"_stream": "on"})).decode()
    assert "tangerine" not in text and API_KEY not in text and "Deploy" in text
    row = as_json(viewer.get(f"/state/sessions/{SECRET_SID}.json"))
    assert PROMPT not in json.dumps(row)
    prompts = as_json(viewer.get("/state/system_prompts.json"))
    assert column_of(prompts, "prompt") == [None]


@pytest.mark.parametrize(
    "url",
    [
        "/state/messages.json",
        "/state/messages.csv?_stream=on",
        "/state/messages/1.json",
        "/state.json?sql=select+1",
        "/state.csv?sql=select+1",
    ],
)
def test_viewers_are_refused_content_and_sql_with_a_readable_answer(api_store, url):
    response = client_for("viewer").get(url)
    assert response.status_code == 403
    if ".json" in url:
        error = as_json(response)
        assert error["ok"] is False and error["status"] == 403
    else:
        assert response["Content-Type"].startswith("text/plain")


@pytest.mark.parametrize(
    "params",
    [
        {"_facet": "system_prompt"},
        {"_facet": "model_config"},
        {"_sort": "system_prompt"},
        {"system_prompt__gte": "Y"},
        {"_where": "system_prompt like 'You%'"},
        {"_facet_array": "origin_json"},
    ],
)
def test_viewers_cannot_probe_hidden_columns_through_the_api(api_store, params):
    viewer = client_for("viewer")
    response = viewer.get("/state/sessions.json", params)
    assert response.status_code == 400
    error = as_json(response)
    assert error["ok"] is False and SECRET_SID not in json.dumps(error)


# Analysts ----------------------------------------------------------------------------------
def test_analysts_get_redacted_content_in_every_format(api_store):
    analyst = client_for("analyst")
    for url in (
        "/state/messages.json",
        "/state/messages.json?_shape=array",
        "/state/messages.csv",
        "/state/messages.csv?_stream=on",
        "/state/messages/1.json",
        f"/state/sessions/{SECRET_SID}.json",
        "/state/sessions.json?_shape=objects",
    ):
        text = body(analyst.get(url)).decode()
        assert API_KEY not in text and API_KEY[:16] not in text, url
        assert "[redacted" in text, url


def test_a_search_for_a_redacted_key_learns_nothing(api_store):
    analyst = client_for("analyst")
    probes = [API_KEY[8:14] + "*", API_KEY[8:20] + "*", "zzzzzz*"]
    answers = []
    for probe in probes:
        data = as_json(
            analyst.get("/state/messages.json", {"_search": probe, "_searchmode": "raw"})
        )
        answers.append((data["rows"], data["filtered_table_rows_count"]))
    assert answers[0] == answers[1] == answers[2] == ([], 0)
    # Staff's search is Datasette's: the same probe finds the message.
    staff = as_json(
        client_for("staff").get(
            "/state/messages.json", {"_search": probes[0], "_searchmode": "raw"}
        )
    )
    assert staff["filtered_table_rows_count"] == 1
    # A word outside the key still finds it for the analyst, redacted.
    found = as_json(analyst.get("/state/messages.json", {"_search": "please"}))
    assert found["filtered_table_rows_count"] == 1
    assert "[redacted" in json.dumps(found["rows"])


def test_a_search_keeps_paging_past_rows_dropped_by_the_recheck(api_store):
    analyst = client_for("analyst")
    ids, url = [], "/state/messages.json?_search=deploy+OR+weather&_searchmode=raw&_size=4"
    while url:
        data = as_json(analyst.get(url))
        ids += [r[0] for r in data["rows"]]
        url = data["next_url"]
    assert len(ids) == len(set(ids)) == 32
    assert ids == sorted(ids)


def test_a_search_sorted_on_a_column_left_out_pages_through_every_match_once(tmp_path):
    """The re-check fetches more rows after dropping some: it resumes after the last one in
    sort order even when ``_col`` left the sort column out of the rows."""
    path = tmp_path / "sorted.db"
    with StateDB.create(path, "current") as db:
        db.session(PLAIN_SID)
        ids = [
            db.message(
                PLAIN_SID,
                "user",
                f"deploy step {n}" if n % 2 else f"key {API_KEY}",
                timestamp=NASTY_NOW - n,
            )
            for n in range(12)
        ]
    use_store(path)
    analyst, seen = client_for("analyst"), []
    url = "/state/messages.json?_search=deploy+OR+proj&_searchmode=raw&_sort=timestamp"
    url += "&_col=content&_size=3"
    while url and len(seen) <= len(ids):  # a token that starts over would page forever
        data = as_json(analyst.get(url))
        seen += column_of(data, "id")
        url = data["next_url"]
    connections["hermes"].close()
    assert seen == [i for n, i in enumerate(ids) if n % 2][::-1]


@pytest.mark.parametrize(
    "params",
    [
        {"_facet": "content"},
        {"_facet_array": "tool_calls"},
        {"_sort": "content"},
        {"content__contains": "sk-"},
        {"_where": "content like '%sk-%'"},
        {"_search": "deploy", "_facet": "role"},
    ],
)
def test_analysts_cannot_count_or_compare_redacted_text(api_store, params):
    response = client_for("analyst").get("/state/messages.json", params)
    assert response.status_code == 400
    assert as_json(response)["ok"] is False


def test_only_staff_run_sql(api_store):
    for role in ("viewer", "analyst"):
        response = client_for(role).get("/state.json", {"sql": "select 1"})
        assert response.status_code == 403
    # A browser's GET (cookie, no token) runs no SQL: a page elsewhere could make it.
    assert client_for("staff").get("/state.json", {"sql": "select 1"}).status_code == 403
    staff = script_client_for("staff")
    data = as_json(staff.get("/state.json", {"sql": "select model_config from sessions"}))
    assert data["ok"] is True and API_KEY not in json.dumps(data)
    assert AuditEvent.objects.filter(action=AuditEvent.SQL).count() == 1
    refused = staff.get("/state.json", {"sql": "select 1; drop table sessions"})
    assert refused.status_code == 400 and as_json(refused)["ok"] is False
    write = staff.get("/state.json", {"sql": "update sessions set title = 'x'"})
    assert write.status_code == 400


def test_staff_where_runs_through_the_console_read_only(api_store):
    staff = client_for("staff")
    data = as_json(staff.get("/state/sessions.json", {"_where": "source = 'cli'"}))
    assert column_of(data, "id") == [PLAIN_SID]
    attack = staff.get("/state/sessions.json", {"_where": "1) ; attach 'x' as y --"})
    assert attack.status_code == 400 and as_json(attack)["ok"] is False


# Errors ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "url",
    [
        "/state/sessions.json?_size=x",
        "/state/sessions.json?_size=5000",
        "/state/sessions.json?_sort=nope",
        "/state/sessions.json?_shape=nope",
        "/state/sessions.json?_col=nope",
        "/state/sessions.json?source__in=%5Bbroken",
        "/state/sessions.json?_facet=nope",
        "/state/messages.json?_search=%22a&_searchmode=raw",
        "/state/messages.json?_search_nope=a",
        "/state/messages.json?_sort=role&_next=x",
        "/state/messages_fts.json",
        "/state/messages_fts_data.json",
        "/state/messages_fts_cjk.json",
        "/state/messages_fts_src.json",
        "/state/nope.json",
        "/state/sessions/nope.json",
        "/state/session_model_usage/a.json",
        "/state.csv",
        "/state/messages.csv?_stream=on&_next=3",
        "/state.json?sql=select+*+from+messages_fts_cjk",
    ],
)
def test_bad_api_urls_answer_json_or_plain_text_never_html(api_store, url):
    response = script_client_for("staff").get(url)
    assert response.status_code in (200, 400, 404), (url, response.status_code)
    content_type = response["Content-Type"]
    assert "html" not in content_type, url
    if response.status_code != 200 and ".json" in url:
        error = as_json(response)
        # Datasette's error object; an SQL error keeps the query's own keys (no "status").
        assert error["ok"] is False and error["error"]
        assert error.get("status", response.status_code) == response.status_code


def test_a_stream_sends_every_row_once_in_order(api_store, monkeypatch):
    from legacy_app.api import tables

    original = tables.stream

    def small_chunks(*args, **kwargs):
        return original(*args, **{**kwargs, "chunk_size": 7})

    monkeypatch.setattr(tables, "stream", small_chunks)
    text = body(client_for("staff").get("/state/messages.csv", {"_stream": "on"})).decode()
    rows = list(csv.reader(io.StringIO(text)))
    with sqlite3.connect(f"file:{api_store}?mode=ro", uri=True) as conn:
        expected = [r[0] for r in conn.execute("select id from messages order by id")]
    assert rows[0][:3] == ["id", "session_id", "role"]
    assert [int(r[0]) for r in rows[1:]] == expected
    assert redact(f"deploy with OPENAI_API_KEY={API_KEY} please") in text


@pytest.fixture
def tied_store(tmp_path):
    """Sessions whose ids run against their insertion order, tied on ``end_reason`` (and one
    NULL): SQLite's order for the ties is not the key order."""
    path = tmp_path / "tied.db"
    with StateDB.create(path, "current") as db:
        for sid, reason in [
            ("s-c", "idle"),
            ("s-a", "idle"),
            ("s-d", None),
            ("s-b", "idle"),
            ("s-e", "compression"),
        ]:
            db.session(sid, end_reason=reason)
    use_store(path)
    yield path
    connections["hermes"].close()


@pytest.mark.parametrize(
    ("query", "ids", "next_token"),
    [
        # Ascending: equal values with a greater key, then greater values.
        ("_sort=end_reason&_next=idle,s-a&_size=3", ["s-b", "s-c"], None),
        ("_sort=end_reason&_next=compression,s-e&_size=2", ["s-a", "s-b"], "idle,s-b"),
        # NULLs come first ascending: after one, the rest of the NULLs by key, then the values.
        ("_sort=end_reason&_next=$null,s-d&_size=5", ["s-e", "s-a", "s-b", "s-c"], None),
        # Descending: equal values with a greater key (ascending), smaller values, then NULLs.
        ("_sort_desc=end_reason&_next=idle,s-a&_size=2", ["s-b", "s-c"], "idle,s-c"),
        ("_sort_desc=end_reason&_next=idle,s-c&_size=5", ["s-e", "s-d"], None),
        ("_sort_desc=end_reason&_next=$null,s-a&_size=5", ["s-d"], None),
    ],
)
def test_a_sorted_next_token_resumes_where_datasettes_does(tied_store, query, ids, next_token):
    """A token ``<sort value>,<key>`` is a place in sort-then-key order, whichever page it
    came from: the rows after it are Datasette's, even where the first page showed tied rows
    in SQLite's order."""
    data = as_json(client_for("staff").get(f"/state/sessions.json?{query}"))
    assert column_of(data, "id") == ids
    assert data["next"] == next_token


def test_a_sorted_first_page_is_datasettes_statement(tied_store):
    """The first sorted page is ordered by the sort column alone, as Datasette's was, and its
    token names its last row."""
    data = as_json(client_for("staff").get("/state/sessions.json?_sort=end_reason&_size=3"))
    with sqlite3.connect(f"file:{tied_store}?mode=ro", uri=True) as conn:
        rows = conn.execute("select id, end_reason from sessions order by end_reason limit 3")
        expected = list(rows)
    assert column_of(data, "id") == [sid for sid, _r in expected]
    assert data["next"] == f"{expected[-1][1]},{expected[-1][0]}"


def test_versions_and_database_json(api_store):
    viewer = client_for("viewer")
    versions = as_json(viewer.get("/-/versions.json"))
    assert versions["datasette"]["version"].startswith("0.65")
    assert {"python", "sqlite"} <= set(versions)
    data = as_json(viewer.get("/state.json"))
    names = {t["name"]: t for t in data["tables"]}
    assert {"sessions", "messages", "system_prompts", "state_meta"} <= set(names)
    assert (
        names["messages_fts_cjk"]["hidden"] is True and names["messages_fts_cjk"]["count"] is None
    )
    assert data["allow_execute_sql"] is False


# Metadata ----------------------------------------------------------------------------------
@pytest.fixture
def titled_store(tmp_path):
    path = tmp_path / "titled.db"
    with StateDB.create(path, "current") as db:
        db.session(SECRET_SID, source="cli", title=f"use {API_KEY} here", started_at=NASTY_NOW)
        for n in range(6):
            db.session(f"20260101_0{n}0000_aaaaa{n}", source="cli", title=f"plain {n}")
    use_store(path)
    yield path
    connections["hermes"].close()


@pytest.mark.parametrize("role", ["viewer", "analyst", "staff"])
def test_a_key_pasted_into_a_title_is_redacted_and_no_filter_confirms_it(titled_store, role):
    client = client_for(role)
    for url in (
        "/state/sessions.json",
        "/state/sessions.json?_sort=title&_size=2",
        "/state/sessions.json?_sort_desc=title&_size=1",
        "/state/sessions.json?_facet=title",
        "/state/sessions.csv?_stream=on",
        f"/state/sessions/{SECRET_SID}.json",
    ):
        text = body(client.get(url)).decode()
        assert API_KEY not in text and API_KEY[8:20] not in text, url
    probes = [
        {"title__contains": API_KEY[:14]},
        {"title__startswith": f"use {API_KEY[:12]}"},
        {"title": f"use {API_KEY} here"},
        {"title__gte": f"use {API_KEY[:10]}"},
        {"title__like": f"%{API_KEY[8:12]}%"},
    ]
    for probe in probes:
        assert as_json(client.get("/state/sessions.json", probe))["rows"] == [], probe
    # A negation cannot single the row out either: it stays, whatever the guess.
    kept = as_json(client.get("/state/sessions.json", {"title__not": f"use {API_KEY} here"}))
    assert SECRET_SID in column_of(kept, "id")
    # The loop sorted by title still returns every row once.
    ids, url = [], "/state/sessions.json?_sort=title&_size=2"
    while url:
        data = as_json(client.get(url))
        ids += column_of(data, "id")
        url = data["next_url"]
    assert len(ids) == len(set(ids)) == 7


def test_head_answers_like_get_without_a_body(api_store):
    staff = client_for("staff")
    response = staff.head("/state/sessions.json")
    assert response.status_code == 200 and response.content == b""
    assert staff.post("/state/sessions.json").status_code == 405


def test_newline_delimited_rows_are_served_as_newline_delimited_json(api_store):
    """``_shape=array&_nl=on``: one JSON object per line, with the media type that says so
    (Datasette labelled the same lines ``text/plain``); any other shape stays JSON."""
    staff = client_for("staff")
    response = staff.get("/state/messages.json?_shape=array&_nl=on&_size=2")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/x-ndjson; charset=utf-8"
    lines = body(response).decode().split("\n")
    assert len(lines) == 2 and all(isinstance(json.loads(line), dict) for line in lines)
    joined = staff.get("/state/messages.json?_shape=array&_size=2")
    assert joined["Content-Type"] == "application/json; charset=utf-8"
    assert as_json(joined) == [json.loads(line) for line in lines]
    objects = staff.get("/state/messages.json?_shape=objects&_nl=on&_size=2")
    assert objects["Content-Type"] == "application/json; charset=utf-8"
