"""One definition of a tool call (``docs/tool-calls.md``): every page that counts or times
calls agrees with one direct-SQL oracle, on a store with compaction copies, rewound and hidden
calls, results without a tool name, results answering no call, and reused call ids."""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter

import pytest
from django.core.cache import cache
from django.db import connections

from insights_app import summaries
from tests.builders import StateDB, tool_call
from tests.conftest import use_store
from tests.roles_helpers import client_for

HOUR = 3600.0
ALL = "show=compacted,rewound,hidden"


def build_calls(path) -> None:
    """Two sessions of the last days and one of three months ago, each history edit once."""
    now = time.time()
    db = StateDB.create(path, "current")

    def turn(sid, at, calls, results, **cols):
        """An assistant row calling ``calls`` (name, id), then a result per ``results`` entry
        (call id, tool_name, seconds after the call, content)."""
        uid = cols.pop("uids", None) or {}
        db.message(
            sid,
            "assistant",
            None,
            tool_calls=[tool_call(name, {}, cid) for name, cid in calls],
            timestamp=at,
            message_uid=uid.get("a"),
            **cols,
        )
        for cid, name, seconds, content in results:
            db.message(
                sid,
                "tool",
                content,
                tool_call_id=cid,
                tool_name=name,
                timestamp=at + seconds,
                message_uid=uid.get(cid),
                **cols,
            )

    db.session("s1", started_at=now - 2 * 86_400, source="cli")
    t = now - 2 * 86_400
    db.message("s1", "user", "go", timestamp=t)
    # Two calls in parallel; the CLI result has no tool name (named from its call).
    turn(
        "s1",
        t + 10,
        [("terminal", "c1"), ("read_file", "c2")],
        [("c1", "terminal", 4, "ok"), ("c2", None, 6, "Error: no such file")],
    )
    turn("s1", t + 30, [], [("c_none", "web_search", 2, "orphan")])  # answers no call
    # Compaction: the originals archived, then carried forward as live copies (same uids).
    uids = {"a": "ua", "c3": "u3"}
    turn(
        "s1",
        t + 40,
        [("terminal", "c3")],
        [("c3", "terminal", 5, "ok")],
        active=0,
        compacted=1,
        uids=uids,
    )
    db.message("s1", "assistant", "summary", timestamp=t + 60, _compressed_summary=1)
    turn("s1", t + 40, [("terminal", "c3")], [("c3", "terminal", 5, "ok")], uids=uids)
    # Carried by one compaction, archived by the next: two archived copies, no live one.
    uids = {"a": "ub", "c4": "u4"}
    turn(
        "s1",
        t + 70,
        [("patch", "c4")],
        [("c4", "patch", 3, "ok")],
        active=0,
        compacted=1,
        uids=uids,
    )
    turn(
        "s1",
        t + 70,
        [("patch", "c4")],
        [("c4", "patch", 3, "ok")],
        active=0,
        compacted=1,
        uids=uids,
    )
    # Rewound and hidden calls ran too.
    turn("s1", t + 90, [("terminal", "c5")], [("c5", "terminal", 7, "ok")], active=0, compacted=0)
    turn("s1", t + 100, [("todo", "c6")], [("c6", "todo", 1, "ok")], display_kind="hidden")
    db.message("s1", "assistant", "done", timestamp=t + 120)

    db.session("s2", started_at=now - 86_400, source="telegram")
    t = now - 86_400
    # A provider that numbers its calls per turn: the same id answers each turn's own call.
    turn("s2", t, [("terminal", "call_0")], [("call_0", "terminal", 9, "ok")])
    turn("s2", t + 20, [("read_file", "call_0")], [("call_0", None, 2, "ok")])
    turn("s2", t + 40, [("terminal", "call_0")], [("call_0", "terminal", 3, "Error: boom")])

    db.session("old", started_at=now - 90 * 86_400)
    turn("old", now - 90 * 86_400, [("terminal", "o1")], [("o1", "terminal", 50, "ok")])
    db.refresh_counters()
    db.commit()
    db.close()


ORACLE = """
WITH answered AS (
    SELECT t.id, t.session_id, t.tool_name, t.tool_call_id, t.timestamp, t.active,
           t.message_uid,
           (SELECT MAX(a.id) FROM messages a, json_each(a.tool_calls) j
            WHERE a.session_id = t.session_id AND a.role = 'assistant' AND a.id < t.id
              AND json_extract(j.value, '$.id') = t.tool_call_id) AS caller
    FROM messages t WHERE t.role = 'tool' AND t.tool_call_id <> ''
), once AS (
    SELECT *, ROW_NUMBER() OVER (
        PARTITION BY session_id, COALESCE(message_uid, 'row ' || id)
        ORDER BY active DESC, id) AS copy
    FROM answered WHERE caller IS NOT NULL
)
SELECT o.session_id, o.id,
       COALESCE(o.tool_name, (SELECT json_extract(j.value, '$.function.name')
                              FROM json_each(a.tool_calls) j
                              WHERE json_extract(j.value, '$.id') = o.tool_call_id)),
       o.timestamp - a.timestamp
FROM once o JOIN messages a ON a.id = o.caller JOIN sessions s ON s.id = o.session_id
WHERE o.copy = 1 AND s.started_at >= ?
"""


def oracle(path, since: float) -> list[tuple]:
    """``(session, result id, tool, seconds)`` of every call of the sessions started since."""
    conn = sqlite3.connect(path)
    rows = conn.execute(ORACLE, [since]).fetchall()
    conn.close()
    return rows


@pytest.fixture
def calls_store(tmp_path):
    summaries.forget_all()
    cache.clear()
    path = tmp_path / "calls.db"
    build_calls(path)
    use_store(path)
    yield str(path)
    connections["hermes"].close()


def _export(client, url):
    return json.loads(b"".join(client.get(url).streaming_content))


@pytest.mark.django_db(databases=["default", "hermes"])
@pytest.mark.render_context
def test_every_page_counts_the_calls_of_one_definition(calls_store):
    expected = oracle(calls_store, time.time() - 30 * 86_400)
    per_tool = Counter(name for _, _, name, _ in expected)
    # The store's traps, read by the oracle: copies once, rewound and hidden in, orphan out.
    assert per_tool == {"terminal": 5, "read_file": 2, "patch": 1, "todo": 1}
    analyst = client_for("analyst")

    # The timeline, every kind shown: its tools and the rows it times, per session.
    for sid in ("s1", "s2"):
        mine = [row for row in expected if row[0] == sid]
        page = analyst.get(f"/sessions/{sid}/timeline/?{ALL}").context["timeline"]
        assert {t["tool"]: t["calls"] for t in page.tools} == Counter(r[2] for r in mine)
        for tool in page.tools:
            seconds = sorted(r[3] for r in mine if r[2] == tool["tool"])
            assert tool["seconds"] == pytest.approx(sum(seconds))
            assert tool["slowest"] == pytest.approx(seconds[-1])
        rows = _export(analyst, f"/sessions/{sid}/timeline/?{ALL}&_export=json")
        timed = {r["message_id"]: (r["tool_name"], r["tool_s"]) for r in rows if r["tool_s"]}
        assert timed == {r[1]: (r[2], pytest.approx(r[3], abs=1e-3)) for r in mine}

    # Insights: tool latency (page and export), and each top tool's calls.
    data = analyst.get("/insights/?days=30&_export=json").json()
    latency = {r["tool"]: r for r in data["tool_latency"]}
    assert {tool: r["calls"] for tool, r in latency.items()} == per_tool
    for tool, row in latency.items():
        assert row["max_s"] == pytest.approx(max(r[3] for r in expected if r[2] == tool))
    assert {t["tool"]: t["calls"] for t in data["tools"]} == {
        t["tool"]: per_tool.get(t["tool"], 0) for t in data["tools"]
    }

    # Failures: the tool calls behind the error rate, per tool, and the failing ones.
    report = client_for("staff").get("/failures/?days=30").context["report"]
    assert {g.key: g.tool_calls for g in report.by_tool} == per_tool
    assert report.tool_calls == len(expected)
    assert report.kinds["tool_error"] == 2  # read_file in s1, terminal in s2 (orphan left out)


@pytest.mark.django_db(databases=["default", "hermes"])
@pytest.mark.render_context
def test_the_timeline_counts_what_its_toggles_show(calls_store):
    """Live only: the live and carried calls; each toggle adds the calls of its kind."""
    expected = oracle(calls_store, 0)
    analyst = client_for("analyst")

    def tools(show):
        page = analyst.get(f"/sessions/s1/timeline/?show={show}").context["timeline"]
        return {t["tool"]: t["calls"] for t in page.tools}

    assert tools("live") == {"terminal": 2, "read_file": 1}
    assert tools("compacted") == {"terminal": 2, "read_file": 1, "patch": 1}
    assert tools("rewound") == {"terminal": 3, "read_file": 1}
    assert tools("hidden") == {"terminal": 2, "read_file": 1, "todo": 1}
    every = tools("compacted,rewound,hidden")
    assert every == Counter(r[2] for r in expected if r[0] == "s1")
