"""The session timeline (``/sessions/<id>/timeline/``) against direct SQL on every layout."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace

import pytest
from django.db import connections
from django.test.utils import CaptureQueriesContext

from hermes_fixtures.ddl import LAYOUTS, RELEASE_LAYOUTS, SHAPES
from tests.builders import NASTY_NOW, StateDB, tool_call
from tests.conftest import use_store
from tests.roles_helpers import client_for

DAY = 86_400.0
T0 = NASTY_NOW - 3 * DAY
# The current layout without message times, call ids and user ids (no Hermes release lacks
# them, but a reader must still say what it cannot show).
BARE = replace(
    LAYOUTS["current"],
    name="bare",
    sessions=tuple(c for c in LAYOUTS["current"].sessions if c.name != "user_id"),
    messages=tuple(
        c for c in LAYOUTS["current"].messages if c.name not in ("timestamp", "tool_call_id")
    ),
)


def build_timeline(path, layout) -> dict:
    """One session with parallel calls, a result without a call, a CLI result without a tool
    name, a wait of two days, and (where the layout has them) a compacted and a hidden row."""
    db = StateDB.create(path, layout)
    db.session("tl", started_at=T0, user_id="u1")
    ids = {}

    def add(name, role, at, **cols):
        ids[name] = db.message("tl", role, cols.pop("content", name), timestamp=T0 + at, **cols)

    add("ask", "user", 0)
    calls = [
        tool_call("terminal", {"command": "ls"}, "call_a"),
        tool_call("read_file", {}, "call_b"),
    ]
    add("plan", "assistant", 5.5, tool_calls=calls, content=None)
    add("ls", "tool", 12, tool_call_id="call_a", tool_name="terminal")
    add("read", "tool", 15.25, tool_call_id="call_b")  # CLI style: no tool_name
    add("orphan", "tool", 16, tool_call_id="call_zzz", tool_name="web_search")
    add("again", "assistant", 20, tool_calls=[tool_call("terminal", {}, "call_c")], content=None)
    add("slow", "tool", 50, tool_call_id="call_c", tool_name="terminal")
    add("done", "assistant", 55)
    add("archived", "assistant", 56, active=0, compacted=1)
    add("scaffold", "assistant", 57, display_kind="hidden")
    add("later", "user", 57 + 2 * DAY)
    add("reply", "assistant", 60 + 2 * DAY)
    db.refresh_counters()
    db.commit()
    columns = {c for (c,) in db.conn.execute("SELECT name FROM pragma_table_info('messages')")}
    db.close()
    return {"path": str(path), "ids": ids, "columns": columns}


def oracle(path, columns, *, hidden=False) -> dict:
    """Waits and tool times straight from SQL: the previous visible row's time (LAG), and the
    assistant row whose tool_calls hold the result's call id."""
    conn = sqlite3.connect(path)
    keep = ["session_id = 'tl'"]
    if "active" in columns:
        archived = " OR (active = 0 AND compacted = 1)" if "compacted" in columns else ""
        keep.append(f"(active = 1 OR active IS NULL{archived})")
    if "display_kind" in columns and not hidden:
        keep.append("(display_kind IS NULL OR display_kind != 'hidden')")
    where = " AND ".join(keep)
    waits = {}
    if "timestamp" in columns:
        waits = dict(
            conn.execute(
                f"SELECT id, timestamp - LAG(timestamp) OVER (ORDER BY id) FROM messages "
                f"WHERE {where} ORDER BY id"
            )
        )
    tools = {}
    if "tool_call_id" in columns and "timestamp" in columns:
        tools = dict(
            conn.execute(
                "SELECT t.id, t.timestamp - a.timestamp FROM messages t JOIN messages a"
                " ON a.session_id = t.session_id AND a.role = 'assistant' AND a.id < t.id"
                " AND EXISTS (SELECT 1 FROM json_each(a.tool_calls) j"
                "             WHERE json_extract(j.value, '$.id') = t.tool_call_id)"
                " WHERE t.role = 'tool' AND t.session_id = 'tl'"
            )
        )
    ids = [r[0] for r in conn.execute(f"SELECT id FROM messages WHERE {where} ORDER BY id")]
    conn.close()
    return {"ids": ids, "waits": waits, "tools": tools}


@pytest.fixture(params=[*dict.fromkeys([*RELEASE_LAYOUTS, *SHAPES]), "random-5", BARE])
def timeline_store(request, tmp_path):
    name = getattr(request.param, "name", request.param)
    facts = build_timeline(tmp_path / f"{name}.db", request.param)
    use_store(facts["path"])
    yield facts
    connections["hermes"].close()


def _rows(client, query=""):
    response = client.get(f"/sessions/tl/timeline/?_export=json{query}")
    assert response.status_code == 200
    return json.loads(b"".join(response.streaming_content))


def _totals(response) -> str:
    """The page's totals section, as written."""
    page = response.content.decode()
    start = page.index('<section aria-labelledby="totals-h">')
    return page[start : page.index("</section>", start)]


@pytest.mark.django_db(databases=["default", "hermes"])
def test_timeline_matches_direct_sql_on_every_layout(timeline_store):
    facts, columns = timeline_store, timeline_store["columns"]
    expected = oracle(facts["path"], columns)
    client = client_for("analyst")
    rows = _rows(client)
    assert [r["message_id"] for r in rows] == expected["ids"]
    ids = facts["ids"]
    by_id = {r["message_id"]: r for r in rows}
    assert rows[0]["waited_s"] is None
    assert {r["spent_on"] for r in rows} == {"model", "tool", "user"}
    assert by_id[ids["plan"]]["spent_on"] == "model" and by_id[ids["ls"]]["spent_on"] == "tool"
    assert by_id[ids["later"]]["spent_on"] == "user"
    for row in rows[1:]:
        want = expected["waits"].get(row["message_id"])
        assert row["waited_s"] == (None if want is None else pytest.approx(want, abs=1e-3))
    for row in rows:
        want = expected["tools"].get(row["message_id"])
        assert row["tool_s"] == (None if want is None else pytest.approx(want, abs=1e-3))
    page = client.get("/sessions/tl/timeline/").content.decode()
    if "timestamp" in columns:
        assert 2 * DAY <= by_id[ids["later"]]["waited_s"] <= 2 * DAY + 2  # two days later
        assert "<svg" in page
    else:
        assert "records no message times" in page
        assert all(r["waited_s"] is None and r["at"] is None for r in rows)
    if "tool_call_id" in columns and "timestamp" in columns:
        # Parallel calls overlap: both results of "plan" name two calls running together.
        assert by_id[ids["ls"]]["tool_s"] == pytest.approx(6.5)
        assert by_id[ids["read"]]["tool_s"] == pytest.approx(9.75)
        assert by_id[ids["read"]]["tool_name"] == "read_file"  # named after its call
        assert by_id[ids["ls"]]["parallel_calls"] == 2 and by_id[ids["slow"]]["parallel_calls"] == 1
        assert by_id[ids["orphan"]]["tool_s"] is None  # no call asked for it
        assert "ran in parallel" in page
    else:
        assert all(r["tool_s"] is None for r in rows)
    if "tool_call_id" not in columns:
        assert "does not record which call a tool result answers" in page


@pytest.mark.django_db(databases=["default", "hermes"])
@pytest.mark.render_context
def test_totals_slowest_and_toggles(tmp_path):
    facts = build_timeline(tmp_path / "current.db", "current")
    use_store(facts["path"])
    client = client_for("analyst")
    response = client.get("/sessions/tl/timeline/")
    timeline = response.context["timeline"]
    rows = [r for r in _rows(client) if r["waited_s"] is not None]
    for kind in ("model", "tool", "user"):
        want = sum(r["waited_s"] for r in rows if r["spent_on"] == kind)
        assert timeline.totals[kind] == pytest.approx(want, abs=1e-2)
    assert timeline.slowest[0].message_id == facts["ids"]["later"]
    terminal = next(t for t in timeline.tools if t["tool"] == "terminal")
    assert terminal["calls"] == 2 and terminal["slowest"] == pytest.approx(30)
    # Hidden rows only when asked for, like the transcript.
    hidden = facts["ids"]["scaffold"]
    assert hidden not in [r["message_id"] for r in _rows(client)]
    shown = _rows(client, "&show=compacted,hidden")
    assert hidden in [r["message_id"] for r in shown]
    expected = oracle(facts["path"], facts["columns"], hidden=True)
    assert [r["message_id"] for r in shown] == expected["ids"]
    csv = b"".join(client.get("/sessions/tl/timeline/?_export=csv").streaming_content).decode()
    assert csv.splitlines()[0].startswith("message_id,role,tool_name,at,waited_s,spent_on,tool_s")
    connections["hermes"].close()


@pytest.mark.django_db(databases=["default", "hermes"])
def test_roles_and_links(tmp_path):
    facts = build_timeline(tmp_path / "current.db", "current")
    use_store(facts["path"])
    viewer = client_for("viewer")
    page = viewer.get("/sessions/tl/timeline/")
    assert page.status_code == 200  # times and roles are metadata
    assert "/messages/" not in page.content.decode()  # no way into the content
    assert viewer.get("/sessions/tl/timeline/?_export=json").status_code == 403
    analyst = client_for("analyst")
    assert (
        f"/sessions/tl/messages/{facts['ids']['ask']}/"
        in analyst.get("/sessions/tl/timeline/").content.decode()
    )
    assert "/sessions/tl/timeline/" in analyst.get("/sessions/tl/").content.decode()
    assert analyst.get("/sessions/nope/timeline/").status_code == 404
    connections["hermes"].close()


@pytest.mark.django_db(databases=["default", "hermes"])
def test_tool_names_are_redacted_as_metadata(tmp_path):
    db = StateDB.create(tmp_path / "secret.db", "current")
    db.session("tl", started_at=T0)
    key = "AKIAIOSFODNN7EXAMPLE"
    db.message("tl", "assistant", None, tool_calls=[tool_call(key, {}, "c1")], timestamp=T0)
    db.message("tl", "tool", "x", tool_call_id="c1", tool_name=key, timestamp=T0 + 1)
    db.commit()
    db.close()
    use_store(tmp_path / "secret.db")
    client = client_for("analyst")
    for body in (
        client.get("/sessions/tl/timeline/").content,
        b"".join(client.get("/sessions/tl/timeline/?_export=json").streaming_content),
    ):
        assert key.encode() not in body and b"redacted" in body
    connections["hermes"].close()


@pytest.mark.django_db(databases=["default", "hermes"])
@pytest.mark.render_context
def test_rows_come_a_page_at_a_time_and_the_figures_cover_the_session(tmp_path):
    """A page shows ``PER_PAGE`` rows and links the next by keyset; the totals, the chart and
    the slowest steps are the whole session's on every page, and an export has every row."""
    from sessions_app.timeline import PER_PAGE

    db = StateDB.create(tmp_path / "long.db", "current")
    db.session("long", started_at=T0)
    n = PER_PAGE + 30
    for i in range(n):
        role = ("user", "assistant")[i % 2]
        db.message("long", role, f"m{i}", timestamp=T0 + i * 2 + (500 if i == n - 1 else 0))
    db.commit()
    db.close()
    use_store(tmp_path / "long.db")
    client = client_for("analyst")
    export = client.get("/sessions/long/timeline/?_export=json")
    every = json.loads(b"".join(export.streaming_content))
    assert len(every) == n
    first = client.get("/sessions/long/timeline/")
    rows, timeline = first.context["rows"], first.context["timeline"]
    assert [r["id"] for r in rows] == [r["message_id"] for r in every[:PER_PAGE]]
    assert timeline.counts["user"] + timeline.counts["model"] == n - 1  # the first waits on none
    assert timeline.slowest[0].message_id == every[-1]["message_id"]  # on the second page
    assert timeline.span_s == pytest.approx((n - 1) * 2 + 500)
    cursor = first.context["page"].next_cursor
    assert cursor and f"cursor={cursor}" in first.content.decode()
    second = client.get(f"/sessions/long/timeline/?cursor={cursor}")
    assert [r["id"] for r in second.context["rows"]] == [r["message_id"] for r in every[PER_PAGE:]]
    # Each row keeps its own wait across the page break.
    assert second.context["rows"][0]["waited"] == "2.0\xa0s"
    assert _totals(second) == _totals(first)
    damaged = client.get("/sessions/long/timeline/?cursor=%%%")
    assert damaged.status_code == 200 and "damaged" in damaged.content.decode()
    connections["hermes"].close()


@pytest.mark.django_db(databases=["default", "hermes"])
@pytest.mark.render_context
def test_the_totals_are_rendered_once_per_language_and_role_while_the_file_is_unchanged(tmp_path):
    """Paging through a session, or coming back to it, reuses the rendered totals section of
    the whole session; another language, role (links or none) or toggle has its own, and a
    new message in the file renders them anew."""
    facts = build_timeline(tmp_path / "current.db", "current")
    use_store(facts["path"])
    section = "sessions_app/_timeline_totals.html"
    analyst, viewer = client_for("analyst"), client_for("viewer")
    first = analyst.get("/sessions/tl/timeline/")
    assert section in [t.name for t in first.templates]
    with CaptureQueriesContext(connections["hermes"]) as queries:
        again = analyst.get("/sessions/tl/timeline/")
    assert section not in [t.name for t in again.templates]
    # The session, the page's rows and their calls (the first page has no row before it).
    assert len(queries) == 3
    assert _totals(again) == _totals(first) and "/messages/" in _totals(first)
    french = analyst.get("/sessions/tl/timeline/", HTTP_ACCEPT_LANGUAGE="fr")
    assert "0.8\xa0s" in _totals(first) and "0,8\xa0s" in _totals(french)
    assert "/messages/" not in _totals(viewer.get("/sessions/tl/timeline/"))
    hidden = analyst.get("/sessions/tl/timeline/?show=compacted,hidden")
    assert section in [t.name for t in hidden.templates]
    conn = sqlite3.connect(facts["path"])
    conn.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES ('tl', 'user', ?, ?)",
        ["one more", T0 + 3 * DAY],
    )
    conn.commit()
    conn.close()
    changed = analyst.get("/sessions/tl/timeline/")
    assert section in [t.name for t in changed.templates] and _totals(changed) != _totals(first)
    connections["hermes"].close()
