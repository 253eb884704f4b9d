"""The sessions browser, the session page and the overview, on every shape of state.db."""

from __future__ import annotations

import base64
import json
import sqlite3
from urllib.parse import urlencode

import pytest
from django.urls import reverse

from sessions_app.selectors import TRANSCRIPT_PAGE
from tests.builders import StateDB
from tests.conftest import use_store

pytestmark = [pytest.mark.django_db(databases=["default", "hermes"]), pytest.mark.render_context]


def sql(path, query, params=()):
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return conn.execute(query, params).fetchall()


def table_ids(response) -> list[str]:
    return [row.record.id for row in response.context["table"].rows]


def all_pages(client, url: str, params: dict) -> list[str]:
    """Follow the keyset pages of the session table to the end."""
    ids, cursor = [], None
    for _ in range(1000):
        query = dict(params, **({"cursor": cursor} if cursor else {}))
        response = client.get(url + "?" + urlencode(query, doseq=True))
        assert response.status_code == 200
        ids += table_ids(response)
        page = response.context["page"]
        if not page or not page.next_cursor:
            return ids
        cursor = page.next_cursor
    raise AssertionError("pagination did not end")


# Every page, every shape ----------------------------------------------------------------------
def test_overview_lists_sources_and_latest_sessions(staff_client, store):
    response = staff_client.get("/")
    assert response.status_code == 200
    sources = {row["source"]: row["sessions"] for row in response.context["sources"]}
    assert sources == dict(sql(store.path, "SELECT source, COUNT(*) FROM sessions GROUP BY source"))
    latest = [row.record.id for row in response.context["latest"].rows]
    assert latest == [
        r[0]
        for r in sql(
            store.path, "SELECT id FROM sessions ORDER BY started_at DESC, id DESC LIMIT 12"
        )
    ]
    assert str(store.path) in response.content.decode()


def test_session_list_shows_newest_first_on_every_shape(staff_client, store):
    response = staff_client.get(reverse("sessions:list"))
    assert response.status_code == 200
    expected = [
        r[0]
        for r in sql(
            store.path, "SELECT id FROM sessions ORDER BY started_at DESC, id DESC LIMIT 50"
        )
    ]
    assert table_ids(response) == expected


def test_every_session_page_renders_on_every_shape(staff_client, store):
    for (session_id,) in sql(store.path, "SELECT id FROM sessions"):
        response = staff_client.get(reverse("sessions:detail", args=[session_id]))
        assert response.status_code == 200, session_id


def test_unknown_session_is_404(staff_client, store):
    assert staff_client.get("/sessions/no-such-session/").status_code == 404
    assert staff_client.get("/sessions/..%2F..%2Fetc%2Fpasswd/").status_code == 404


def test_pages_require_sign_in(client, store):
    for url in ["/", "/sessions/", "/sessions/x/"]:
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")
    assert client.get("/healthz").status_code == 200
    assert client.get("/accounts/login/").status_code == 200


# Escaping ------------------------------------------------------------------------------------
@pytest.fixture
def hostile_store(tmp_path):
    path = tmp_path / "hostile.db"
    db = StateDB.create(path, "current")
    db.session(
        "xss1", source="telegram", title="<script>alert('title')</script>", started_at=1_750_000_000
    )
    db.message("xss1", "user", "<img src=x onerror=alert(1)> hello", timestamp=1_750_000_001)
    db.message(
        "xss1",
        "assistant",
        None,
        timestamp=1_750_000_002,
        tool_calls='[{"id": "c1", "type": "function", "function": {"name": "<b>tool</b>", "arguments": "{\\"cmd\\": \\"<script>x()</script>\\"}"}}]',
    )
    db.message(
        "xss1",
        "tool",
        "</pre><script>alert(2)</script>",
        tool_call_id="c1",
        tool_name="terminal",
        timestamp=1_750_000_003,
    )
    db.session("untitled", source="cli", title=None, started_at=1_750_000_100)
    db.message(
        "untitled", "user", "<script>alert('preview')</script> first words", timestamp=1_750_000_101
    )
    db.close()
    use_store(path)
    return path


def test_user_text_is_escaped_everywhere(staff_client, hostile_store):
    for url in ["/", "/sessions/", "/sessions/xss1/", "/sessions/untitled/"]:
        body = staff_client.get(url).content.decode()
        assert "<script>alert" not in body, url
        assert "<img src=x" not in body, url
        assert "<b>tool</b>" not in body, url
    body = staff_client.get("/sessions/xss1/").content.decode()
    assert "&lt;script&gt;alert(&#x27;title&#x27;)&lt;/script&gt;" in body


def test_untitled_session_shows_first_user_message_preview(staff_client, hostile_store):
    response = staff_client.get("/sessions/")
    rows = {row.record.id: row.record for row in response.context["table"].rows}
    assert "first words" in rows["untitled"].first_user_preview
    assert rows["xss1"].first_user_preview is None


# Filters and sort against direct SQL ----------------------------------------------------------
FILTER_CASES = [
    ({"source": "telegram"}, "source = 'telegram'"),
    ({"source": ["telegram", "cli"]}, "source IN ('telegram', 'cli')"),
    ({"title": "report"}, "title LIKE '%report%'"),
    ({"min_messages": "3"}, "message_count >= 3"),
    ({"min_cost": "0.5", "max_cost": "2"}, "estimated_cost_usd >= 0.5 AND estimated_cost_usd <= 2"),
    ({"user_id": "u-42"}, "user_id = 'u-42'"),
    ({"model": "gpt-5"}, "(model = 'gpt-5' OR model LIKE '%/gpt-5')"),
    ({"end_reason": "compression"}, "end_reason = 'compression'"),
    ({"cost_status": "included"}, "cost_status = 'included'"),
    ({"cost_status": "none"}, "cost_status IS NULL"),
    ({"has_parent": "true"}, "parent_session_id IS NOT NULL"),
    ({"has_parent": "false"}, "parent_session_id IS NULL"),
]


@pytest.fixture
def grid_store(tmp_path):
    """60 sessions with every filterable value spread around, timestamps with ties."""
    path = tmp_path / "grid.db"
    db = StateDB.create(path, "current")
    sources = ["telegram", "cli", "cron", "discord"]
    models = ["openai/gpt-5", "anthropic/claude-sonnet-4.5", "gpt-5", None]
    statuses = ["estimated", "included", "unknown", "actual", None]
    for i in range(60):
        db.session(
            f"s{i:03d}",
            source=sources[i % 4],
            model=models[i % 4],
            title=f"weekly report {i}" if i % 3 == 0 else (None if i % 7 == 0 else f"chat {i}"),
            started_at=1_750_000_000 + (i // 2) * 3600,  # pairs share a start time
            ended_at=1_750_000_000 + (i // 2) * 3600 + 60 * i,
            message_count=i % 6,
            estimated_cost_usd=None if i % 5 == 4 else (i % 10) * 0.3,
            cost_status=statuses[i % 5],
            user_id="u-42" if i % 9 == 0 else f"u-{i}",
            end_reason="compression" if i % 8 == 0 else "cli_close",
            parent_session_id=f"s{i - 1:03d}" if i % 8 == 1 else None,
        )
    db.close()
    use_store(path)
    return path


@pytest.mark.parametrize(("params", "where"), FILTER_CASES, ids=[str(p) for p, _ in FILTER_CASES])
def test_filters_return_exactly_the_rows_sql_returns(staff_client, grid_store, params, where):
    got = all_pages(staff_client, "/sessions/", params)
    expected = [
        r[0]
        for r in sql(
            grid_store, f"SELECT id FROM sessions WHERE {where} ORDER BY started_at DESC, id DESC"
        )
    ]
    assert got == expected
    assert expected, "the fixture should give every case some rows"


def test_date_filters_use_local_days(staff_client, grid_store, settings):
    settings.TIME_ZONE = "UTC"
    got = all_pages(
        staff_client, "/sessions/", {"started_after": "2025-06-15", "started_before": "2025-06-15"}
    )
    expected = [
        r[0]
        for r in sql(
            grid_store,
            "SELECT id FROM sessions WHERE started_at >= 1749945600 AND started_at < 1750032000 ORDER BY started_at DESC, id DESC",
        )
    ]
    assert got == expected and expected


@pytest.mark.parametrize(
    ("sort", "order"),
    [
        ("-started_at", "started_at DESC, id DESC"),
        ("started_at", "started_at ASC, id ASC"),
        ("source", "source ASC, id ASC"),
        ("-source", "source DESC, id DESC"),
        ("-last_active", "COALESCE(last_activity_at, started_at) DESC, id DESC"),
    ],
)
def test_sorted_pages_walk_every_row_once_in_sql_order(staff_client, grid_store, sort, order):
    got = all_pages(staff_client, "/sessions/", {"sort": sort})
    assert got == [r[0] for r in sql(grid_store, f"SELECT id FROM sessions ORDER BY {order}")]


def test_previous_page_returns_the_page_before(staff_client, grid_store):
    first = staff_client.get("/sessions/")
    second = staff_client.get("/sessions/?cursor=" + first.context["page"].next_cursor)
    back = staff_client.get("/sessions/?cursor=" + second.context["page"].prev_cursor)
    assert table_ids(back) == table_ids(first)


def test_a_cursor_written_by_hand_is_not_followed(staff_client, grid_store):
    """Cursors are signed by the install: a real position written by hand (the JSON a cursor
    holds) gives the first page and a note, as a damaged link does."""
    first = staff_client.get("/sessions/")
    last = first.context["page"].rows[-1]
    payload = {"k": first.context["sort"], "d": "n", "v": [last.started_at, last.id]}
    forged = base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")
    response = staff_client.get("/sessions/?cursor=" + forged)
    assert table_ids(response) == table_ids(first)
    assert "damaged" in response.content.decode()


@pytest.mark.parametrize(
    "query",
    [
        "started_after=not-a-date",
        "min_cost=-5",
        "min_messages=99999999999999999999999",
        "max_cost=abc",
        "sort=password",
        "sort=-no_such_column",
        "cursor=garbage",
        "cursor=eyJrIjoiLXN0YXJ0ZWRfYXQiLCJkIjoibiIsInYiOlsxLDJdfQ",
        "page=999999999999999999",
        "has_parent=maybe",
        "cost_status=free",
        "source=%00",
        "title=%27%20OR%201%3D1%20--",
    ],
)
def test_bad_input_gets_a_clear_answer_not_a_500(staff_client, grid_store, query):
    response = staff_client.get("/sessions/?" + query)
    assert response.status_code == 200


def test_invalid_filter_shows_the_form_error(staff_client, grid_store):
    response = staff_client.get("/sessions/?min_cost=-5&started_after=yesterday")
    assert response.status_code == 200
    errors = response.context["filter"].form.errors
    assert "min_cost" in errors and "started_after" in errors
    assert "Enter a valid date" in response.content.decode()


def test_capped_count_is_shown(staff_client, grid_store):
    response = staff_client.get("/sessions/?source=cli")
    assert response.context["count"].value == 15
    assert not response.context["count"].capped


def test_session_list_query_count_is_pinned(
    staff_client, grid_store, django_assert_max_num_queries
):
    staff_client.get("/sessions/")  # warm the facet cache
    with django_assert_max_num_queries(6):
        response = staff_client.get("/sessions/?source=cli&sort=source")
    assert response.status_code == 200


def test_filters_on_columns_the_file_lacks_are_hidden(staff_client, nasty_stores):
    use_store(nasty_stores["doc"].path)
    form = staff_client.get("/sessions/").context["filter"].form
    assert "cost_status" not in form.fields
    assert "has_parent" not in form.fields
    assert "source" in form.fields


# The session page ---------------------------------------------------------------------------
@pytest.fixture
def transcript_store(tmp_path):
    path = tmp_path / "transcript.db"
    db = StateDB.create(path, "current")
    db.session(
        "root", source="cli", title="root", started_at=1_750_000_000, end_reason="compression"
    )
    db.session(
        "cont",
        source="cli",
        title="continuation",
        started_at=1_750_000_500,
        parent_session_id="root",
        end_reason="compression",
    )
    db.session(
        "cont2",
        source="cli",
        title="second continuation",
        started_at=1_750_000_900,
        parent_session_id="cont",
    )
    db.session(
        "branch", source="cli", title="a branch", started_at=1_750_000_600, parent_session_id="root"
    )
    db.session(
        "big",
        source="telegram",
        title="big one",
        model="openai/gpt-5",
        started_at=1_750_001_000,
        input_tokens=1000,
        output_tokens=500,
        message_count=TRANSCRIPT_PAGE * 2 + 10,
    )
    db.model_usage("big", "openai/gpt-5", input_tokens=600, output_tokens=300, api_call_count=3)
    db.model_usage(
        "big", "google/gemini-2.5-flash", task="title_generation", input_tokens=50, output_tokens=5
    )
    ids = []
    for i in range(TRANSCRIPT_PAGE * 2 + 10):
        ids.append(
            db.message(
                "big",
                "user" if i % 2 == 0 else "assistant",
                f"line {i}",
                timestamp=1_750_001_000 + i,
            )
        )
    db.message("big", "assistant", "undone", timestamp=1_750_002_000, active=0, compacted=0)
    db.message("big", "assistant", "archived", timestamp=1_750_002_001, active=0, compacted=1)
    db.message("big", "system", "scaffolding", timestamp=1_750_002_002, display_kind="hidden")
    db.message("big", "tool", "x" * 30_000, tool_name="terminal", timestamp=1_750_002_003)
    db.message(
        "big",
        "user",
        '\x00json:[{"type": "text", "text": "look at this"}, {"type": "image_url", "image_url": {"url": "data:"}}]',
        timestamp=1_750_002_004,
    )
    db.close()
    use_store(path)
    return path, ids


def test_transcript_paginates_long_sessions(staff_client, transcript_store):
    response = staff_client.get("/sessions/big/")
    transcript = response.context["transcript"]
    assert transcript.pages == 3
    assert len(transcript.entries) == TRANSCRIPT_PAGE
    last = staff_client.get("/sessions/big/?page=999").context["transcript"]
    assert last.page == 3


def test_transcript_visibility_toggles(staff_client, transcript_store):
    def texts(url):
        transcript = staff_client.get(url).context["transcript"]
        return {e.text for e in transcript.entries}

    default = texts("/sessions/big/?page=3")
    assert "archived" in default and "undone" not in default and "scaffolding" not in default
    everything = texts("/sessions/big/?page=3&show=live&show=compacted&show=rewound&show=hidden")
    assert {"archived", "undone", "scaffolding"} <= everything
    assert {"undone", "scaffolding"} <= texts("/sessions/big/?page=3&show=compacted,rewound,hidden")
    live_only = texts("/sessions/big/?page=3&show=live")
    assert "archived" not in live_only and "undone" not in live_only


def test_long_content_is_cut_with_a_way_to_the_full_text(staff_client, transcript_store):
    response = staff_client.get("/sessions/big/?page=3")
    body = response.content.decode()
    entry = next(e for e in response.context["transcript"].entries if e.message.role == "tool")
    assert entry.truncated and entry.length == 30_000
    url = reverse("sessions:message_text", args=["big", entry.message.id])
    assert url in body
    full = staff_client.get(url)
    assert full["Content-Type"].startswith("text/plain") and len(full.content) == 30_000


def test_multimodal_content_is_text_plus_image_marker(staff_client, transcript_store):
    entries = staff_client.get("/sessions/big/?page=3").context["transcript"].entries
    assert any(e.text == "look at this\n[image]" for e in entries)


def test_message_link_lands_on_the_right_page(staff_client, transcript_store):
    _, ids = transcript_store
    response = staff_client.get(reverse("sessions:message", args=["big", ids[TRANSCRIPT_PAGE + 5]]))
    assert response.status_code == 302
    assert response["Location"].endswith(f"page=2&show=compacted#m{ids[TRANSCRIPT_PAGE + 5]}")
    assert staff_client.get(reverse("sessions:message", args=["root", ids[0]])).status_code == 404


def test_per_model_usage_includes_auxiliary_tasks_and_residual(staff_client, transcript_store):
    usage = staff_client.get("/sessions/big/").context["usage"]
    rows = {(u.model, u.task, u.residual): u for u in usage}
    assert rows[("openai/gpt-5", "", False)].input_tokens == 600
    assert rows[("google/gemini-2.5-flash", "title_generation", False)].input_tokens == 50
    # Hermes's rule: counters minus every row, auxiliary ones included (1000-600-50, 500-300-5).
    residual = rows[("openai/gpt-5", "", True)]
    assert (residual.input_tokens, residual.output_tokens) == (350, 195)


def test_lineage_links_parents_and_children(staff_client, transcript_store):
    lineage = staff_client.get("/sessions/cont/").context["lineage"]
    assert [a["id"] for a in lineage.ancestors] == ["root"]
    assert [d["id"] for d in lineage.descendants] == ["cont2"]
    root = staff_client.get("/sessions/root/").context["lineage"]
    assert [d["id"] for d in root.descendants] == ["cont", "cont2", "branch"]
    assert [d["depth"] for d in root.descendants] == [1, 2, 1]


def test_tool_calls_are_paired_with_their_results(staff_client, hostile_store):
    response = staff_client.get("/sessions/xss1/")
    entries = response.context["transcript"].entries
    assistant = next(e for e in entries if e.message.role == "assistant")
    assert assistant.calls[0].call.name == "<b>tool</b>"
    assert '"cmd": "<script>x()</script>"' in assistant.calls[0].call.arguments
    assert assistant.calls[0].result.text == "</pre><script>alert(2)</script>"
    # The paired result is not repeated as a message of its own.
    assert [e.message.role for e in entries] == ["user", "assistant"]


def test_session_page_query_count_is_pinned(
    staff_client, transcript_store, django_assert_max_num_queries
):
    with django_assert_max_num_queries(8):
        assert staff_client.get("/sessions/big/").status_code == 200


# Archived, hidden and pinned sessions; workspace filters ------------------------------------
@pytest.fixture
def flagged_store(tmp_path):
    path = tmp_path / "flags.db"
    with StateDB.create(path, "current") as db:
        db.session("20260101_100000_aaaaaa", title="Plain one", started_at=1_767_261_600)
        db.session(
            "20260101_110000_bbbbbb", title="Archived one", archived=1, started_at=1_767_265_200
        )
        db.session(
            "20260101_120000_cccccc",
            title="Auto-archived one",
            auto_archived=1,
            started_at=1_767_268_800,
        )
        db.session("20260101_130000_dddddd", title="Hidden one", hidden=1, started_at=1_767_272_400)
        db.session(
            "20260101_140000_eeeeee",
            title="Pinned CLI one",
            pinned=1,
            cwd="/home/ana/src/bot",
            git_branch="fix-login",
            git_repo_root="/home/ana/src/bot",
            started_at=1_767_276_000,
        )
    use_store(path)
    return path


def _titles(client, **params) -> set[str]:
    response = client.get("/sessions/?" + urlencode(params, doseq=True))
    assert response.status_code == 200
    return {row.title for row in response.context["table"].data}


def test_archived_and_hidden_sessions_are_left_out_by_default_with_a_way_to_see_them(
    flagged_store, staff_client
):
    assert _titles(staff_client) == {"Plain one", "Pinned CLI one"}
    assert _titles(staff_client, flags="all") == {
        "Plain one",
        "Archived one",
        "Auto-archived one",
        "Hidden one",
        "Pinned CLI one",
    }
    assert _titles(staff_client, flags="archived_or_hidden") == {
        "Archived one",
        "Auto-archived one",
        "Hidden one",
    }
    assert _titles(staff_client, flags="pinned") == {"Pinned CLI one"}
    assert _titles(staff_client, flags="hidden") == {"Hidden one"}
    # The CSV says the same as the page.
    response = staff_client.get("/sessions/?_export=csv")
    body = b"".join(response.streaming_content).decode()
    assert "Plain one" in body and "Archived one" not in body


def test_sessions_filter_by_workspace_and_branch(flagged_store, staff_client):
    assert _titles(staff_client, cwd="src/bot") == {"Pinned CLI one"}
    assert _titles(staff_client, git_branch="fix-login") == {"Pinned CLI one"}
    assert _titles(staff_client, git_branch="main") == set()
    assert _titles(staff_client, git_repo_root="/home/ana/src/bot") == {"Pinned CLI one"}


def test_flag_and_workspace_filters_are_not_offered_on_files_without_those_columns(
    tmp_path, staff_client
):
    path = tmp_path / "doc.db"
    with StateDB.create(path, "doc") as db:
        db.session("20260101_100000_aaaaaa", title="Old one")
    use_store(path)
    response = staff_client.get("/sessions/?flags=pinned&git_branch=x")
    assert response.status_code == 200
    form = response.context["filter"].form
    assert "flags" not in form.fields and "git_branch" not in form.fields
    assert {row.title for row in response.context["table"].data} == {"Old one"}


def test_a_carried_forward_original_shows_once_in_transcript_search_and_table(
    tmp_path, staff_client
):
    """Compaction archives a turn (active=0, compacted=1) and writes a live copy with the same
    message_uid: Hermes shows that message once, the live copy."""
    path = tmp_path / "split.db"
    with StateDB.create(path, "current") as db:
        db.session("20260101_100000_aaaaaa", title="Split", started_at=1_767_261_600)
        db.message("20260101_100000_aaaaaa", "user", "question about zorblax")
        db.message(
            "20260101_100000_aaaaaa",
            "assistant",
            "the zorblax answer",
            active=0,
            compacted=1,
            message_uid="uid-1",
        )
        live = db.message(
            "20260101_100000_aaaaaa",
            "assistant",
            "the zorblax answer",
            active=1,
            compacted=0,
            message_uid="uid-1",
        )
        # A compacted row without a live twin is still shown as compacted.
        db.message("20260101_100000_aaaaaa", "user", "older zorblax turn", active=0, compacted=1)
    use_store(path)
    page = staff_client.get("/sessions/20260101_100000_aaaaaa/")
    assert page.content.decode().count("the zorblax answer") == 1
    hits = staff_client.get("/search/", {"q": "answer"}).context["result"].hits
    assert [h.id for h in hits] == [live]
    table = staff_client.get(
        "/messages/", {"session_id": "20260101_100000_aaaaaa", "show": "compacted"}
    )
    assert [m.id for m in table.context["table"].data].count(live) == 1
    assert len(list(table.context["table"].data)) == 3


@pytest.mark.parametrize("name", ["SessionFilter", "MessageFilter"])
def test_each_filterset_has_filters_and_fields_of_its_own(grid_store, name):
    from django.http import QueryDict
    from django.template.loader import render_to_string

    from sessions_app import filters as filter_module

    def form_fields_html(form):
        return render_to_string("_form_fields.html", {"form": form})

    use_store(grid_store)
    filterset_class = getattr(filter_module, name)
    one = filterset_class(QueryDict("source=telegram&sort=bogus"))
    other = filterset_class(QueryDict("source=cli"))
    for key, filter_ in one.filters.items():
        base = filterset_class.base_filters[key]
        assert filter_ is not other.filters[key] and filter_ is not base
        assert filter_.extra is not base.extra and "_field" not in base.__dict__
        assert one.form.fields[key] is not other.form.fields[key]
        if filter_.method is not None:
            assert filter_.filter.f is filter_ and filter_.parent is one
    one.filters["source"].extra["choices"] = [("x", "x")]
    assert other.filters["source"].extra["choices"] != [("x", "x")]
    assert "choices" not in filterset_class.base_filters["source"].extra or (
        filterset_class.base_filters["source"].extra["choices"] != [("x", "x")]
    )
    # The form taking the filters' own fields renders and validates as django-filter's own
    # form class (fields deep-copied through a new class) does.
    bad_date = "started_after" if name == "SessionFilter" else "date_from"
    fresh = filterset_class(QueryDict(f"source=telegram&{bad_date}=nope"))
    stock = fresh.get_form_class()(fresh.data)
    assert form_fields_html(fresh.form) == form_fields_html(stock)
    assert fresh.form.is_valid() == stock.is_valid() is False
    assert fresh.form.errors == stock.errors


def test_cached_filter_form_shows_what_each_request_asked(staff_client, grid_store, tmp_path):
    """The filter form's HTML is cached per process: each request still sees its own values,
    its language, this file's sources and its own errors."""

    def form_html(query="", **headers):
        html = staff_client.get("/sessions/" + query, **headers).content.decode()
        return html[
            html.index('class="filters"') : html.index("</form>", html.index('class="filters"'))
        ]

    first, again = form_html("?title=alpha"), form_html("?title=alpha")
    assert first == again and 'value="alpha"' in first
    other = form_html("?title=beta")
    assert 'value="beta"' in other and 'value="alpha"' not in other
    assert 'value="cron"' in first and "Enter a number" not in first
    assert "Enter a number" in form_html("?min_cost=x")
    french = form_html("?title=alpha", HTTP_ACCEPT_LANGUAGE="fr")
    assert 'value="alpha"' in french and french != first
    path = tmp_path / "other.db"
    db = StateDB.create(path, "current")
    db.session("x1", source="matrix")
    db.close()
    use_store(path)
    moved = form_html("?title=alpha")
    assert 'value="matrix"' in moved and 'value="cron"' not in moved
