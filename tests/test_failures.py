"""/failures/: every failure kind Hermes records, counted per window, group and day.

The fixture plants each kind (times relative to the real clock, the window being "the last
N days"); the figures are checked against hand-counted literals and against direct SQL that
classifies rows with SQLite's JSON functions, independently of the page's own rules.

    session  source    model                        started   end_reason  planted
    s-a      telegram  anthropic/claude-sonnet-4.5  -2 d      error       4 tool errors of 7 results,
                                                                          finish length/content_filter/error
    s-b      cli       openai/gpt-5                 -10 d     timeout     terminal exit 1; a megabyte
                                                                          log mentioning "error" (not one)
    s-c      cli       openai/gpt-5                 -40 d     error       outside 30 days
    s-d      cron      openai/gpt-5                 -1 d      completed   one good result
"""

from __future__ import annotations

import csv
import io
import json
import time

import pytest
from django.core.cache import cache, caches
from django.db import connections
from django.urls import reverse

from hermes_fixtures.ddl import RELEASE_LAYOUTS, SHAPES
from tests.builders import StateDB, tool_call
from tests.conftest import use_store
from tests.roles_helpers import client_for

pytestmark = [pytest.mark.django_db(databases=["default", "hermes"]), pytest.mark.render_context]

DAY = 86_400.0
SECRET_WORDS = "rate limited by upstream"


def _tool(db, sid, t, name, content, n):
    call_id = f"call_{sid}_{n}"
    db.message(
        sid,
        "assistant",
        None,
        timestamp=t,
        finish_reason="tool_calls",
        tool_calls=[tool_call(name, {"x": n}, call_id)],
    )
    return db.message(sid, "tool", content, timestamp=t + 1, tool_call_id=call_id, tool_name=name)


def build_failures(path, shape: str) -> dict:
    now = time.time()
    db = StateDB.create(path, shape)
    facts: dict = {
        "path": path,
        "shape": shape,
        "has_finish": db.has("messages", "finish_reason"),
        "has_end": db.has("sessions", "end_reason"),
        "now": now,
    }
    t = now - 2 * DAY
    db.session(
        "s-a",
        source="telegram",
        model="anthropic/claude-sonnet-4.5",
        started_at=t,
        ended_at=t + 600,
        end_reason="error",
    )
    db.message("s-a", "user", "go", timestamp=t)
    _tool(db, "s-a", t + 10, "terminal", '{"output": "boom", "exit_code": 2, "error": null}', 1)
    _tool(db, "s-a", t + 20, "terminal", '{"output": "fine", "exit_code": 0, "error": null}', 2)
    _tool(db, "s-a", t + 30, "web_search", json.dumps({"error": SECRET_WORDS}), 3)
    _tool(db, "s-a", t + 40, "write_file", '{"success": false, "error": "permission denied"}', 4)
    _tool(db, "s-a", t + 50, "read_file", "Error: file not found: /etc/x", 5)
    _tool(db, "s-a", t + 60, "read_file", "plain file contents", 6)
    _tool(db, "s-a", t + 70, "memory", '{"success": true, "entries": 3}', 7)
    db.message("s-a", "assistant", "cut", timestamp=t + 80, finish_reason="length")
    db.message("s-a", "assistant", "blocked", timestamp=t + 90, finish_reason="content_filter")
    facts["newest"] = db.message(
        "s-a", "assistant", "oops", timestamp=t + 100, finish_reason="error"
    )
    db.message("s-a", "assistant", "done", timestamp=t + 110, finish_reason="stop")
    t = now - 10 * DAY
    db.session(
        "s-b",
        source="cli",
        model="openai/gpt-5",
        started_at=t,
        ended_at=t + 60,
        end_reason="timeout",
    )
    facts["exit1"] = _tool(
        db,
        "s-b",
        t + 10,
        "terminal",
        '{"output": "sh: foo: not found", "exit_code": 1, "error": "command not found"}',
        1,
    )
    big = "log line\n" * 60_000 + 'level=warn "error": "not really" tail\n' + "x" * 200_000
    _tool(db, "s-b", t + 20, "terminal", json.dumps({"output": big, "exit_code": 0}), 2)
    t = now - 40 * DAY
    db.session(
        "s-c", source="cli", model="openai/gpt-5", started_at=t, ended_at=t + 5, end_reason="error"
    )
    _tool(db, "s-c", t + 1, "terminal", '{"error": "old"}', 1)
    t = now - DAY
    db.session(
        "s-d",
        source="cron",
        model="openai/gpt-5",
        started_at=t,
        ended_at=t + 5,
        end_reason="completed",
    )
    _tool(db, "s-d", t + 1, "send_message", '{"ok": true}', 1)
    db.refresh_counters()
    db.close()
    return facts


def oracle(path, since: float) -> dict:
    """The same figures by direct SQL, classifying tool results with JSON functions."""
    import sqlite3

    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    cols = {r[1] for r in conn.execute("PRAGMA table_info(messages)")}
    scols = {r[1] for r in conn.execute("PRAGMA table_info(sessions)")}
    tool_error = conn.execute(
        "SELECT COUNT(*) FROM messages WHERE role = 'tool' AND timestamp >= ? AND ("
        "content LIKE 'Error%' OR CASE WHEN json_valid(content) THEN "
        "json_extract(content, '$.error') IS NOT NULL OR json_extract(content, '$.success') = 0 "
        "OR COALESCE(json_extract(content, '$.exit_code'), 0) != 0 ELSE 0 END)",
        [since],
    ).fetchone()[0]
    calls = conn.execute(
        "SELECT COUNT(*) FROM messages WHERE role = 'tool' AND timestamp >= ?", [since]
    ).fetchone()[0]
    out = {"tool_error": tool_error, "calls": calls}
    if "finish_reason" in cols:
        for reason in ("length", "content_filter", "error"):
            out[f"finish_{reason}"] = conn.execute(
                "SELECT COUNT(*) FROM messages WHERE role = 'assistant' AND finish_reason = ? "
                "AND timestamp >= ?",
                [reason, since],
            ).fetchone()[0]
    if "end_reason" in scols:
        out["session_error"] = conn.execute(
            "SELECT COUNT(*) FROM sessions WHERE started_at >= ? "
            "AND end_reason IN ('error', 'timeout')",
            [since],
        ).fetchone()[0]
    conn.close()
    return out


# Every shape, every release layout, and a few random subsets of the optional columns.
@pytest.fixture(params=[*dict.fromkeys([*RELEASE_LAYOUTS, *SHAPES]), "random-3", "random-11"])
def failures_store(request, tmp_path):
    cache.clear()
    caches["failures"].clear()
    facts = build_failures(tmp_path / f"{request.param}.db", request.param)
    use_store(facts["path"])
    yield facts
    connections["hermes"].close()


@pytest.fixture
def current_failures(tmp_path):
    cache.clear()
    caches["failures"].clear()
    facts = build_failures(tmp_path / "current.db", "current")
    use_store(facts["path"])
    yield facts
    connections["hermes"].close()


def test_figures_match_direct_sql_on_every_layout(failures_store, staff_client):
    response = staff_client.get("/failures/?days=30")
    assert response.status_code == 200
    report = response.context["report"]
    expected = oracle(failures_store["path"], report.since)
    assert report.kinds["tool_error"] == expected["tool_error"] == 5
    assert report.tool_calls == expected["calls"] == 10
    if failures_store["has_finish"]:
        for kind in ("finish_length", "finish_content_filter", "finish_error"):
            assert report.kinds[kind] == expected[kind] == 1
    else:
        assert "does not record <code>finish_reason</code>" in response.content.decode()
    if failures_store["has_end"]:
        assert report.kinds["session_error"] == expected["session_error"] == 2
    assert report.sessions == 3


def test_groups_carry_rates_next_to_counts(current_failures, staff_client):
    report = staff_client.get("/failures/?days=30").context["report"]
    terminal = next(g for g in report.by_tool if g.key == "terminal")
    assert (terminal.by_kind["tool_error"], terminal.tool_calls) == (2, 4)
    assert terminal.per_100_calls == 50.0
    telegram = next(g for g in report.by_source if g.key == "telegram")
    assert telegram.failures == 4 + 3 + 1  # tool errors, bad finishes, its failed end
    assert round(report.tool_error_rate, 1) == 50.0
    model = next(g for g in report.by_model if g.key == "gpt-5")
    assert model.by_kind["tool_error"] == 1 and model.sessions == 2


def test_window_and_filters(current_failures, staff_client):
    wide = staff_client.get("/failures/?days=60").context["report"]
    assert wide.kinds["tool_error"] == 6 and wide.kinds["session_error"] == 3
    tool = staff_client.get("/failures/?days=30&tool=terminal").context["report"]
    assert tool.kinds["tool_error"] == 2 and tool.tool_calls == 4
    assert tool.kinds["finish_length"] == 0 and tool.kinds["session_error"] == 0
    cli = staff_client.get("/failures/?days=30&source=cli").context["report"]
    assert cli.kinds["tool_error"] == 1 and cli.kinds["session_error"] == 1
    one_day = staff_client.get("/failures/?days=1").context["report"]
    assert one_day.failures == 0 and one_day.tool_calls == 1


def oracle_rows(path, since: float) -> tuple[list[int], list[str]]:
    """The failing message ids (newest first) and failed session ids, by direct SQL."""
    import sqlite3

    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    cols = {r[1] for r in conn.execute("PRAGMA table_info(messages)")}
    scols = {r[1] for r in conn.execute("PRAGMA table_info(sessions)")}
    finish = (
        "finish_reason IN ('length', 'content_filter', 'error')" if "finish_reason" in cols else "0"
    )
    ids = [
        r[0]
        for r in conn.execute(
            "SELECT id FROM messages WHERE timestamp >= ? AND ((role = 'tool' AND ("
            "content LIKE 'Error%' OR CASE WHEN json_valid(content) THEN "
            "json_extract(content, '$.error') IS NOT NULL OR json_extract(content, '$.success') = 0 "
            "OR COALESCE(json_extract(content, '$.exit_code'), 0) != 0 ELSE 0 END)) "
            f"OR (role = 'assistant' AND {finish})) ORDER BY id DESC",
            [since],
        )
    ]
    sessions = []
    if "end_reason" in scols:
        sessions = [
            r[0]
            for r in conn.execute(
                "SELECT id FROM sessions WHERE started_at >= ? AND end_reason IN ('error', 'timeout') "
                "ORDER BY started_at DESC",
                [since],
            )
        ]
    conn.close()
    return ids, sessions


def _listed(response) -> tuple[list[int], list[str]]:
    return (
        [e["message_id"] for e in response.context["failing"]],
        [e["session_id"] for e in response.context["failed_sessions"]],
    )


def test_list_holds_every_planted_failure_on_every_layout(failures_store, staff_client):
    response = staff_client.get("/failures/?days=30")
    messages, sessions = _listed(response)
    report = response.context["report"]
    assert (messages, sessions) == oracle_rows(failures_store["path"], report.since)
    assert len(messages) + len(sessions) == report.failures
    assert sessions == (["s-a", "s-b"] if failures_store["has_end"] else [])
    html = response.content.decode()
    assert reverse("sessions:detail", args=["s-b"]) in html
    if failures_store["has_end"]:
        assert "timeout" in html and "s-a" in html
    else:
        assert "does not record why sessions ended" in html


def test_list_links_to_the_exact_message(current_failures, staff_client):
    response = staff_client.get("/failures/?days=30")
    messages = response.context["failing"]
    # Newest first by insertion order (the id), as Hermes writes them: s-b's rows came last.
    assert messages[0]["message_id"] == current_failures["exit1"]
    assert current_failures["newest"] in [e["message_id"] for e in messages]
    assert len(messages) == 8  # 5 tool errors and 3 bad finishes
    url = reverse("sessions:message", args=["s-b", current_failures["exit1"]])
    assert url in response.content.decode()
    landed = staff_client.get(url)
    assert landed.status_code == 302 and f"#m{current_failures['exit1']}" in landed["Location"]


def _rows_behind(client, href: str) -> int:
    response = client.get(href.split("#")[0])
    assert response.status_code == 200
    return len(response.context["failing"]) + len(response.context["failed_sessions"])


def test_every_count_drills_down_to_the_rows_behind_it(current_failures, staff_client):
    response = staff_client.get("/failures/?days=30")
    report = response.context["report"]
    for _key, _label, count, link in response.context["kinds"]:
        assert _rows_behind(staff_client, link) == count, link
    for groups in (report.by_tool, report.by_model, report.by_source):
        for g in groups:
            assert _rows_behind(staff_client, g.href) == g.failures, g.href
            for kind, href in g.kind_hrefs.items():
                assert _rows_behind(staff_client, href) == g.by_kind[kind], href
    days = response.context["day_rows"]
    assert days
    for day, link, cells in days:
        assert _rows_behind(staff_client, link) == sum(count for count, _ in cells), day
        for count, cell in cells:
            assert _rows_behind(staff_client, cell) == count, cell
    # Narrowing the list leaves the counts as they were.
    narrowed = staff_client.get("/failures/?days=30&kind=tool_error&tool=terminal")
    assert [e["message_id"] for e in narrowed.context["failing"]][:1] == [current_failures["exit1"]]
    assert narrowed.context["report"].kinds["tool_error"] == 2
    assert narrowed.context["failed_sessions"] == []


def test_exports(current_failures, staff_client):
    data = staff_client.get("/failures/?days=30&_export=json").json()
    assert data["by_kind"]["tool_error"] == 5 and data["tool_calls"] == 10
    response = staff_client.get("/failures/?days=30&_export=csv")
    assert response.status_code == 200
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    terminal = next(r for r in rows if r["group"] == "tool" and r["key"] == "terminal")
    assert terminal["tool_error"] == "2" and terminal["tool_calls"] == "4"


def test_export_has_one_row_per_failure(failures_store, staff_client):
    report = staff_client.get("/failures/?days=30").context["report"]
    response = staff_client.get("/failures/?days=30&_export=csv&rows=1")
    assert response.status_code == 200
    body = b"".join(response.streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(body)))
    assert list(rows[0]) == [
        "kind",
        "when",
        "session_id",
        "title",
        "message_id",
        "tool",
        "model",
        "source",
        "end_reason",
    ]
    messages, sessions = oracle_rows(failures_store["path"], report.since)
    assert [int(r["message_id"]) for r in rows if r["message_id"]] == messages
    assert [r["session_id"] for r in rows if not r["message_id"]] == sessions
    kinds = {k: sum(r["kind"] == k for r in rows) for k in report.kinds}
    assert kinds == dict(report.kinds)
    terminal = [r for r in rows if r["tool"] == "terminal"]
    assert len(terminal) == 2 and {r["source"] for r in terminal} == {"telegram", "cli"}
    assert all(r["when"] for r in rows)
    assert SECRET_WORDS not in body and "permission denied" not in body
    lines = staff_client.get("/failures/?days=30&_export=jsonl&rows=1&source=cli")
    parsed = [json.loads(x) for x in b"".join(lines.streaming_content).decode().splitlines()]
    assert {r["source"] for r in parsed} == {"cli"} and len(parsed) == report.by_source[
        [g.key for g in report.by_source].index("cli")
    ].failures


def test_viewer_sees_counts_not_content_and_cannot_export(current_failures):
    viewer = client_for("viewer")
    response = viewer.get("/failures/?days=30")
    assert response.status_code == 200
    html = response.content.decode()
    assert response.context["report"].kinds["tool_error"] == 5
    assert SECRET_WORDS not in html and "permission denied" not in html
    assert viewer.get("/failures/?_export=csv").status_code == 403


def test_no_content_even_for_staff(current_failures, staff_client):
    html = staff_client.get("/failures/?days=30").content.decode()
    assert SECRET_WORDS not in html


@pytest.mark.parametrize(
    "query",
    [
        "days=abc",
        "days=-3",
        "days=100000",
        "source=%3Cscript%3E",
        "tool=" + "x" * 5000,
        "kind=%3Cb%3E",
        "start=2026-99-99&end=x",
        "start=0001-01-01&end=9999-12-31",
        "mpos=garbage&spos=W10",
    ],
)
def test_bad_input_never_errors(current_failures, staff_client, query):
    assert staff_client.get("/failures/?" + query).status_code == 200


@pytest.mark.parametrize(
    "query",
    ["days=abc", "days=0", "kind=%3Cb%3E", "start=nope", "mpos=damaged", "tool=" + "x" * 300],
)
def test_bad_input_is_a_form_error(current_failures, staff_client, query):
    """The page names the field and shows the window of the valid fields; an export of bad
    input is a JSON 400 naming the field."""
    field = query.split("=")[0]
    response = staff_client.get("/failures/?" + query)
    assert response.status_code == 200
    assert field in response.context["form"].errors
    assert 'class="form-errors"' in response.content.decode()
    assert response.context["report"].kinds["tool_error"] == 5  # the default window's
    export = staff_client.get("/failures/?_export=csv&rows=1&" + query)
    assert export.status_code == 400 and field in export.json()["errors"]


def test_repeat_view_is_cached(current_failures, staff_client):
    from django.db import connections as conns
    from django.test.utils import CaptureQueriesContext

    staff_client.get("/failures/?days=30")
    with CaptureQueriesContext(conns["hermes"]) as queries:
        assert staff_client.get("/failures/?days=30").status_code == 200
    assert len(queries) == 0


@pytest.mark.parametrize("block", [3, 7, 1000])
def test_blocks_read_whole_or_summed_give_the_same_report(current_failures, monkeypatch, block):
    """A block wholly inside the window is added from its cached sums, one the window cuts
    from its groups: every way of cutting the messages into blocks gives the same report."""
    from live_app import failures

    monkeypatch.setattr(failures, "BLOCK", block)
    now = time.time()
    summed = failures.build(failures.Filters(days=30), budget=10, now=now)
    caches["failures"].clear()
    monkeypatch.setattr(failures, "_digest", lambda *a: {"first_hour": None})
    grouped = failures.build(failures.Filters(days=30), budget=10, now=now)
    for name in ("kinds", "tool_calls", "sessions", "failed_sessions", "by_day"):
        assert getattr(summed, name) == getattr(grouped, name), name
    listed = [
        r["message_id"] for c in failures.failing_messages(failures.Filters(), budget=10) for r in c
    ]
    assert listed == sorted(listed, reverse=True) and len(listed) == 8
    for name in ("by_tool", "by_model", "by_source"):
        assert [(g.key, g.failures, g.tool_calls, g.by_kind) for g in getattr(summed, name)] == [
            (g.key, g.failures, g.tool_calls, g.by_kind) for g in getattr(grouped, name)
        ], name


def test_titles_are_redacted_in_the_list_and_the_export(current_failures, staff_client):
    import sqlite3

    secret = "sk-ant-api03-" + "B" * 40
    conn = sqlite3.connect(current_failures["path"])
    conn.execute(
        "UPDATE sessions SET title = 'key ' || ? || id WHERE id IN ('s-a', 's-b')", [secret]
    )
    conn.commit()
    conn.close()
    cache.clear()
    html = staff_client.get("/failures/?days=30").content.decode()
    assert "key [redacted: anthropic key]" in html and secret not in html
    export = staff_client.get("/failures/?days=30&_export=csv&rows=1")
    body = b"".join(export.streaming_content).decode()
    assert "key [redacted" in body and secret not in body
    home = staff_client.get("/").content.decode()
    assert secret not in home


def test_counts_are_rows_failures_warm_fills_and_the_page_reads(current_failures, staff_client):
    """``failures_warm`` keeps each block's counts as rows of the app database; after a
    restart (every cache empty) the page reads them instead of scanning the messages, and
    reads only the messages appended since (none of them missed)."""
    import sqlite3

    from django.core.management import call_command
    from django.test.utils import CaptureQueriesContext

    from live_app.models import FailureBlock

    call_command("failures_warm", stdout=io.StringIO())
    assert FailureBlock.objects.filter(upto__gt=0).exists()
    for alias in ("default", "failures", "reports"):
        caches[alias].clear()
    with CaptureQueriesContext(connections["hermes"]) as queries:
        report = staff_client.get("/failures/?days=30").context["report"]
    assert report.kinds["tool_error"] == 5
    assert not any("group_concat" in q["sql"] for q in queries)
    conn = sqlite3.connect(current_failures["path"])
    # A late call and its failing result (a result answering a call: docs/tool-calls.md).
    conn.execute(
        "INSERT INTO messages (session_id, role, tool_calls, timestamp) "
        """VALUES ('s-d', 'assistant', '[{"id": "late1", "function": {"name": "x"}}]', ?)""",
        [time.time() - 61],
    )
    conn.execute(
        "INSERT INTO messages (session_id, role, content, tool_call_id, timestamp) "
        "VALUES ('s-d', 'tool', 'Error: late', 'late1', ?)",
        [time.time() - 60],
    )
    conn.commit()
    conn.close()
    cache.clear()
    with CaptureQueriesContext(connections["hermes"]) as queries:
        report = staff_client.get("/failures/?days=30").context["report"]
    assert report.kinds["tool_error"] == 6
    scans = [q["sql"] for q in queries if "group_concat" in q["sql"]]
    assert len(scans) == 1
