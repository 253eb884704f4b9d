"""/live/ and following a session: what is running now, on every layout, with a live writer.

Fixtures are written relative to the real clock (the live page's window is "the last N
minutes"): ``run-*`` sessions are active, ``old-*`` ones are not.
"""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest
from django.core.cache import cache, caches
from django.db import connections

from hermes_fixtures.ddl import RELEASE_LAYOUTS, SHAPES
from tests.builders import StateDB, tool_call
from tests.conftest import use_store
from tests.roles_helpers import client_for

pytestmark = [pytest.mark.django_db(databases=["default", "hermes"]), pytest.mark.render_context]

SECRET = "sk-ant-api03-" + "A" * 40


def build_live(path, shape: str) -> dict:
    now = time.time()
    db = StateDB.create(path, shape)
    db.session(
        "run-1",
        source="telegram",
        title="Deploying <b>now</b>",
        model="anthropic/claude-sonnet-4.5",
        started_at=now - 600,
        last_activity_at=now - 30,
        input_tokens=1200,
        output_tokens=300,
        estimated_cost_usd=0.0123,
    )
    db.message("run-1", "user", "please deploy", timestamp=now - 590)
    db.message(
        "run-1",
        "assistant",
        None,
        timestamp=now - 580,
        tool_calls=[tool_call("terminal", {"command": "make deploy"}, "call_a")],
    )
    db.message(
        "run-1",
        "tool",
        '{"output": "ok", "exit_code": 0}',
        timestamp=now - 570,
        tool_call_id="call_a",
        tool_name="terminal",
    )
    last = db.message("run-1", "assistant", f"Deployed with key {SECRET}", timestamp=now - 30)
    # Open, started an hour ago, quiet for 50 minutes: still listed (not ended).
    db.session("run-open", source="cli", started_at=now - 3600, last_activity_at=now - 3000)
    db.message("run-open", "user", "long job", timestamp=now - 3000)
    # Ended long ago, or open but started last week: not running.
    db.session(
        "old-ended",
        source="cli",
        started_at=now - 7200,
        ended_at=now - 7000,
        last_activity_at=now - 7000,
    )
    db.message("old-ended", "user", "done", timestamp=now - 7100)
    db.session(
        "old-open", source="cli", started_at=now - 7 * 86400, last_activity_at=now - 7 * 86400
    )
    db.message("old-open", "user", "forgotten", timestamp=now - 7 * 86400)
    db.refresh_counters()
    db.close()
    return {
        "path": path,
        "last": last,
        "pairs": db.has("messages", "tool_call_id"),
        "titles": db.has("sessions", "title"),
    }


# Every shape, every release layout, and a few random subsets of the optional columns.
@pytest.fixture(params=[*dict.fromkeys([*RELEASE_LAYOUTS, *SHAPES]), "random-3", "random-11"])
def live_store(request, tmp_path):
    cache.clear()
    caches["failures"].clear()
    facts = build_live(tmp_path / f"{request.param}.db", request.param)
    use_store(facts["path"])
    yield facts
    connections["hermes"].close()


@pytest.fixture
def current_live(tmp_path):
    cache.clear()
    caches["failures"].clear()
    facts = build_live(tmp_path / "current.db", "current")
    use_store(facts["path"])
    yield facts
    connections["hermes"].close()


def test_live_lists_running_sessions_newest_first_on_every_layout(live_store, staff_client):
    response = staff_client.get("/live/")
    assert response.status_code == 200
    ids = [s.id for s in response.context["sessions"]]
    assert ids[0] == "run-1"
    assert "run-open" in ids
    assert "old-ended" not in ids and "old-open" not in ids
    html = response.content.decode()
    if live_store["titles"]:
        assert "Deploying &lt;b&gt;now&lt;/b&gt;" in html
    assert "store unchanged since" in html
    assert 'src="/static/js/live.js"' in html


@pytest.mark.parametrize("shape", ["current", "legacy"])
def test_sessions_active_at_the_same_moment_are_listed_greater_id_first(
    tmp_path, shape, staff_client
):
    """A tie in activity is broken by the greater id, on /live/ and the home page's running
    sessions, whatever order the database hands the rows in (it differed between a file and a
    schema)."""
    now = time.time()
    db = StateDB.create(tmp_path / "tie.db", shape)
    for sid in ("tie-b", "tie-d", "tie-a", "tie-c"):
        db.session(sid, source="cli", started_at=now - 100, last_activity_at=now - 20)
        db.message(sid, "user", "same moment", timestamp=now - 20)
    db.refresh_counters()
    db.close()
    use_store(tmp_path / "tie.db")
    cache.clear()
    listed = [s.id for s in staff_client.get("/live/").context["sessions"]]
    assert listed == ["tie-d", "tie-c", "tie-b", "tie-a"]
    running = [s.id for s in staff_client.get("/").context["running"]]
    assert running == ["tie-d", "tie-c", "tie-b", "tie-a"]
    connections["hermes"].close()


def test_live_row_shows_counts_tokens_cost_and_latest_tool(current_live, staff_client):
    s = staff_client.get("/live/").context["sessions"][0]
    assert (s.message_count, s.tokens, s.cost) == (4, 1500, 0.0123)
    assert s.model == "claude-sonnet-4.5"
    assert s.last_tool == "terminal"
    assert s.last_role == "assistant"
    assert SECRET not in s.preview and "Deployed with key" in s.preview


def test_partial_is_only_the_table(current_live, staff_client):
    response = staff_client.get("/live/?partial=1")
    html = response.content.decode()
    assert response.status_code == 200
    assert "<table" in html and "<html" not in html and "run-1" in html


@pytest.mark.parametrize("minutes", ["0", "-5", "abc", "99999999", ""])
def test_bad_minutes_never_error(current_live, staff_client, minutes):
    assert staff_client.get("/live/", {"minutes": minutes}).status_code == 200


def test_minutes_widen_the_window(current_live, staff_client):
    ids = {s.id for s in staff_client.get("/live/?minutes=180").context["sessions"]}
    assert "old-ended" in ids and "old-open" not in ids


def test_viewer_sees_metadata_but_no_preview(current_live):
    response = client_for("viewer").get("/live/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "run-1" in html and "Deployed with key" not in html
    assert all(s.preview == "" for s in response.context["sessions"])


def test_page_has_no_inline_script(current_live, staff_client):
    html = staff_client.get("/live/").content.decode()
    assert "<script>" not in html and "onclick" not in html


# Following a session --------------------------------------------------------------------


def test_session_page_offers_follow_only_when_running(current_live, staff_client):
    running = staff_client.get("/sessions/run-1/")
    assert running.context["follow"]["last_id"] == current_live["last"]
    assert 'aria-pressed="false"' in running.content.decode()
    assert staff_client.get("/sessions/old-ended/").context["follow"] is None


def test_viewer_gets_no_follow_and_no_messages(current_live):
    viewer = client_for("viewer")
    assert viewer.get("/sessions/run-1/").context["follow"] is None
    assert viewer.get("/sessions/run-1/after/0/").status_code == 403


def test_after_returns_new_messages_paired_and_redacted(live_store, staff_client):
    response = staff_client.get("/sessions/run-1/after/0/")
    assert response.status_code == 200
    html = response.content.decode()
    # The tool result sits under its call (files without tool_call_id cannot pair them).
    assert html.count('class="msg ') == (3 if live_store["pairs"] else 4)
    assert "make deploy" in html and SECRET not in html
    assert response["X-Last-Message-Id"] == str(live_store["last"])
    empty = staff_client.get(f"/sessions/run-1/after/{live_store['last']}/")
    assert empty.content == b"" and empty["X-Last-Message-Id"] == str(live_store["last"])


def test_after_unknown_session_is_404(current_live, staff_client):
    assert staff_client.get("/sessions/nope/after/0/").status_code == 404


# A live writer ---------------------------------------------------------------------------


def test_live_writer_activity_shows_up_and_nothing_errors(tmp_path, staff_client):
    """A thread appends a message every ~100 ms for ~2 s to a WAL store, as Hermes does,
    while the page, the partial and the follow endpoint are polled."""
    cache.clear()
    caches["failures"].clear()
    path = tmp_path / "wal.db"
    build_live(path, "current")
    setup = sqlite3.connect(path)
    setup.execute("PRAGMA journal_mode=WAL")
    setup.close()
    use_store(path)
    stop = threading.Event()
    written: list[int] = []

    def writer():
        conn = sqlite3.connect(path, timeout=5)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(
            "INSERT INTO sessions (id, source, started_at, message_count, last_activity_at) "
            "VALUES ('run-new', 'discord', ?, 0, ?)",
            (time.time(), time.time()),
        )
        conn.commit()
        for n in range(20):
            if stop.is_set():
                break
            now = time.time()
            cur = conn.execute(
                "INSERT INTO messages (session_id, role, content, timestamp) "
                "VALUES ('run-new', 'assistant', ?, ?)",
                (f"step {n}", now),
            )
            conn.execute(
                "UPDATE sessions SET message_count = message_count + 1, last_activity_at = ? "
                "WHERE id = 'run-new'",
                (now,),
            )
            conn.commit()
            written.append(cur.lastrowid)
            time.sleep(0.1)
        conn.close()

    thread = threading.Thread(target=writer)
    thread.start()
    seen_new = False
    appended = 0
    last = 0
    try:
        deadline = time.time() + 4
        while thread.is_alive() and time.time() < deadline:
            for url in ("/live/", "/live/?partial=1"):
                response = staff_client.get(url)
                assert response.status_code == 200
                seen_new = seen_new or "run-new" in response.content.decode()
            after = staff_client.get(f"/sessions/run-new/after/{last}/")
            assert after.status_code in (200, 404)  # 404 only before the session commits
            if after.status_code == 200:
                appended += after.content.decode().count('class="msg ')
                last = int(after["X-Last-Message-Id"])
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join()
    final = staff_client.get(f"/sessions/run-new/after/{last}/")
    appended += final.content.decode().count('class="msg ')
    assert seen_new
    assert appended == len(written) == 20
    # Between requests the explorer holds no read transaction: a full checkpoint completes.
    conn = sqlite3.connect(path)
    busy, _log, _done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    conn.close()
    assert busy == 0
    connections["hermes"].close()
