"""Scores, review queues and the chat-format dataset: the team's judgements in the app's
database, filtered with the sessions of the state.db a batch at a time, a queue walked in the
list's own order, and a dataset checked against direct SQL on every layout."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest
from django.db import connections
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts_app import tokens
from accounts_app.models import AuditEvent
from annotations_app.models import Score, SessionScore
from tests.builders import StateDB, tool_call
from tests.conftest import use_store
from tests.roles_helpers import make_user
from tests.test_annotations import START, all_pages, app_sql, expected_ids, make_tag, sql
from tests.test_redaction import GITHUB, OPENAI

# Every test here reads or writes the app's scores, so each is marked ``appdb`` and rerun on
# PostgreSQL and Redis; those over every layout rerun there on the current layout only (the
# layouts differ in the state.db, which the app database does not change).
pytestmark = [pytest.mark.django_db(databases=["default", "hermes"]), pytest.mark.render_context]


@pytest.fixture
def queue_store(tmp_path):
    """60 sessions, newest last, three sources (cron every third one)."""
    path = tmp_path / "queue.db"
    db = StateDB.create(path, "current")
    for i in range(60):
        db.session(
            f"q{i:02d}", source=("cron", "cli", "telegram")[i % 3], started_at=START + i * 60
        )
    db.close()
    use_store(path)
    yield path
    connections["hermes"].close()


def signed_in(client, role, name=None):
    user = make_user(role, username=name or f"r-{role}")
    client.force_login(user)
    return user


@pytest.fixture
def quality():
    return Score.objects.create(name="quality", values=["good", "bad"])


def press(client, session_id, score, value, **extra):
    return client.post(
        reverse("review:score", args=[session_id]),
        {"score": score.pk, "value": value, **extra},
    )


# Defining scores -------------------------------------------------------------------------------
@pytest.mark.appdb
def test_staff_define_a_score_on_the_scores_page_and_it_is_audited(client, queue_store):
    signed_in(client, "staff")
    page = client.get("/review/scores/").content.decode()
    assert "Create score" in page and 'name="values"' in page
    response = client.post("/review/scores/", {"name": "quality", "values": "good, bad"})
    assert response.status_code == 302
    assert Score.objects.get().values == ["good", "bad"]
    event = AuditEvent.objects.get(action="score_definition")
    assert "created score=quality" in event.detail


@pytest.mark.appdb
@pytest.mark.parametrize(
    ("name", "values", "message"),
    [
        ("QUALITY", "ok", "score names differ by more than case"),
        ("speed", "", "This field is required."),
        ("speed", " , ,", "A score needs at least one value."),
        ("speed", ", ".join(str(n) for n in range(11)), "A score has at most 10 values."),
        ("speed", "fast, " + "x" * 41, "A value has at most 40 characters."),
        ("speed", "fast, Fast", "Each value is given once."),
        ("spe:ed", "fast", "cannot contain"),
        ("x" * 41, "fast", "A score name has at most 40 characters."),
    ],
)
def test_bad_score_definitions_get_a_message(client, queue_store, quality, name, values, message):
    signed_in(client, "staff")
    response = client.post("/review/scores/", {"name": name, "values": values})
    assert response.status_code == 400
    assert message in response.content.decode()
    assert Score.objects.count() == 1


@pytest.mark.appdb
def test_only_staff_define_scores(client, queue_store):
    signed_in(client, "analyst")
    assert client.post("/review/scores/", {"name": "q", "values": "a"}).status_code == 403
    assert "Create score" not in client.get("/review/scores/").content.decode()
    assert not Score.objects.exists()


# Scoring a session -----------------------------------------------------------------------------
@pytest.mark.appdb
def test_each_person_has_one_value_per_score_and_pressing_it_again_clears_it(
    client, queue_store, quality
):
    ana = signed_in(client, "analyst", "ana")
    assert press(client, "q01", quality, "good").status_code == 302
    assert press(client, "q01", quality, "bad").status_code == 302
    assert list(SessionScore.objects.values_list("user_id", "value")) == [(ana.pk, "bad")]
    signed_in(client, "analyst", "bob")
    press(client, "q01", quality, "bad")
    body = client.get("/sessions/q01/").content.decode()
    assert "<legend>quality</legend>" in body
    assert 'value="bad" aria-pressed="true"' in body
    assert 'value="good" aria-pressed="false"' in body
    assert app_sql(
        "SELECT value, count(*) FROM annotations_app_sessionscore WHERE session_id = 'q01' "
        "GROUP BY value"
    ) == [("bad", 2)]
    press(client, "q01", quality, "bad")  # bob presses his value again: cleared
    assert list(SessionScore.objects.values_list("user_id", "value")) == [(ana.pk, "bad")]
    actions = list(AuditEvent.objects.order_by("id").values_list("action", flat=True))
    assert actions == ["score", "score", "score", "unscore"]


@pytest.mark.appdb
def test_a_value_the_score_lacks_or_a_missing_session_is_refused(client, queue_store, quality):
    signed_in(client, "analyst")
    response = press(client, "q01", quality, "meh")
    assert response.status_code == 302
    assert not SessionScore.objects.exists()
    assert press(client, "nope", quality, "good").status_code == 404
    response = client.post(reverse("review:score", args=["q01"]), {"score": 999, "value": "x"})
    assert response.status_code == 302 and not SessionScore.objects.exists()


@pytest.mark.appdb
def test_a_viewer_sees_the_tally_but_cannot_score(client, queue_store, quality):
    signed_in(client, "viewer")
    assert press(client, "q01", quality, "good").status_code == 403
    body = client.get("/sessions/q01/").content.decode()
    assert "<legend>quality</legend>" in body and 'aria-pressed="false" disabled' in body
    assert client.get("/review/next/").status_code == 403
    assert not SessionScore.objects.exists()


@pytest.mark.appdb
def test_scores_of_a_session_that_left_the_store_are_on_the_orphans_page(
    client, queue_store, quality
):
    import sqlite3

    signed_in(client, "analyst")
    press(client, "q05", quality, "bad")
    with sqlite3.connect(queue_store) as conn:
        conn.execute("DELETE FROM sessions WHERE id = 'q05'")
    connections["hermes"].close()
    body = client.get(reverse("annotations:orphans")).content.decode()
    assert "q05" in body and "quality: bad" in body


# Filters, column, facets and exports -----------------------------------------------------------
def scored_in_app_db(value: str | None = None) -> set[str]:
    where, params = ("WHERE value = %s", [value]) if value else ("", [])
    return {
        r[0]
        for r in app_sql(f"SELECT session_id FROM annotations_app_sessionscore {where}", params)
    }


@pytest.fixture
def scored(client, queue_store, quality):
    """Two people scored: ana the even sessions below 40 bad, bob every fifth good."""
    signed_in(client, "analyst", "bob")
    for i in range(0, 60, 5):
        press(client, f"q{i:02d}", quality, "good")
    signed_in(client, "analyst", "ana")
    for i in range(0, 40, 2):
        press(client, f"q{i:02d}", quality, "bad")
    return client


@pytest.mark.appdb
@pytest.mark.parametrize("sort", ["-started_at", "started_at", "source"])
def test_score_filters_return_what_sql_on_both_databases_returns(scored, queue_store, sort):
    order = {
        "-started_at": "started_at DESC, id DESC",
        "started_at": "started_at, id",
        "source": "source, id",
    }[sort]

    def oracle(keep: set[str], where: str = "1") -> list[str]:
        rows = sql(queue_store, f"SELECT id FROM sessions WHERE {where} ORDER BY {order}")
        return [r[0] for r in rows if r[0] in keep]

    every = {f"q{i:02d}" for i in range(60)}
    bad, any_score = scored_in_app_db("bad"), scored_in_app_db()
    assert all_pages(scored, {"score": "quality:bad", "sort": sort}) == oracle(bad)
    assert all_pages(scored, {"score": "Quality:", "sort": sort}) == oracle(any_score)
    assert all_pages(scored, {"noscore": "quality", "sort": sort}) == oracle(every - any_score)
    both = {"score": ["quality:bad", "quality:good"], "source": "cron", "sort": sort}
    assert all_pages(scored, both) == oracle(bad & scored_in_app_db("good"), "source = 'cron'")
    # A session two people scored is listed once.
    assert len(all_pages(scored, {"score": "quality:", "sort": sort})) == len(any_score)


@pytest.mark.appdb
def test_an_unknown_score_matches_nothing_and_says_so(scored, queue_store):
    response = scored.get("/sessions/?score=speed:fast")
    assert response.status_code == 200
    assert not response.context["table"].rows
    assert "No score is named “speed”" in response.content.decode()


@pytest.mark.appdb
def test_the_score_filtered_page_never_carries_every_scored_id(scored, queue_store):
    with CaptureQueriesContext(connections["hermes"]) as hermes:
        assert scored.get("/sessions/?score=quality:bad").status_code == 200
    assert all(statement["sql"].count("'q") <= 60 for statement in hermes.captured_queries)
    assert len(hermes) <= 4


@pytest.mark.appdb
def test_the_list_shows_a_scores_column_facet_counts_and_exports_them(scored, queue_store):
    response = scored.get("/sessions/")
    body = response.content.decode()
    assert "Scores" in body and "quality: bad 1, good 1" in body  # q00: ana bad, bob good
    facets = dict(response.context["score_facets"][0][1][i][:2] for i in range(2))
    assert facets == {"good": len(scored_in_app_db("good")), "bad": len(scored_in_app_db("bad"))}
    lines = b"".join(scored.get("/sessions/?_export=jsonl").streaming_content).splitlines()
    rows = {r["id"]: r for r in map(json.loads, lines)}
    assert rows["q00"]["scores"] == "quality: bad 1, good 1"
    assert rows["q02"]["scores"] == "quality: bad 1" and rows["q01"]["scores"] == ""
    only = b"".join(scored.get("/sessions/?_export=csv&noscore=quality").streaming_content)
    assert b"q01" in only and b"q00" not in only


# Review queues ---------------------------------------------------------------------------------
def cron_order(queue_store) -> list[str]:
    return expected_ids(queue_store, {f"q{i:02d}" for i in range(60)}, "source = 'cron'")


@pytest.mark.appdb
def test_a_queue_opens_the_first_session_you_have_not_scored_in_the_lists_order(
    client, queue_store, quality
):
    order = cron_order(queue_store)  # q57, q54, …
    signed_in(client, "analyst", "bob")
    press(client, order[1], quality, "good")  # scored by someone else: still to review
    signed_in(client, "analyst", "ana")
    press(client, order[0], quality, "bad")
    press(client, order[2], quality, "bad")
    list_page = client.get("/sessions/?source=cron").content.decode()
    assert 'action="/review/next/"' in list_page and "Review these" in list_page
    assert '<input type="hidden" name="source" value="cron">' in list_page
    response = client.get("/review/next/?source=cron")
    assert response.status_code == 302
    assert response["Location"] == f"/review/sessions/{order[1]}/?source=cron"
    page = client.get(response["Location"])
    body = page.content.decode()
    assert f"2 of {len(order)}" in body and "Next to review" in body
    assert 'href="/sessions/?source=cron"' in body
    # Showing compacted rows too keeps the queue: the form carries the list's query.
    assert '<input type="hidden" name="source" value="cron">' in body
    # The next one after order[1] skips order[2] (scored by ana).
    nxt = client.get(f"/review/next/?source=cron&from={order[1]}")
    assert nxt["Location"] == f"/review/sessions/{order[3]}/?source=cron"
    # After the last one: nothing left.
    done = client.get(f"/review/next/?source=cron&from={order[-1]}")
    assert done.status_code == 200
    assert "Nothing left to review" in done.content.decode()


@pytest.mark.appdb
def test_a_queue_by_score_keeps_what_you_scored_with_another_score(client, queue_store, quality):
    """``review=quality`` collects quality: a session you gave only another score stays in
    the queue, and it leaves once you gave each of the queue's scores."""
    speed = Score.objects.create(name="speed", values=["fast", "slow"])
    order = cron_order(queue_store)
    signed_in(client, "analyst", "ana")
    press(client, order[0], speed, "fast")
    press(client, order[1], quality, "good")
    list_page = client.get("/sessions/?source=cron&review=quality").content.decode()
    assert 'name="review" value="quality"' in list_page and "Scores to give" in list_page
    assert '<input type="hidden" name="review"' not in list_page  # a field, not a hidden one
    # Any score (the default): both are done.
    assert client.get("/review/next/?source=cron")["Location"].split("/")[3] == order[2]
    queue = "source=cron&review=quality"
    response = client.get(f"/review/next/?{queue}")
    assert response["Location"] == f"/review/sessions/{order[0]}/?{queue}"
    body = client.get(response["Location"]).content.decode()
    assert f"from={order[0]}" in body and "review=quality" in body  # next keeps the scores
    nxt = client.get(f"/review/next/?{queue}&from={order[0]}")
    assert nxt["Location"].split("/")[3] == order[2]  # order[1] has its quality
    both = "source=cron&review=quality&review=speed"
    assert client.get(f"/review/next/?{both}")["Location"].split("/")[3] == order[0]
    press(client, order[0], quality, "bad")
    assert client.get(f"/review/next/?{both}")["Location"].split("/")[3] == order[1]
    press(client, order[1], speed, "slow")
    assert client.get(f"/review/next/?{both}")["Location"].split("/")[3] == order[2]
    for sid in order[2:]:
        press(client, sid, quality, "good")
    done = client.get(f"/review/next/?{queue}").content.decode()
    assert "Nothing left to review" in done and "collects the scores: quality" in done
    unknown = client.get("/review/next/?review=nosuch")
    assert unknown.status_code == 200 and "not one of the available choices" in (
        unknown.content.decode()
    )


@pytest.mark.appdb
def test_a_queue_follows_the_lists_sort_and_annotation_filters(client, queue_store, quality):
    ana = signed_in(client, "analyst", "ana")
    tag = make_tag("batch")
    client.post(
        reverse("annotations:bulk_tag"),
        {"tag": tag.pk, "session": [f"q{i:02d}" for i in range(10, 30)], "next": "/sessions/"},
    )
    order = expected_ids(queue_store, {f"q{i:02d}" for i in range(10, 30)}, "1")[::-1]
    assert order[0] == "q10"
    for sid in order[:5]:
        press(client, sid, quality, "good")
    seen, at = [], None
    for _ in range(len(order)):
        query = {"tag": "batch", "sort": "started_at", **({"from": at} if at else {})}
        response = client.get("/review/next/?" + urlencode(query))
        if response.status_code != 302:
            break
        at = response["Location"].split("/")[3]
        seen.append(at)
    assert seen == order[5:]
    assert not SessionScore.objects.filter(user=ana, session_id__in=seen).exists()
    page = client.get(f"/review/sessions/{order[7]}/?tag=batch&sort=started_at")
    assert f"8 of {len(order)}" in page.content.decode()


@pytest.mark.appdb
def test_next_to_review_reads_one_batch_not_the_whole_list(client, queue_store, quality):
    signed_in(client, "analyst")
    with CaptureQueriesContext(connections["hermes"]) as hermes:
        response = client.get("/review/next/?from=q30")
    assert response["Location"] == "/review/sessions/q29/"
    walks = [q["sql"] for q in hermes.captured_queries if "ORDER BY" in q["sql"]]
    # The current session's keys, then one batch after them (keys only).
    assert len(walks) == 2 and walks[1].endswith("LIMIT 101")
    assert all('"title"' not in q for q in walks)


# Datasets --------------------------------------------------------------------------------------
LAYOUTS = ["doc", "legacy", "current", "v1", "v5"]


@pytest.fixture(
    params=[
        pytest.param(layout, marks=[pytest.mark.appdb] if layout == "current" else [])
        for layout in LAYOUTS
    ]
)
def dataset_store(request, tmp_path):
    path = tmp_path / f"{request.param}.db"
    db = StateDB.create(path, request.param)
    prompt = f"You are terse. deploy key {GITHUB}"
    db.session(
        "d1",
        source="cli",
        model=f"vendor/model-x?key={OPENAI}",
        started_at=START,
        system_prompt=prompt,
        system_prompt_hash="h1",
    )
    db.system_prompt("h1", prompt)
    db.message("d1", "session_meta", "meta")
    db.message("d1", "user", f"run it with OPENAI_API_KEY={OPENAI}")
    db.message(
        "d1",
        "assistant",
        None,
        tool_calls=[
            tool_call("terminal", {"command": f"export TOKEN={GITHUB}"}, "call_a"),
            tool_call("read_file", {"path": "a.txt"}, "call_b"),
        ],
    )
    db.message("d1", "tool", f"done {GITHUB}", tool_call_id="call_a", tool_name="terminal")
    db.message("d1", "tool", "file text", tool_call_id="call_b", tool_name="read_file")
    if db.has("messages", "active"):
        db.message("d1", "assistant", "old answer", active=0, compacted=0)
    if db.has("messages", "display_kind"):
        db.message("d1", "assistant", "scaffold", display_kind="hidden")
    parts = [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "x"}}]
    db.message("d1", "user", "\x00json:" + json.dumps(parts))
    db.message("d1", "assistant", "Done.")
    db.session("d2", source="telegram", started_at=START + 60)
    db.message("d2", "user", "hi")
    db.close()
    use_store(path)
    yield path
    connections["hermes"].close()


def dataset(client, query="") -> list[dict]:
    response = client.get(f"/sessions/?_export=dataset{query}")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("application/jsonl")
    body = b"".join(response.streaming_content).decode()
    assert GITHUB[8:16] not in body and OPENAI[8:16] not in body
    return [json.loads(line) for line in body.splitlines()]


def transcript_oracle(path, session_id) -> list[tuple]:
    """The session's live rows, as SQL reads them: (role, content, tool_call_id or None)."""
    columns = {r[1] for r in sql(path, "PRAGMA table_info(messages)")}
    where = ["session_id = ?", "role IN ('system', 'user', 'assistant', 'tool')"]
    if "active" in columns:
        where.append("active = 1")
    if "display_kind" in columns:
        where.append("COALESCE(display_kind, '') != 'hidden'")
    call = "tool_call_id" if "tool_call_id" in columns else "NULL"
    return sql(
        path,
        f"SELECT role, content, {call} FROM messages WHERE {' AND '.join(where)} ORDER BY id",
        [session_id],
    )


def test_the_dataset_is_each_transcript_in_chat_format_on_every_layout(
    client, dataset_store, quality
):
    signed_in(client, "analyst")
    press(client, "d1", quality, "good")
    # A tag name holds at most 40 characters: a secret short enough to fit in one.
    tag = make_tag("golden AKIAIOSFODNN7EXAMPLE")
    client.post(reverse("annotations:add_tag", args=["d1"]), {"tag": tag.pk})
    records = dataset(client)
    assert [r["metadata"]["session_id"] for r in records] == ["d2", "d1"]
    record = records[1]
    meta = record["metadata"]
    assert meta["source"] == "cli" and meta["tags"][0].startswith("golden [redacted")
    assert meta["scores"] == {"quality": {"good": 1}}
    assert meta["started_at"].startswith("2025-06-15")
    assert meta["model"].startswith("vendor/model-x?key=[redacted")
    messages = record["messages"]
    stored = {r[1] for r in sql(dataset_store, "PRAGMA table_info(sessions)")}
    if stored & {"system_prompt", "system_prompt_hash"}:
        assert messages[0]["role"] == "system"
        assert messages[0]["content"].startswith("You are terse. deploy key [redacted")
        messages = messages[1:]
    rows = transcript_oracle(dataset_store, "d1")
    chat = messages
    assert [m["role"] for m in chat] == [r[0] for r in rows]
    assert [m["role"] for m in chat] == ["user", "assistant", "tool", "tool", "user", "assistant"]
    assert chat[0]["content"].startswith("run it with OPENAI_API_KEY=[redacted")
    calls = chat[1]["tool_calls"]
    assert [c["id"] for c in calls] == ["call_a", "call_b"]
    assert calls[0]["function"]["name"] == "terminal"
    assert "[redacted" in json.loads(calls[0]["function"]["arguments"])["command"]
    # Each result names the call it answers: stored, or (files without the column) the
    # oldest call not yet answered.
    assert [chat[2]["tool_call_id"], chat[3]["tool_call_id"]] == ["call_a", "call_b"]
    assert chat[2]["content"].startswith("done [redacted") and chat[3]["content"] == "file text"
    assert chat[4]["content"] == [
        {"type": "text", "text": "look"},
        {"type": "image_url", "image_url": {"url": "x"}},
    ]
    assert chat[5] == {"role": "assistant", "content": "Done."}
    assert records[0]["messages"] == [{"role": "user", "content": "hi"}]


def test_a_dataset_follows_the_lists_filters(client, dataset_store, quality):
    signed_in(client, "analyst")
    press(client, "d2", quality, "bad")
    assert [r["metadata"]["session_id"] for r in dataset(client, "&score=quality:bad")] == ["d2"]
    assert [r["metadata"]["session_id"] for r in dataset(client, "&source=cli")] == ["d1"]


def test_viewers_cannot_download_a_dataset_and_an_analysts_token_can(client, dataset_store):
    signed_in(client, "viewer")
    assert client.get("/sessions/?_export=dataset").status_code == 403
    assert "Download as dataset" not in client.get("/sessions/").content.decode()
    analyst = make_user("analyst", "script-analyst")
    _token, text = tokens.create(analyst, name="eval")
    client.logout()
    response = client.get("/sessions/?_export=dataset", headers={"Authorization": f"Bearer {text}"})
    assert response.status_code == 200
    assert len(b"".join(response.streaming_content).splitlines()) == 2


def test_the_list_links_to_the_dataset(client, dataset_store):
    signed_in(client, "analyst")
    body = client.get("/sessions/?source=cli").content.decode()
    assert "Download as dataset" in body and "_export=dataset" in body


# Profiles -------------------------------------------------------------------------------------
@pytest.mark.appdb
@pytest.mark.django_db(databases="__all__")
def test_scores_queues_and_datasets_keep_to_their_profile(home, staff_client, quality):
    from tests.profile_home import SHARED_ID

    url = f"/p/support/review/sessions/{SHARED_ID}/score"
    assert staff_client.post(url, {"score": quality.pk, "value": "bad"}).status_code == 302
    assert SessionScore.objects.get().store == "support"
    support = staff_client.get("/p/support/sessions/?score=quality:bad")
    assert [r.record.id for r in support.context["table"].rows] == [SHARED_ID]
    default = staff_client.get("/p/default/sessions/?score=quality:bad")
    assert not default.context["table"].rows
    # Over every profile, the row of the profile it was given on.
    merged = staff_client.get("/sessions/?score=quality:bad").context["table"].rows
    assert [(r.record.store_name, r.record.id) for r in merged] == [("support", SHARED_ID)]
    # The list over every profile is a queue in each profile's share of it.
    listing = staff_client.get("/sessions/?source=telegram").content.decode()
    assert "Review these, profile by profile:" in listing
    for name in home.sessions:
        assert f'formaction="/p/{name}/review/next/"' in listing
    assert '<input type="hidden" name="source" value="telegram">' in listing
    nxt = staff_client.get("/p/support/review/next/")
    assert nxt.status_code == 302 and nxt["Location"].startswith("/p/support/review/sessions/")
    assert SHARED_ID not in nxt["Location"]
    lines = b"".join(
        staff_client.get("/p/support/sessions/?_export=dataset&score=quality:").streaming_content
    ).splitlines()
    assert [json.loads(line)["metadata"]["profile"] for line in lines] == ["support"]


@pytest.mark.appdb
def test_staff_manage_scores_in_the_admin_too(client, queue_store, quality):
    signed_in(client, "staff")
    page = client.get(f"/admin/annotations_app/score/{quality.pk}/change/").content.decode()
    assert 'value="good, bad"' in page
    response = client.post(
        f"/admin/annotations_app/score/{quality.pk}/change/",
        {"name": "quality", "values": "good, bad, unsure"},
    )
    assert response.status_code == 302
    quality.refresh_from_db()
    assert quality.values == ["good", "bad", "unsure"]
    assert "changed score=quality" in AuditEvent.objects.get(action="score_definition").detail
    added = client.post("/admin/annotations_app/score/add/", {"name": "QUALITY", "values": "x"})
    assert added.status_code == 200 and "differ by more than case" in added.content.decode()


@pytest.mark.appdb
def test_bad_queue_and_dataset_input_gets_a_clear_answer(client, queue_store, quality):
    signed_in(client, "analyst")
    assert client.get("/review/next/?sort=bogus")["Location"] == "/review/sessions/q59/?sort=bogus"
    assert client.get("/review/next/?from=no-such-session")["Location"] == "/review/sessions/q59/"
    invalid = client.get("/review/next/?started_after=not-a-date")
    assert (
        invalid.status_code == 200
        and "filters of this list are not valid" in invalid.content.decode()
    )
    assert client.get("/review/sessions/no-such-session/").status_code == 404
    bad = client.get("/sessions/?_export=dataset&started_after=not-a-date")
    assert bad.status_code == 400 and b"started_after" in bad.content
    long = client.get("/sessions/?" + urlencode({"score": "x" * 500 + ":" + "y" * 500}))
    assert long.status_code == 200 and not long.context["table"].rows
    assert client.get("/sessions/?noscore=" + "z" * 300).status_code == 200
