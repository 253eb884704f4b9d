"""``/``: today against yesterday and this week against last, what runs now, the latest failures
and the week's costliest sessions, on every layout, checked against direct SQL.

Sessions are planted at fixed distances from the real clock (now, 1, 3, 8, 12 and 20 days
ago); which period each falls in is decided by the oracle from the local day bounds, so the
figures hold whatever the day of the week.  Cost follows insights: a session's usage rows,
or its own estimate when that is larger.
"""

from __future__ import annotations

import io
import os
import sqlite3
import time

import pytest
from django.core.cache import caches
from django.db import connections
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from hermes_fixtures.ddl import RELEASE_LAYOUTS, SHAPES
from live_app.home import periods
from sessions_app.timefmt import day_end_epoch, day_start_epoch, local_date
from tests.builders import StateDB, tool_call
from tests.conftest import use_store
from tests.roles_helpers import client_for

# Each layout's figures are direct SQL on the store; what goes through the cache (the figures
# computed ahead, read back later) is checked by the tests marked ``appdb`` and by the current
# layout's run of the others, which rerun on PostgreSQL and Redis.
pytestmark = [pytest.mark.django_db(databases=["default", "hermes"]), pytest.mark.render_context]

DAY = 86_400.0
AGES = (60, 1 * DAY, 3 * DAY, 8 * DAY, 12 * DAY, 20 * DAY)


def build_home(path, shape: str) -> dict:
    now = time.time()
    db = StateDB.create(path, shape)
    for n, age in enumerate(AGES):
        sid = f"h-{n}"
        t = now - age
        db.session(
            sid,
            source="telegram" if n % 2 else "cli",
            model="openai/gpt-5",
            title=f"<b>Session {n}</b>",
            started_at=t,
            ended_at=t + 30,
            end_reason="error" if n in (0, 3) else "completed",
            estimated_cost_usd=0.5 * (n + 1),
        )
        # Usage rows worth more than the session's own estimate for some sessions.
        db.model_usage(
            sid, "openai/gpt-5", estimated_cost_usd=0.75 * (n + 1) if n % 3 == 0 else 0.1
        )
        db.message(sid, "user", "go", timestamp=t + 1)
        db.message(
            sid,
            "assistant",
            None,
            timestamp=t + 2,
            tool_calls=[tool_call("terminal", {"n": n}, f"c{n}")],
        )
        error = n % 2 == 0
        db.message(
            sid,
            "tool",
            '{"error": "boom"}' if error else '{"output": "ok"}',
            timestamp=t + 3,
            tool_call_id=f"c{n}",
            tool_name="terminal",
        )
        db.message(sid, "assistant", "cut", timestamp=t + 4, finish_reason="length")
    # Running now: active a moment ago.
    db.session(
        "live-1", source="cli", title="Running job", started_at=now - 120, last_activity_at=now - 5
    )
    db.message("live-1", "user", "still going", timestamp=now - 5)
    db.refresh_counters()
    db.close()
    return {"path": path, "now": now}


def oracle(path, lo: float, hi: float) -> dict:
    """The figures of sessions started in ``[lo, hi)`` and failures in it, by direct SQL."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    scols = {r[1] for r in conn.execute("PRAGMA table_info(sessions)")}
    mcols = {r[1] for r in conn.execute("PRAGMA table_info(messages)")}
    usage = (
        "(SELECT SUM(u.estimated_cost_usd) FROM session_model_usage u WHERE u.session_id = s.id)"
        if "session_model_usage" in tables
        else "0"
    )
    own = "s.estimated_cost_usd" if "estimated_cost_usd" in scols else "0"
    tools = "s.tool_call_count" if "tool_call_count" in scols else "0"
    sessions, messages, tool_calls, cost = conn.execute(
        f"SELECT COUNT(*), COALESCE(SUM(s.message_count), 0), COALESCE(SUM({tools}), 0), "
        f"COALESCE(SUM(MAX(COALESCE({own}, 0), COALESCE({usage}, 0))), 0) "
        "FROM sessions s WHERE s.started_at >= ? AND s.started_at < ?",
        [lo, hi],
    ).fetchone()
    failures = conn.execute(
        "SELECT COUNT(*) FROM messages WHERE timestamp >= ? AND timestamp < ? AND "
        "((role = 'tool' AND json_extract(content, '$.error') IS NOT NULL)"
        + (
            " OR (role = 'assistant' AND finish_reason = 'length')"
            if "finish_reason" in mcols
            else ""
        )
        + ")",
        [lo, hi],
    ).fetchone()[0]
    if "end_reason" in scols:
        failures += conn.execute(
            "SELECT COUNT(*) FROM sessions WHERE started_at >= ? AND started_at < ? "
            "AND end_reason = 'error'",
            [lo, hi],
        ).fetchone()[0]
    conn.close()
    return {
        "sessions": sessions,
        "messages": messages,
        "tool_calls": tool_calls,
        "cost": round(cost, 6),
        "failures": failures,
    }


def _served(tmp_path, layout: str):
    """Empty caches and the home store of ``layout`` served for one test."""
    for alias in ("default", "failures", "reports"):
        caches[alias].clear()
    facts = build_home(tmp_path / f"{layout}.db", layout)
    use_store(facts["path"])
    yield facts
    connections["hermes"].close()


@pytest.fixture(
    params=[
        pytest.param(layout, marks=[pytest.mark.appdb] if layout == "current" else [])
        for layout in dict.fromkeys([*RELEASE_LAYOUTS, *SHAPES])
    ]
)
def home_store(request, tmp_path):
    yield from _served(tmp_path, request.param)


@pytest.fixture
def current_home(tmp_path):
    yield from _served(tmp_path, "current")


def _figures(response) -> dict:
    return {
        (row["metric"], cell["period"].key): cell["value"]
        for row in response.context["figures"]["table"]
        for cell in row["cells"]
    }


@pytest.mark.parametrize("zone", ["UTC", "Pacific/Auckland"])
def test_figures_match_direct_sql_on_every_layout(home_store, staff_client, settings, zone):
    settings.TIME_ZONE = zone
    response = staff_client.get("/")
    assert response.status_code == 200
    figures = _figures(response)
    for span in periods(local_date(time.time())):
        expected = oracle(home_store["path"], day_start_epoch(span.first), day_end_epoch(span.last))
        got = {metric: figures[(metric, span.key)] for metric in expected}
        got["cost"] = round(got["cost"], 6)
        assert got == expected, span
    # Something falls in each of the last two weeks (the 20-day-old session never does).
    assert figures[("sessions", "today")] >= 1 and figures[("sessions", "last_week")] >= 1


def test_what_a_file_cannot_show_is_said(home_store, staff_client):
    html = staff_client.get("/").content.decode()
    conn = sqlite3.connect(f"file:{home_store['path']}?mode=ro", uri=True)
    scols = {r[1] for r in conn.execute("PRAGMA table_info(sessions)")}
    mcols = {r[1] for r in conn.execute("PRAGMA table_info(messages)")}
    conn.close()
    assert ("This file does not record costs." in html) == ("estimated_cost_usd" not in scols)
    assert ("does not record <code>finish_reason</code>" in html) == ("finish_reason" not in mcols)
    assert ("does not record <code>end_reason</code>" in html) == ("end_reason" not in scols)


def test_each_figure_links_to_the_page_behind_it(home_store, staff_client):
    response = staff_client.get("/")
    for row in response.context["figures"]["table"]:
        for cell in row["cells"]:
            behind = staff_client.get(cell["href"])
            assert behind.status_code == 200, cell["href"]
            value, key = cell["value"], cell["period"].key
            if row["metric"] == "sessions":
                ids = [r.record.id for r in behind.context["table"].rows]
                assert len(ids) == value, (key, cell["href"])
            elif row["metric"] == "failures":
                listed = len(behind.context["failing"]) + len(behind.context["failed_sessions"])
                assert listed == value, (key, cell["href"])
            else:
                overview = behind.context["report"].overview
                name = {
                    "messages": "total_messages",
                    "tool_calls": "total_tool_calls",
                    "cost": "estimated_cost",
                }[row["metric"]]
                assert overview[name] == pytest.approx(value), (key, row["metric"])


def test_running_now_latest_failures_and_costliest(home_store, staff_client):
    response = staff_client.get("/")
    html = response.content.decode()
    assert "live-1" in [s.id for s in response.context["running"]]
    assert reverse("sessions:detail", args=["live-1"]) in html and 'href="/live/"' in html
    latest = response.context["latest_failures"]
    assert latest and latest == sorted(latest, key=lambda r: r["timestamp"], reverse=True)
    assert {r["session_id"] for r in latest} <= {"h-0", "h-1", "h-2"}
    costliest = response.context["figures"]["costliest"]
    week = periods(local_date(time.time()))[2]
    conn = sqlite3.connect(f"file:{home_store['path']}?mode=ro", uri=True)
    in_week = {
        r[0]
        for r in conn.execute(
            "SELECT id FROM sessions WHERE started_at >= ?", [day_start_epoch(week.first)]
        )
    }
    conn.close()
    assert {s["session_id"] for s in costliest} <= in_week
    assert [s["cost"] for s in costliest] == sorted((s["cost"] for s in costliest), reverse=True)
    assert "<b>Session" not in html  # titles escaped


def test_viewer_sees_the_home_page(home_store):
    response = client_for("viewer").get("/")
    assert response.status_code == 200
    assert response.context["figures"]["table"]


def new_version(path) -> None:
    """What a commit does to the file's signature: nothing is cached under the new one."""
    stat = os.stat(path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


@pytest.mark.appdb
def test_figures_computed_ahead_are_shown_as_of_their_time(current_home, staff_client, settings):
    from live_app import home

    kept = home.warm(budget=10, now=time.time() - 300)
    new_version(current_home["path"])
    response = staff_client.get("/")
    assert response.context["figures"]["generated_at"] == kept["generated_at"]
    assert response.context["stale"] and "computed ahead on a timer" in response.content.decode()
    settings.HERMES_INSIGHTS_STALE_SECONDS = 60  # too old now: computed again
    new_version(current_home["path"])
    response = staff_client.get("/")
    assert not response.context["stale"]
    assert response.context["figures"]["generated_at"] > kept["generated_at"]


@pytest.mark.appdb
def test_failures_warm_computes_the_figures_ahead(current_home, staff_client):
    from django.core.management import call_command

    call_command("failures_warm", stdout=io.StringIO())
    new_version(current_home["path"])
    with CaptureQueriesContext(connections["hermes"]) as queries:
        response = staff_client.get("/")
    assert response.status_code == 200
    assert not any("per AS MATERIALIZED" in q["sql"] for q in queries)
    assert _figures(response)[("sessions", "today")] >= 1


@pytest.mark.appdb
def test_sessions_per_source_are_computed_ahead_with_the_figures(current_home, staff_client):
    """No view groups every session by source: ``failures_warm`` computes the sums with the
    other figures, and the page shows them as of then (a new session counts from the next)."""
    from django.core.management import call_command

    call_command("failures_warm", stdout=io.StringIO())
    expected = {
        source: (n, m)
        for source, n, m in sqlite3.connect(current_home["path"]).execute(
            "SELECT source, COUNT(*), SUM(message_count) FROM sessions GROUP BY source"
        )
    }
    new_version(current_home["path"])
    with CaptureQueriesContext(connections["hermes"]) as queries:
        response = staff_client.get("/")
    assert not any("GROUP BY" in q["sql"] and "COUNT" in q["sql"] for q in queries)
    got = {r["source"]: (r["sessions"], r["messages"]) for r in response.context["sources"]}
    assert got == expected
    assert 'href="/sessions/?source=telegram"' in response.content.decode()


@pytest.mark.appdb
def test_the_latest_failed_sessions_are_read_a_few_at_a_time(current_home, staff_client):
    """The newest failed sessions are read with a LIMIT: the page stops at the few it shows
    instead of fetching every failed session of the week."""
    new_version(current_home["path"])
    with CaptureQueriesContext(connections["hermes"]) as queries:
        response = staff_client.get("/")
    failed = [q["sql"] for q in queries if "end_reason IN" in q["sql"]]
    assert failed and all("LIMIT" in sql for sql in failed)
    assert ("session_error", "h-0") in {
        (e["kind"], e["session_id"]) for e in response.context["latest_failures"]
    }


@pytest.mark.appdb
def test_the_period_table_is_read_from_insights_report(current_home, staff_client):
    """The period table adds up the days of insights' own report of the two weeks: with that
    report computed (as insights keeps it), the home page sums no sessions per day itself, and
    its figures are that report's days."""
    from insights_app import reports
    from insights_app.window import Window

    spans = periods(local_date(time.time()))
    report = reports.report_for(Window(days=None, from_epoch=day_start_epoch(spans[-1].first)))
    with CaptureQueriesContext(connections["hermes"]) as queries:
        response = staff_client.get("/")
    assert not any("lt / 86400" in q["sql"] for q in queries)
    week = [d for d in report.days_by_start if d.day >= spans[2].first]
    figures = _figures(response)
    assert figures[("sessions", "week")] == sum(d.sessions for d in week)
    assert figures[("tool_calls", "week")] == sum(d.tool_calls for d in week)
