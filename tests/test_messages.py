"""The message table on every shape: filters match SQL, keyset pages, visibility, previews cut
in SQL, escaping, a pinned query count, and a filter that runs out of time."""

from __future__ import annotations

import sqlite3
from urllib.parse import urlencode

import pytest
from django.db import connections
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from sessions_app.querysets import PREVIEW_READ_CHARS
from sessions_app.views import messages as message_views

pytestmark = [pytest.mark.django_db(databases=["default", "hermes"]), pytest.mark.render_context]


def sql(path, query, params=()):
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return conn.execute(query, params).fetchall()


def ids_of(path, where="1", params=(), order="id DESC", limit=50):
    return [
        r[0]
        for r in sql(
            path, f"SELECT id FROM messages m WHERE {where} ORDER BY {order} LIMIT {limit}", params
        )
    ]


def live(store) -> str:
    """The live-transcript condition, on the shapes that have history edits."""
    if store.shape != "current":
        return "1"
    return "(active = 1) AND (display_kind IS NULL OR display_kind <> 'hidden')"


def get(client, **params):
    response = client.get(reverse("messages:list") + "?" + urlencode(params, doseq=True))
    assert response.status_code == 200
    return response


def table_ids(response) -> list[int]:
    return [row.record.id for row in response.context["table"].rows]


def all_pages(client, **params) -> list[int]:
    ids, cursor = [], None
    for _ in range(1000):
        query = dict(params, **({"cursor": cursor} if cursor else {}))
        response = get(client, **query)
        ids += table_ids(response)
        page = response.context["page"]
        if not page or not page.next_cursor:
            return ids
        cursor = page.next_cursor
    raise AssertionError("pagination did not end")


# Rows and filters, checked against SQL -------------------------------------------------------
def test_default_page_is_the_newest_live_messages(staff_client, store):
    response = get(staff_client)
    assert table_ids(response) == ids_of(store.path, live(store))
    assert response.context["count"] is None  # no unbounded count over all messages


@pytest.mark.parametrize(
    ("params", "where"),
    [
        ({"role": "user"}, "role = 'user'"),
        ({"role": "tool"}, "role = 'tool'"),
        ({"tool_name": "terminal"}, "tool_name = 'terminal'"),
        (
            {"source": "telegram"},
            "session_id IN (SELECT id FROM sessions WHERE source = 'telegram')",
        ),
        (
            {"source": ["cron", "discord"]},
            "session_id IN (SELECT id FROM sessions WHERE source IN ('cron', 'discord'))",
        ),
        ({"date_to": "2025-12-29"}, "timestamp < 1767052800"),
        ({"date_from": "2025-12-31"}, "timestamp >= 1767139200"),
        ({"role": "nosuchrole"}, "0"),
    ],
)
def test_filters_give_the_rows_sql_gives(staff_client, store, settings, params, where):
    settings.TIME_ZONE = "UTC"
    response = get(staff_client, **params)
    assert table_ids(response) == ids_of(store.path, f"{live(store)} AND {where}")


def test_session_filter_pages_through_the_whole_session(staff_client, store):
    expected = ids_of(
        store.path, "session_id = ?", (store.big_session_id,), order="id", limit=10_000
    )
    assert len(expected) == store.big_session_messages
    assert all_pages(staff_client, session_id=store.big_session_id, sort="id") == expected
    newest = all_pages(staff_client, session_id=store.big_session_id)
    assert newest == expected[::-1]
    response = get(staff_client, session_id=store.big_session_id)
    count = response.context["count"]
    assert count.value == store.big_session_messages and not count.capped
    assert response.context["filtered_session"].id == store.big_session_id


def test_page_size_and_cursor_walk_the_whole_table(staff_client, store):
    expected = ids_of(store.path, live(store), order="id DESC", limit=100_000)
    assert all_pages(staff_client, size=200) == expected


def test_visibility_shows_history_edits_only_when_asked(staff_client, current_store):
    s = current_store
    history = s.history_session_id

    def shown(**params):
        return set(table_ids(get(staff_client, session_id=history, **params)))

    default = shown()
    assert s.hidden_message_id not in default
    assert not default & set(s.compacted_message_ids)
    assert not default & set(s.rewound_message_ids)
    assert set(s.compacted_message_ids) <= shown(show="compacted")
    assert set(s.rewound_message_ids) <= shown(show="rewound")
    assert s.hidden_message_id in shown(show="hidden")
    everything = shown(show=["compacted", "rewound", "hidden"])
    assert everything == set(ids_of(s.path, "session_id = ?", (history,), limit=1000))


def test_rows_link_into_their_transcript_and_show_their_session(staff_client, store):
    response = get(staff_client, session_id=store.rare_session_id, role="user")
    row = next(r for r in response.context["table"].rows if r.record.id == store.rare_message_id)
    url = reverse("sessions:message", args=[store.rare_session_id, store.rare_message_id])
    assert row.record.message_url == url
    html = response.content.decode()
    assert f'href="{url}"' in html
    assert "Tidy the backup scripts" in html
    assert store.rare_word in html


def test_content_is_cut_in_sql_and_markup_is_escaped(staff_client, store):
    response = get(staff_client, session_id=store.megabyte_session_id)
    mega = next(
        r.record for r in response.context["table"].rows if r.record.id == store.megabyte_message_id
    )
    # Cut in SQL (read a little past the shown length so that redaction sees whole secrets).
    assert len(mega.preview) <= PREVIEW_READ_CHARS
    assert len(response.content) < 200_000
    html = get(staff_client, session_id=store.xss_session_id).content.decode()
    for payload in store.xss_payloads:
        assert payload not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    title = store.xss_title
    assert title not in html


# Cost of the page ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "params",
    [{}, {"role": "user"}, {"source": "telegram"}, {"size": 5}, {"size": 500}],
)
def test_query_count_is_pinned_and_independent_of_page_size(staff_client, store, params):
    get(staff_client)  # warm the cached facet lists
    with CaptureQueriesContext(connections["hermes"]) as queries:
        get(staff_client, **params)
    assert len(queries) <= 2, [q["sql"][:120] for q in queries]


def test_session_filtered_page_costs_a_few_indexed_queries(staff_client, store):
    get(staff_client)
    with CaptureQueriesContext(connections["hermes"]) as queries:
        get(staff_client, session_id=store.big_session_id, size=500)
    # the session's title, the capped count, the page
    assert len(queries) <= 4, [q["sql"][:120] for q in queries]
    plans = [
        sql(store.path, "EXPLAIN QUERY PLAN " + q["sql"].replace("%s", "?"), ())
        for q in queries
        if "COUNT" in q["sql"].upper() and "?" not in q["sql"] and "%s" not in q["sql"]
    ]
    assert plans
    for plan in plans:
        assert any("INDEX" in str(step) for step in plan)


# A filter that scans too long ------------------------------------------------------------------
def test_a_filter_that_runs_out_of_time_says_so_on_the_page(staff_client, store, monkeypatch):
    monkeypatch.setattr(message_views.MessageListView, "page_budget", 0.0)
    # Check the deadline at every SQLite step so that even a small fixture runs out of time.
    monkeypatch.setattr("hermes_explorer.hermes_db.base.PROGRESS_STEPS", 1)
    connections["hermes"].close()
    response = get(staff_client, role="system", tool_name="terminal")
    assert response.context["timed_out"] is True
    html = response.content.decode()
    assert "ran out of time" in html
    assert 'value="terminal"' in html  # the form keeps the filters
    assert list(response.context["table"].rows) == []


# Bad input -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "params",
    [
        {"sort": "random()"},
        {"cursor": "garbage"},
        {"cursor": "eyJrIjoiLWlkIiwiZCI6Im4iLCJ2IjpbeyJ4IjoxfV19"},
        {"size": "abc"},
        {"size": "-5"},
        {"size": "99999999999999999999"},
        {"date_from": "yesterday"},
        {"date_to": "9999-12-31"},
        {"role": "<script>alert(1)</script>"},
        {"source": ["<b>", "nope"]},
        {"session_id": "../../etc/passwd"},
        {"session_id": "x" * 500},
        {"show": "everything"},
        {"_export": "xml"},
    ],
)
def test_bad_input_gives_a_page_not_an_error(staff_client, store, params):
    response = get(staff_client, **params)
    assert "<script>alert(1)</script>" not in response.content.decode()


def test_q_on_the_message_table_goes_to_search_with_the_filters(staff_client, store):
    response = staff_client.get(
        reverse("messages:list"), {"q": "telegram", "role": "user", "sort": "id", "size": 5}
    )
    assert response.status_code == 302
    location = response["Location"]
    assert location.startswith(reverse("search:results"))
    assert "role=user" in location and "q=telegram" in location
    assert "sort=" not in location and "size=" not in location


def test_export_streams_the_filtered_rows(staff_client, store):
    response = staff_client.get(
        reverse("messages:list"), {"session_id": store.xss_session_id, "_export": "jsonl"}
    )
    assert response.status_code == 200
    lines = b"".join(response.streaming_content).decode().splitlines()
    import json

    exported = [json.loads(line)["id"] for line in lines]
    assert exported == ids_of(
        store.path, f"{live(store)} AND session_id = ?", (store.xss_session_id,)
    )


@pytest.mark.parametrize("rare_limit", [0, 10_000])
def test_source_filter_gives_the_same_rows_with_either_plan(
    staff_client, store, monkeypatch, rare_limit
):
    from sessions_app.filters import MessageFilter

    monkeypatch.setattr(MessageFilter, "RARE_SOURCE_SESSIONS", rare_limit)
    where = "session_id IN (SELECT id FROM sessions WHERE source IN ('telegram', 'cli'))"
    expected = ids_of(store.path, f"{live(store)} AND {where}", limit=100_000)
    assert all_pages(staff_client, source=["telegram", "cli"], size=7) == expected
    assert table_ids(get(staff_client, source="nosuchsource")) == []


def test_the_form_starts_with_no_role_chosen(staff_client, store):
    html = get(staff_client).content.decode()
    role_select = html.split('name="role"', 1)[1].split("</select>", 1)[0]
    assert '<option value="" selected>any</option>' in role_select
