"""Tool latency on ``/insights/`` (and ``tool_latency`` in its JSON) against direct SQL on
every layout: parallel calls, a result without a call, a CLI result without a tool name."""

from __future__ import annotations

import math
import sqlite3
import statistics

import pytest
from django.db import connections

from hermes_fixtures.ddl import RELEASE_LAYOUTS, SHAPES
from insights_app import summaries
from tests.builders import NASTY_NOW, StateDB, tool_call
from tests.conftest import use_store
from tests.profile_home import PROFILE_DBS, serve_home
from tests.roles_helpers import client_for
from tests.test_timeline import build_timeline

DAY = 86_400.0


def build_latency(path, layout) -> dict:
    """The timeline's session, plus a second session of terminal calls of 1 to 9 seconds and
    a read_file call of 3 s, and an old session outside the 30-day window."""
    facts = build_timeline(path, layout)
    db = StateDB(sqlite3.connect(path), getattr(layout, "name", layout), str(path))
    db.session("more", started_at=NASTY_NOW - 2 * DAY, source="telegram")
    at = NASTY_NOW - 2 * DAY
    for n, seconds in enumerate([4, 1, 9, 2, 7, 3]):
        db.message(
            "more", "assistant", None, tool_calls=[tool_call("terminal", {}, f"m{n}")], timestamp=at
        )
        db.message(
            "more", "tool", "ok", tool_call_id=f"m{n}", tool_name="terminal", timestamp=at + seconds
        )
        at += 60
    db.message(
        "more", "assistant", None, tool_calls=[tool_call("read_file", {}, "r1")], timestamp=at
    )
    db.message("more", "tool", "x", tool_call_id="r1", timestamp=at + 3)
    db.session("old", started_at=NASTY_NOW - 90 * DAY)
    db.message(
        "old",
        "assistant",
        None,
        tool_calls=[tool_call("terminal", {}, "o1")],
        timestamp=NASTY_NOW - 90 * DAY,
    )
    db.message(
        "old",
        "tool",
        "x",
        tool_call_id="o1",
        tool_name="terminal",
        timestamp=NASTY_NOW - 90 * DAY + 500,
    )
    db.refresh_counters()
    db.commit()
    db.close()
    return facts


def oracle(path, since: float) -> dict[str, list[float]]:
    """Per tool, the seconds from each call to its result, straight from SQL (json_each)."""
    conn = sqlite3.connect(path)
    rows = conn.execute(
        """SELECT COALESCE(t.tool_name, json_extract(j.value, '$.function.name')),
                  t.timestamp - a.timestamp
           FROM messages t JOIN sessions s ON s.id = t.session_id
           JOIN messages a ON a.session_id = t.session_id AND a.role = 'assistant' AND a.id < t.id
           JOIN json_each(a.tool_calls) j ON json_extract(j.value, '$.id') = t.tool_call_id
           WHERE t.role = 'tool' AND s.started_at >= ?""",
        [since],
    ).fetchall()
    conn.close()
    out: dict[str, list[float]] = {}
    for name, seconds in rows:
        out.setdefault(name, []).append(seconds)
    return out


# (No layout without ``timestamp``: every release has it, and the insights summaries read it.)
@pytest.fixture(params=[*dict.fromkeys([*RELEASE_LAYOUTS, *SHAPES]), "random-2"])
def latency_store(request, tmp_path, insights_now):
    summaries.forget_all()
    name = getattr(request.param, "name", request.param)
    facts = build_latency(tmp_path / f"{name}.db", request.param)
    use_store(facts["path"])
    yield facts
    connections["hermes"].close()


@pytest.mark.django_db(databases=["default", "hermes"])
def test_tool_latency_matches_direct_sql_on_every_layout(latency_store):
    client = client_for("analyst")
    data = client.get("/insights/?days=30&_export=json").json()
    columns = latency_store["columns"]
    page = client_for("viewer").get("/insights/?days=30").content.decode()
    if not {"timestamp", "tool_call_id"} <= columns:
        assert data["tool_latency"] is None
        assert "tool latency cannot be shown" in page
        return
    expected = oracle(latency_store["path"], NASTY_NOW - 30 * DAY)
    rows = {r["tool"]: r for r in data["tool_latency"]}
    assert set(rows) == set(expected) == {"terminal", "read_file"}  # web_search: no call
    for tool, times in expected.items():
        ordered = sorted(times)
        assert rows[tool]["calls"] == len(ordered)
        assert rows[tool]["median_s"] == pytest.approx(statistics.median(ordered), abs=1e-3)
        p95 = ordered[math.ceil(0.95 * len(ordered)) - 1]
        assert rows[tool]["p95_s"] == pytest.approx(p95, abs=1e-3)
    # terminal: 6.5 and 30 s (the timeline's session, one call parallel), 1 to 9 s (the other)
    assert rows["terminal"]["calls"] == 8
    assert rows["terminal"]["median_s"] == pytest.approx((4 + 6.5) / 2)
    assert rows["terminal"]["p95_s"] == pytest.approx(30)
    slowest = rows["terminal"]["slowest"][0]
    assert (slowest["session_id"], slowest["seconds"]) == ("tl", 30)
    assert f"/sessions/tl/timeline/#m{slowest['message_id']}" in page
    # The window counts: 365 days brings the old call in.
    wide = client.get("/insights/?days=365&_export=json").json()
    assert {r["tool"]: r["calls"] for r in wide["tool_latency"]}["terminal"] == 9
    telegram = client.get("/insights/?days=30&source=telegram&_export=json").json()
    assert {r["tool"]: r["calls"] for r in telegram["tool_latency"]} == {
        "terminal": 6,
        "read_file": 1,
    }
    csv = client.get("/insights/?days=30&_export=csv&table=tool_latency")
    assert csv.content.decode().splitlines()[0] == "tool,calls,median_s,p95_s,max_s"


@pytest.mark.django_db(databases=PROFILE_DBS)
def test_profiles_combine_every_call(tmp_path, settings, request, insights_now):
    """Over several profiles the median and p95 come from all their calls (a median of
    medians is no median), and each slowest call names its profile."""
    from hermes_explorer.stores import REGISTRY

    summaries.forget_all()
    home = tmp_path / ".hermes"
    (home / "profiles" / "bot").mkdir(parents=True)
    build_latency(home / "state.db", "current")
    db = StateDB.create(home / "profiles" / "bot" / "state.db", "v20")
    db.session("b1", started_at=NASTY_NOW - DAY)
    for n, seconds in enumerate([40, 50, 60]):
        at = NASTY_NOW - DAY + 100 * n
        db.message(
            "b1", "assistant", None, tool_calls=[tool_call("terminal", {}, f"b{n}")], timestamp=at
        )
        db.message(
            "b1", "tool", "ok", tool_call_id=f"b{n}", tool_name="terminal", timestamp=at + seconds
        )
    db.refresh_counters()
    db.commit()
    db.close()
    serve_home(settings, home, request)
    try:
        since = NASTY_NOW - 30 * DAY
        times = sorted(
            oracle(home / "state.db", since)["terminal"]
            + oracle(home / "profiles/bot/state.db", since)["terminal"]
        )
        data = client_for("analyst").get("/insights/?days=30&_export=json").json()
        row = {r["tool"]: r for r in data["tool_latency"]}["terminal"]
        assert row["calls"] == len(times) == 11
        assert row["median_s"] == pytest.approx(statistics.median(times))
        assert row["p95_s"] == pytest.approx(times[math.ceil(0.95 * len(times)) - 1])
        assert [(c["profile"], c["seconds"]) for c in row["slowest"][:3]] == [
            ("bot", 60),
            ("bot", 50),
            ("bot", 40),
        ]
        assert row["slowest"][3]["profile"] == "default"
        page = client_for("viewer").get("/insights/?days=30").content.decode()
        assert "/p/bot/sessions/b1/timeline/#m" in page
    finally:
        REGISTRY.rescan()
