"""Insights: Hermes's `hermes insights` numbers, checked against a small fixture by hand.

Every expected number below is a literal worked out from the rows the fixture writes (see the
comments next to them), never computed by the code under test.  The fixture is written in the
current shape and, for the degrade paths, the legacy and doc shapes.

Times: NOW is Thursday 2026-01-01 00:00 UTC; the report runs in UTC unless a test says so.

    id            source      started (UTC)         model                          notes
    s1-switch     cli         Tue 2025-12-30 10:00  anthropic/claude-sonnet-4.5    2 h; switched to gpt-5;
                                                                                    title aux row; tools, a skill
    s2-telegram   telegram    Sat 2025-12-27 08:00  anthropic/claude-sonnet-4.5    10 min; usage via openrouter
                                                                                    route + a vision aux row
    s3-partial    cli         Mon 2025-12-22 14:00  anthropic/claude-opus-4.1      1 h; rows cover part: residual
    s4-drift      slack       Sun 2025-12-28 10:00  hermes-4-70b                   ended before it started;
                                                                                    no rows; price unknown
    s5-included   api_server  Fri 2025-12-26 09:00  nousresearch/hermes-4-405b     50 min; subscription;
                                                                                    malformed tool_calls
    s6-edge-in    cron        Tue 2025-12-02 00:00  (none)                         exactly NOW - 30 days; open
    s7-edge-out   cron        NOW - 30 days - 1 s   x/y                            just outside 30 days
    s8-old        telegram    NOW - 75 days         a/b                            outside 30 days, inside 90
"""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3

import pytest
from django.db import connections
from django.test.utils import CaptureQueriesContext

from insights_app import reports, summaries
from insights_app.stats import Window, build_report
from tests.builders import StateDB, tool_call
from tests.conftest import use_store

pytestmark = [pytest.mark.django_db(databases=["default", "hermes"]), pytest.mark.render_context]

NOW = 1_767_225_600.0  # Thu 2026-01-01 00:00:00 UTC
DAY = 86_400.0
HOUR = 3_600.0
S1_START = NOW - 2 * DAY + 10 * HOUR
S2_START = NOW - 5 * DAY + 8 * HOUR
S3_START = NOW - 10 * DAY + 14 * HOUR
S4_START = NOW - 4 * DAY + 10 * HOUR
S5_START = NOW - 6 * DAY + 9 * HOUR
S6_START = NOW - 30 * DAY
S7_START = NOW - 30 * DAY - 1


def build_fixture(path, shape: str) -> str:
    db = StateDB.create(path, shape)

    # s1: cli, 2 h, switched from sonnet to gpt-5, plus a title-generation aux row.
    db.session(
        "s1-switch",
        source="cli",
        model="anthropic/claude-sonnet-4.5",
        title="Tidy the <b>scripts</b>",
        started_at=S1_START,
        ended_at=S1_START + 7200,
        message_count=9,
        tool_call_count=4,
        api_call_count=3,
        input_tokens=1000,
        output_tokens=200,
        cache_read_tokens=5000,
        cache_write_tokens=300,
        estimated_cost_usd=0.50,
        actual_cost_usd=0.45,
        cost_status="actual",
    )
    db.model_usage(
        "s1-switch",
        "anthropic/claude-sonnet-4.5",
        input_tokens=600,
        output_tokens=120,
        cache_read_tokens=3000,
        cache_write_tokens=200,
        reasoning_tokens=10,
        api_call_count=2,
        estimated_cost_usd=0.30,
        actual_cost_usd=0.27,
        cost_status="actual",
    )
    db.model_usage(
        "s1-switch",
        "openai/gpt-5",
        input_tokens=400,
        output_tokens=80,
        cache_read_tokens=2000,
        cache_write_tokens=100,
        reasoning_tokens=5,
        api_call_count=1,
        estimated_cost_usd=0.20,
        actual_cost_usd=0.18,
        cost_status="actual",
    )
    db.model_usage(
        "s1-switch",
        "google/gemini-2.5-flash",
        task="title_generation",
        input_tokens=50,
        output_tokens=5,
        api_call_count=1,
        estimated_cost_usd=0.01,
        cost_status="estimated",
    )
    db.daily_usage(
        "s1-switch", "2025-12-30", input_tokens=600, output_tokens=120, estimated_cost_usd=0.30
    )
    db.daily_usage(
        "s1-switch", "2025-12-31", input_tokens=400, output_tokens=80, estimated_cost_usd=0.20
    )
    t = S1_START
    db.message("s1-switch", "user", "tidy the scripts", timestamp=t + 10)
    db.message(
        "s1-switch",
        "assistant",
        None,
        timestamp=t + 20,
        tool_calls=[
            tool_call("terminal", {"command": "ls"}, "c1"),
            tool_call("read_file", {"path": "a.sh"}, "c2"),
        ],
    )
    db.message("s1-switch", "tool", "a.sh", timestamp=t + 30, tool_name="terminal")
    db.message("s1-switch", "tool", "#!/bin/sh", timestamp=t + 40, tool_name=None)  # CLI style
    db.message(
        "s1-switch",
        "assistant",
        "loading a skill",
        timestamp=t + 50,
        tool_calls=[tool_call("skill_view", {"name": "github-pr"}, "c3")],
    )
    db.message("s1-switch", "tool", "# github-pr", timestamp=t + 60, tool_name="skill_view")
    db.message(
        "s1-switch",
        "assistant",
        None,
        timestamp=t + 70,
        tool_calls=[tool_call("terminal", {"command": "make"}, "c4")],
    )
    db.message("s1-switch", "tool", "ok", timestamp=t + 80, tool_name="terminal")
    db.message("s1-switch", "assistant", "done", timestamp=t + 90)

    # s2: telegram, 10 min; the main loop went through another route of the same model, and a
    # vision aux row used the plain route: one session, two full names, one short name.
    db.session(
        "s2-telegram",
        source="telegram",
        model="anthropic/claude-sonnet-4.5",
        started_at=S2_START,
        ended_at=S2_START + 600,
        message_count=6,
        tool_call_count=1,
        api_call_count=2,
        input_tokens=2000,
        output_tokens=500,
        estimated_cost_usd=0.10,
        cost_status="estimated",
    )
    db.model_usage(
        "s2-telegram",
        "openrouter/anthropic/claude-sonnet-4.5",
        input_tokens=2000,
        output_tokens=500,
        api_call_count=2,
        estimated_cost_usd=0.10,
        cost_status="estimated",
    )
    db.model_usage(
        "s2-telegram",
        "anthropic/claude-sonnet-4.5",
        task="vision",
        input_tokens=100,
        output_tokens=10,
        api_call_count=1,
        estimated_cost_usd=0.01,
        cost_status="estimated",
    )
    t = S2_START
    db.message("s2-telegram", "user", "search the news", timestamp=t + 10)
    db.message(
        "s2-telegram",
        "assistant",
        None,
        timestamp=t + 20,
        tool_calls=[tool_call("web_search", {"query": "news"}, "w1")],
    )
    for i in range(3):  # the gateway logged three results for one call
        db.message(
            "s2-telegram", "tool", f"result {i}", timestamp=t + 30 + i, tool_name="web_search"
        )
    db.message("s2-telegram", "assistant", "here you go", timestamp=t + 40)

    # s3: usage rows cover only part of the counters (a legacy session): residual to opus.
    db.session(
        "s3-partial",
        source="cli",
        model="anthropic/claude-opus-4.1",
        started_at=S3_START,
        ended_at=S3_START + 3600,
        message_count=2,
        api_call_count=5,
        input_tokens=10_000,
        output_tokens=1000,
        estimated_cost_usd=2.0,
        cost_status="estimated",
    )
    db.model_usage(
        "s3-partial",
        "anthropic/claude-opus-4.1",
        input_tokens=4000,
        output_tokens=400,
        api_call_count=2,
        estimated_cost_usd=0.8,
        cost_status="estimated",
    )
    db.model_usage(
        "s3-partial",
        "google/gemini-2.5-flash",
        task="compression",
        input_tokens=3000,
        output_tokens=100,
        api_call_count=1,
        estimated_cost_usd=0.05,
        cost_status="estimated",
    )
    db.message("s3-partial", "user", "plan the migration", timestamp=S3_START + 10)
    db.message("s3-partial", "assistant", "here is the plan", timestamp=S3_START + 20)

    # s4: clock drift (ended 2 min before it started), no usage rows, no price.
    db.session(
        "s4-drift",
        source="slack",
        model="hermes-4-70b",
        started_at=S4_START,
        ended_at=S4_START - 120,
        message_count=2,
        input_tokens=400,
        output_tokens=100,
        estimated_cost_usd=None,
        cost_status="unknown",
    )
    db.message("s4-drift", "user", "what time is it", timestamp=S4_START + 10)
    db.message("s4-drift", "assistant", "earlier than you think", timestamp=S4_START + 20)

    # s5: subscription-included, and every kind of malformed tool_calls.
    db.session(
        "s5-included",
        source="api_server",
        model="nousresearch/hermes-4-405b",
        started_at=S5_START,
        ended_at=S5_START + 3000,
        message_count=6,
        tool_call_count=4,
        api_call_count=4,
        input_tokens=9000,
        output_tokens=900,
        estimated_cost_usd=0.0,
        cost_status="included",
    )
    db.model_usage(
        "s5-included",
        "nousresearch/hermes-4-405b",
        billing_mode="subscription_included",
        input_tokens=9000,
        output_tokens=900,
        api_call_count=4,
        estimated_cost_usd=0.0,
        cost_status="included",
    )
    t = S5_START
    db.message("s5-included", "user", "run it", timestamp=t + 10)
    db.message(
        "s5-included",
        "assistant",
        None,
        timestamp=t + 20,
        tool_calls='[{"id": "x", "function": {"name": "terminal", "arguments": "{\\"command',
    )
    db.message("s5-included", "assistant", "retry", timestamp=t + 30, tool_calls="terminal(ls)")
    db.message(
        "s5-included",
        "assistant",
        None,
        timestamp=t + 40,
        tool_calls='{"function": {"name": "terminal"}}',  # an object, not a list
    )
    db.message(
        "s5-included",
        "assistant",
        None,
        timestamp=t + 50,
        tool_calls=[
            "just a string",
            {"function": "oops"},
            {"function": {"name": 42}},
            tool_call("patch", {"path": "a.py"}, "p1"),
            # Arguments as an object instead of a JSON string: still read.
            {"id": "m1", "function": {"name": "skill_manage", "arguments": {"name": "github-pr"}}},
            {"id": "v1", "function": {"name": "skill_view", "arguments": "{bad"}},
            {"id": "v2", "function": {"name": "skill_view", "arguments": '{"name": "   "}'}},
            tool_call("skill_view", {"name": "home-assistant"}, "v3"),
        ],
    )
    db.message("s5-included", "assistant", "gave up", timestamp=t + 60)

    # s6: exactly at the 30-day edge (inside), never closed, no model, no price.
    db.session(
        "s6-edge-in",
        source="cron",
        model=None,
        started_at=S6_START,
        ended_at=None,
        message_count=1,
        input_tokens=100,
        output_tokens=10,
        estimated_cost_usd=None,
        cost_status=None,
    )
    db.message("s6-edge-in", "user", "ping", timestamp=S6_START + 10)

    # s7: one second before the 30-day edge (outside); its tools must not count.
    db.session(
        "s7-edge-out",
        source="cron",
        model="x/y",
        started_at=S7_START,
        ended_at=S7_START + 60,
        message_count=3,
        tool_call_count=1,
        input_tokens=99_999,
        output_tokens=1,
        estimated_cost_usd=9.0,
        cost_status="estimated",
    )
    db.message("s7-edge-out", "user", "nightly", timestamp=S7_START + 10)
    db.message(
        "s7-edge-out",
        "assistant",
        None,
        timestamp=S7_START + 20,
        tool_calls=[tool_call("terminal", {"command": "backup"}, "n1")],
    )
    db.message("s7-edge-out", "tool", "ok", timestamp=S7_START + 30, tool_name="terminal")
    db.daily_usage("s7-edge-out", "2025-12-01", input_tokens=99_999, estimated_cost_usd=9.0)

    # s8: 75 days back.
    db.session(
        "s8-old",
        source="telegram",
        model="a/b",
        started_at=NOW - 75 * DAY,
        ended_at=NOW - 75 * DAY + 60,
        message_count=1,
        input_tokens=7,
        output_tokens=3,
    )
    db.message("s8-old", "user", "hello", timestamp=NOW - 75 * DAY + 10)
    db.close()
    return str(path)


@pytest.fixture(autouse=True)
def utc(settings):
    settings.TIME_ZONE = "UTC"


@pytest.fixture(params=["current", "legacy", "doc"])
def shaped(request, tmp_path):
    use_store(build_fixture(tmp_path / f"{request.param}.db", request.param))
    yield request.param
    connections["hermes"].close()


@pytest.fixture
def current(tmp_path):
    path = build_fixture(tmp_path / "current.db", "current")
    use_store(path)
    yield path
    connections["hermes"].close()


def report(**window):
    return build_report(Window(**window), now=NOW, activity_days=True)


def by_name(rows, key):
    return {row[key]: row for row in rows}


# --- Overview --------------------------------------------------------------------------------


def test_overview_totals_match_hand_counts(current):
    o = report(days=30).overview
    assert o["total_sessions"] == 6  # s1..s6; s7 is one second too old, s8 far too old
    assert o["total_messages"] == 26  # message_count: 9 + 6 + 2 + 2 + 6 + 1
    assert o["total_tool_calls"] == 9  # tool_call_count: 4 + 1 + 4
    # Messages by role, counted in messages: s1 1/4/4, s2 1/2/3, s3 1/1, s4 1/1, s5 1/5, s6 1/0.
    assert (o["user_messages"], o["assistant_messages"], o["tool_messages"]) == (6, 13, 7)
    # Tokens are the sums over the models table (auxiliary rows and residuals included):
    # input 2700 + 400 + 3050 + 7000 + 400 + 9000 + 100; output 630 + 80 + 105 + 900 + 100 + 900
    # + 10; cache read 3000 + 2000; cache write 200 + 100.
    assert o["total_input_tokens"] == 22_650
    assert o["total_output_tokens"] == 2_725
    assert o["total_cache_read_tokens"] == 5_000
    assert o["total_cache_write_tokens"] == 300
    assert o["total_tokens"] == 30_675
    # Cost: per session the larger of its estimate and its rows' sum:
    # s1 0.51, s2 0.11, s3 2.00, s4 0, s5 0, s6 0.
    assert o["estimated_cost"] == pytest.approx(2.62)
    assert o["actual_cost"] == pytest.approx(0.45)
    # Durations: 7200 + 600 + 3600 + 3000 s; s4 (negative) and s6 (open) are ignored.
    assert o["total_hours"] == pytest.approx(4.0)
    assert o["avg_session_duration"] == pytest.approx(3600.0)
    assert o["avg_messages_per_session"] == pytest.approx(26 / 6)
    assert o["avg_tokens_per_session"] == pytest.approx(30_675 / 6)
    assert o["date_range_start"] == S6_START
    assert o["date_range_end"] == S1_START


def test_cost_buckets_count_included_and_unknown_sessions(current):
    o = report(days=30).overview
    assert o["included_cost_sessions"] == 1  # s5
    # s4 says "unknown"; s6 has no status and no estimate but used 110 tokens.
    assert o["unknown_cost_sessions"] == 2


# --- Models ----------------------------------------------------------------------------------


def test_models_merge_rows_and_residuals_by_short_name(current):
    models = report(days=30).models
    assert [m["model"] for m in models] == [
        "hermes-4-405b",  # 9900
        "claude-opus-4.1",  # 7900
        "claude-sonnet-4.5",  # 6530
        "gemini-2.5-flash",  # 3155
        "gpt-5",  # 2580
        "hermes-4-70b",  # 500
        "unknown",  # 110 (s6 has no model)
    ]
    m = by_name(models, "model")
    sonnet = m["claude-sonnet-4.5"]
    # s1 main row 600/120/3000/200, s2 openrouter row 2000/500, s2 vision row 100/10.
    assert (sonnet["input_tokens"], sonnet["output_tokens"]) == (2700, 630)
    assert (sonnet["cache_read_tokens"], sonnet["cache_write_tokens"]) == (3000, 200)
    assert sonnet["reasoning_tokens"] == 10
    assert sonnet["api_calls"] == 5  # 2 + 2 + 1
    assert sonnet["cost"] == pytest.approx(0.41)  # 0.30 + 0.10 + 0.01
    assert sonnet["tool_calls"] == 5  # s1's 4 and s2's 1 go to the sessions' own model
    # Two full routes share the short name; s2 used both but counts once.
    assert sonnet["sessions"] == 2
    flash = m["gemini-2.5-flash"]  # aux rows only: s1 titles 50/5, s3 compression 3000/100
    assert (flash["input_tokens"], flash["output_tokens"], flash["sessions"]) == (3050, 105, 2)
    assert flash["api_calls"] == 2
    assert flash["tool_calls"] == 0
    gpt = m["gpt-5"]
    assert (gpt["total_tokens"], gpt["sessions"], gpt["reasoning_tokens"]) == (2580, 1, 5)


def test_residual_subtracts_every_usage_row_as_hermes_does(current):
    opus = by_name(report(days=30).models, "model")["claude-opus-4.1"]
    # s3 counters 10000/1000/5 calls/$2.00; its rows (main 4000/400/2/$0.80 and compression
    # 3000/100/1/$0.05) sum to 7000/500/3/$0.85. Residual 3000/500/2/$1.15 goes to opus.
    # (Subtracting only the main-loop row would have given 6000/600/3/$1.20.)
    assert opus["input_tokens"] == 4000 + 3000
    assert opus["output_tokens"] == 400 + 500
    assert opus["api_calls"] == 2 + 2
    assert opus["cost"] == pytest.approx(0.80 + 1.15)
    assert opus["sessions"] == 1
    # A session without rows is all residual; reasoning residual is 0 (Hermes).
    drift = by_name(report(days=30).models, "model")["hermes-4-70b"]
    assert (drift["input_tokens"], drift["output_tokens"], drift["reasoning_tokens"]) == (
        400,
        100,
        0,
    )


def test_models_without_usage_table_come_from_session_counters(tmp_path):
    use_store(build_fixture(tmp_path / "doc.db", "doc"))
    r = report(days=30)
    assert r.models_from == "sessions"
    models = by_name(r.models, "model")
    assert list(models) == [
        "claude-opus-4.1",  # 10000 + 1000
        "hermes-4-405b",  # 9000 + 900
        "claude-sonnet-4.5",  # s1 1000 + 200, s2 2000 + 500
        "hermes-4-70b",
        "unknown",
    ]
    assert models["claude-sonnet-4.5"]["total_tokens"] == 3700
    assert models["claude-sonnet-4.5"]["sessions"] == 2
    assert models["claude-sonnet-4.5"]["cost"] == pytest.approx(0.60)
    o = r.overview
    assert o["total_tokens"] == 25_210  # input 22500 + output 2710; no cache columns
    assert o["estimated_cost"] == pytest.approx(2.60)
    assert o["total_tool_calls"] == 0  # no tool_call_count column
    assert o["included_cost_sessions"] == 0  # no cost_status column
    assert o["unknown_cost_sessions"] == 2  # s4 and s6: no estimate, tokens used
    # Tools and skills come from the messages, which every shape has.
    assert by_name(r.tools, "tool")["skill_view"]["count"] == 4
    assert [t["label"] for t in r.top_sessions] == [
        "Longest session",
        "Most messages",
        "Most tokens",
    ]


# --- Platforms, tools, skills -----------------------------------------------------------------


def test_platforms_per_source(current):
    platforms = report(days=30).platforms
    assert [p["platform"] for p in platforms] == [
        "cli",
        "api_server",
        "cron",
        "slack",
        "telegram",
    ]
    cli = platforms[0]
    # s1 + s3: 9 + 2 messages; tokens from the sessions' own counters.
    assert (cli["sessions"], cli["messages"], cli["tool_calls"]) == (2, 11, 4)
    assert (cli["input_tokens"], cli["output_tokens"]) == (11_000, 1200)
    assert cli["total_tokens"] == 11_000 + 1200 + 5000 + 300
    assert by_name(platforms, "platform")["telegram"]["total_tokens"] == 2500


def test_tools_take_the_larger_source_per_session(current):
    tools = report(days=30).tools
    assert [(t["tool"], t["count"]) for t in tools] == [
        ("skill_view", 4),  # s1: 1 call / 1 row; s5: 3 calls, no rows
        ("web_search", 3),  # s2: 1 call but 3 tool rows
        ("terminal", 2),  # s1: 2 calls / 2 rows; s5's terminal calls are all malformed
        ("patch", 1),
        ("read_file", 1),  # s1: the call counts though its tool row has no tool_name
        ("skill_manage", 1),
    ]
    assert tools[0]["percentage"] == pytest.approx(100 * 4 / 12)
    assert tools[2]["percentage"] == pytest.approx(100 * 2 / 12)


def test_skills_loads_edits_and_last_use(current):
    skills = report(days=30).skills
    assert skills["summary"] == {
        "total_skill_loads": 2,  # s1 github-pr, s5 home-assistant (bad and blank names skipped)
        "total_skill_edits": 1,  # s5 github-pr, arguments given as an object
        "total_skill_actions": 3,
        "distinct_skills_used": 2,
    }
    top = skills["top_skills"]
    assert [(s["skill"], s["view_count"], s["manage_count"]) for s in top] == [
        ("github-pr", 1, 1),
        ("home-assistant", 1, 0),
    ]
    assert top[0]["last_used_at"] == S1_START + 50  # s1's call is newer than s5's
    assert top[1]["last_used_at"] == S5_START + 50


# --- Activity and notable sessions ----------------------------------------------------------


def test_activity_weekdays_hours_streak(current):
    a = report(days=30).activity
    # Mon s3, Tue s1 + s6, Fri s5, Sat s2, Sun s4.
    assert [d["count"] for d in a["by_day"]] == [1, 2, 0, 0, 1, 1, 1]
    assert a["busiest_day"] == {"day": "Tue", "count": 2}
    hours = {h["hour"]: h["count"] for h in a["by_hour"] if h["count"]}
    assert hours == {0: 1, 8: 1, 9: 1, 10: 2, 14: 1}  # s6 0h, s2 8h, s5 9h, s1+s4 10h, s3 14h
    assert a["busiest_hour"] == {"hour": 10, "count": 2}
    # Dec 2, 22, 26, 27, 28, 30: six days; Dec 26-27-28 is the longest run.
    assert a["active_days"] == 6
    assert a["max_streak"] == 3


def test_activity_uses_the_configured_time_zone_across_dst(tmp_path, settings):
    settings.TIME_ZONE = "Europe/Berlin"
    db = StateDB.create(tmp_path / "tz.db", "current")
    db.session("summer", started_at=1_751_364_000.0)  # 2025-07-01 10:00 UTC = 12:00 CEST, Tue
    db.session("winter", started_at=1_764_631_800.0)  # 2025-12-01 23:30 UTC = 00:30 CET Dec 2
    db.close()
    use_store(tmp_path / "tz.db")
    r = build_report(Window(days=None), now=NOW)
    hours = {h["hour"]: h["count"] for h in r.activity["by_hour"] if h["count"]}
    assert hours == {12: 1, 0: 1}
    assert r.activity["busiest_day"] == {"day": "Tue", "count": 2}
    assert [d.day.isoformat() for d in r.days_by_start] == ["2025-07-01", "2025-12-02"]
    assert r.activity["max_streak"] == 1


def test_notable_sessions(current):
    top = {t["label"]: t for t in report(days=30).top_sessions}
    assert list(top) == ["Longest session", "Most messages", "Most tokens", "Most tool calls"]
    assert (top["Longest session"]["session_id"], top["Longest session"]["value"]) == (
        "s1-switch",
        "2h",
    )
    assert top["Longest session"]["date"] == "Dec 30"
    assert top["Most messages"]["value"] == "9 msgs"
    # input + output of the session counters: s3 has 11,000.
    assert (top["Most tokens"]["session_id"], top["Most tokens"]["value"]) == (
        "s3-partial",
        "11,000 tokens",
    )
    # s1 and s5 both made 4 calls: the most recently started wins.
    assert top["Most tool calls"]["session_id"] == "s1-switch"


# --- Window edges and filters ----------------------------------------------------------------


def test_window_edge_includes_the_boundary_and_not_a_second_before(current):
    r = report(days=30)
    assert r.overview["date_range_start"] == S6_START  # s6 starts exactly at now - 30 days
    assert "terminal" in by_name(r.tools, "tool")
    assert by_name(r.tools, "tool")["terminal"]["count"] == 2  # s7's terminal call is out
    wider = report(days=31)
    assert wider.overview["total_sessions"] == 7  # now s7 too
    assert report(days=90).overview["total_sessions"] == 8
    assert report(days=None).overview["total_sessions"] == 8


def test_source_filter(current):
    r = report(days=30, source="cli")
    assert r.overview["total_sessions"] == 2  # s1, s3
    assert [p["platform"] for p in r.platforms] == ["cli"]
    assert [(t["tool"], t["count"]) for t in r.tools] == [
        ("terminal", 2),
        ("read_file", 1),
        ("skill_view", 1),
    ]
    flash = by_name(r.models, "model")["gemini-2.5-flash"]
    assert (flash["input_tokens"], flash["sessions"]) == (3050, 2)
    sonnet = by_name(r.models, "model")["claude-sonnet-4.5"]
    assert (sonnet["input_tokens"], sonnet["sessions"], sonnet["tool_calls"]) == (600, 1, 4)
    assert report(days=30, source="nowhere").empty


def test_model_filter_accepts_short_and_full_names(current):
    short = report(days=30, model="claude-sonnet-4.5")
    full = report(days=30, model="anthropic/claude-sonnet-4.5")
    assert short.overview["total_sessions"] == full.overview["total_sessions"] == 2
    # A LIKE wildcard in the name is taken literally.
    assert report(days=30, model="claude%").empty


def test_custom_range_uses_local_days(current):
    r = report(days=None, start_day=_date("2025-12-26"), end_day=_date("2025-12-28"))
    assert sorted(t.day.isoformat() for t in r.days_by_start) == [
        "2025-12-26",
        "2025-12-27",
        "2025-12-28",
    ]
    assert r.overview["total_sessions"] == 3  # s5, s2, s4


def test_daily_series_by_start_and_by_activity_day(current):
    r = report(days=30)
    days = {d.day.isoformat(): d for d in r.days_by_start}
    assert list(days) == [
        "2025-12-02",
        "2025-12-22",
        "2025-12-26",
        "2025-12-27",
        "2025-12-28",
        "2025-12-30",
    ]
    # s1's whole usage (rows + residual): 1050 + 205 + 5000 + 300; cost max(0.50, 0.51).
    assert days["2025-12-30"].total_tokens == 6555
    assert days["2025-12-30"].cost == pytest.approx(0.51)
    assert days["2025-12-22"].total_tokens == 11_000  # s3: its counters exceed its rows
    assert sum(d.total_tokens for d in r.days_by_start) == r.overview["total_tokens"]
    activity = {d.day.isoformat(): d for d in r.days_by_activity}
    # s1's two daily rows; s7's row is outside the window.
    assert list(activity) == ["2025-12-30", "2025-12-31"]
    assert (activity["2025-12-31"].total_tokens, activity["2025-12-31"].sessions) == (480, 1)


def test_every_shape_gives_the_same_message_figures(shaped):
    r = report(days=30)
    o = r.overview
    assert (o["user_messages"], o["assistant_messages"], o["tool_messages"]) == (6, 13, 7)
    assert sum(t["count"] for t in r.tools) == 12
    assert r.skills["summary"]["total_skill_actions"] == 3
    assert r.activity["max_streak"] == 3
    if shaped == "legacy":
        assert r.days_by_activity is None  # no session_daily_usage in legacy files
        assert o["total_tokens"] == 30_675


@pytest.mark.parametrize("window", [{"days": 30}, {"days": 7}, {"days": None}, {"days": 90}])
def test_overview_without_the_models_table_equals_the_full_report(shaped, window):
    """The previous period's overview sums the models table without grouping it by model:
    every field equals the whole report's (roles aside), on every layout and window."""
    from insights_app.explorer import previous_report

    full = report(**window).overview
    alone = previous_report(Window(**window), NOW).overview
    assert alone["total_input_tokens"] > 0
    for key, value in alone.items():
        assert value == pytest.approx(full[key], rel=1e-12, abs=1e-12), key
    assert set(full) - set(alone) == {
        "user_messages",
        "assistant_messages",
        "tool_messages",
        "stored_messages",
    }


def test_empty_window_is_empty(current):
    r = build_report(Window(days=7), now=NOW + 365 * DAY)
    assert r.empty
    data = r.as_hermes_dict()
    assert (data["empty"], data["overview"], data["models"], data["top_sessions"]) == (
        True,
        {},
        [],
        [],
    )
    assert data["skills"]["summary"]["distinct_skills_used"] == 0


# --- Message summaries: cached, and invalidated by new rows ----------------------------------


def test_cached_and_uncached_reports_agree_and_new_rows_invalidate(current):
    first = report(days=30)
    again = build_report(Window(days=30), now=NOW, use_cache=False)
    assert first.tools == again.tools and first.overview == again.overview
    # Hermes appends a tool result to s2 (its counters lag behind).
    writer = sqlite3.connect(current)
    writer.execute(
        "INSERT INTO messages (session_id, role, content, tool_name, timestamp, active)"
        " VALUES ('s2-telegram', 'tool', 'late', 'web_search', ?, 1)",
        (S2_START + 50,),
    )
    writer.commit()
    writer.close()
    later = report(days=30)
    assert by_name(later.tools, "tool")["web_search"]["count"] == 4
    assert later.overview["tool_messages"] == 8


def test_warm_report_reads_no_messages(current):
    report(days=30)  # computes and keeps the per-session summaries
    with CaptureQueriesContext(connections["hermes"]) as queries:
        report(days=30)
    statements = [q["sql"] for q in queries.captured_queries]
    touching_messages = [s for s in statements if re.search(r"\bFROM messages\b", s)]
    assert touching_messages == ["SELECT MAX(id) FROM messages"]
    # Window span, the session statement, the short-name collision, window ids, high-water
    # mark, titles of the notable sessions.
    assert len(statements) <= 7


def test_message_pass_seeks_the_session_index(current):
    """The per-session pass seeks a (session_id, …) index, never scans messages, and groups
    in the index's order (no sort of every row)."""
    with connections["hermes"].cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + summaries.SUMMARY_SQL, ['["s1-switch"]'])
        plan = " | ".join(row[-1] for row in cursor.fetchall())
    assert "SEARCH m USING" in plan and "SCAN m" not in plan
    assert "TEMP B-TREE" not in plan


def test_deadline_leaves_sessions_uncounted_and_says_so(current, monkeypatch):
    from hermes_explorer.hermes_db.deadline import QueryTimeout

    def too_slow(*args, **kwargs):
        raise QueryTimeout(0.1)

    monkeypatch.setattr(summaries, "read", too_slow)
    r = build_report(Window(days=30), now=NOW, use_cache=False)
    assert r.sessions_uncounted == 6
    assert not r.messages_complete
    assert r.overview["total_sessions"] == 6  # the session figures still stand


def test_interrupted_collection_keeps_its_work(current, monkeypatch):
    from hermes_explorer.hermes_db.deadline import QueryTimeout

    monkeypatch.setattr(summaries, "CHUNK_SESSIONS", 4)
    real, calls = summaries.read, []

    def flaky(ids):
        calls.append(len(ids))
        if len(calls) == 2:
            raise QueryTimeout(0.1)
        return real(ids)

    monkeypatch.setattr(summaries, "read", flaky)
    first = build_report(Window(days=30), now=NOW)
    assert first.sessions_uncounted == 2  # 6 sessions: a chunk of 4 done, then the timeout
    second = build_report(Window(days=30), now=NOW)
    assert second.sessions_uncounted == 0
    assert calls == [4, 2, 2]  # the second report only computed the 2 missing sessions
    assert second.overview["tool_messages"] == 7


def test_collection_time_limit(current):
    r = build_report(Window(days=30), now=NOW, use_cache=False, collect_seconds=-1)
    assert r.sessions_uncounted == 6


# --- The page, the exports, the drill-down -------------------------------------------------


@pytest.fixture
def page(current, staff_client, monkeypatch):
    monkeypatch.setattr("insights_app.stats.current_time", lambda: NOW)
    return staff_client


def test_page_renders_every_section_with_links(page):
    response = page.get("/insights/?days=30")
    assert response.status_code == 200
    html = response.content.decode()
    for heading in ("Overview", "Models", "Platforms", "Top tools", "Skills", "Activity"):
        assert f">{heading}</h2>" in html
    assert "local estimates, not a bill" in html
    # Drill-down: model, source, day, tool, notable session; the window to the second
    # (NOW - 30 days), archived and hidden sessions included.
    since = "started_from_epoch=1764633600.0"
    assert f'href="/sessions/?{since}&amp;used_model=claude-sonnet-4.5&amp;flags=all"' in html
    assert f'href="/sessions/?{since}&amp;source=telegram&amp;flags=all"' in html
    day = "started_from_epoch=1767052800.0&amp;started_to_epoch=1767139200.0"
    assert f'href="/sessions/?{day}&amp;flags=all"' in html
    assert (
        'href="/messages/?tool_name=web_search&amp;role=tool&amp;session_'
        f'{since}&amp;show=compacted&amp;show=rewound&amp;show=hidden"' in html
    )
    assert 'href="/sessions/s1-switch/"' in html
    # The title is escaped wherever it shows.
    assert "Tidy the &lt;b&gt;scripts&lt;/b&gt;" in html
    assert "<b>scripts</b>" not in html
    # Charts are inline SVG with accessible names.
    # 3 daily, models, platforms, tools, heatmap; the explorer's own: cost by model, cache
    # hits per day and per model, reasoning tokens per model.
    assert html.count("<svg") == 11
    assert "aria-labelledby=" in html and "<desc id=" in html


def test_source_filter_is_kept_in_drill_down(page):
    html = page.get("/insights/?days=30&source=cli").content.decode()
    since = "started_from_epoch=1764633600.0"
    assert f'href="/sessions/?{since}&amp;source=cli&amp;used_model=gpt-5&amp;flags=all"' in html
    assert 'href="/messages/?tool_name=terminal&amp;role=tool&amp;source=cli&amp;session_' in html


@pytest.mark.parametrize(
    "query",
    [
        "",
        "?days=7",
        "?days=30",
        "?days=90",
        "?days=365",
        "?days=all",
        "?days=14",
        "?days=custom&start=2025-12-01&end=2025-12-31",
        "?start=2025-12-20",
        "?end=2025-12-20",
        "?days=30&source=telegram",
        "?days=30&source=unknown-source",
        "?days=30&model=gpt-5",
        "?days=30&basis=activity",
    ],
)
def test_page_is_200_on_every_shape_and_window(shaped, staff_client, query):
    response = staff_client.get("/insights/" + query)
    assert response.status_code == 200


def test_doc_shape_page_says_models_come_from_session_counters(tmp_path, staff_client):
    use_store(build_fixture(tmp_path / "doc.db", "doc"))
    html = staff_client.get("/insights/?days=all").content.decode()
    assert "no session_model_usage table" in html
    assert "By activity day" not in html  # no session_daily_usage: no choice offered


@pytest.mark.parametrize(
    "query",
    [
        "?days=abc",
        "?days=0",
        "?days=99999999",
        "?days=custom",
        "?start=2025-13-45",
        "?days=custom&end=9999-12-31",
        "?start=0001-01-01",
        "?days=custom&start=2025-12-31&end=2025-12-01",
        "?source=" + "x" * 500,
    ],
)
def test_bad_window_is_a_form_error_not_a_500(current, staff_client, query):
    response = staff_client.get("/insights/" + query)
    assert response.status_code == 200
    assert response.context["report"] is None
    assert response.context["form"].errors
    assert 'role="alert"' in response.content.decode()
    assert staff_client.get("/insights/" + query + "&_export=json").status_code == 400


def test_json_export_uses_hermes_field_names(page):
    response = page.get("/insights/?days=30&_export=json")
    assert response.status_code == 200
    data = json.loads(response.content)
    assert {
        "days",
        "source_filter",
        "empty",
        "overview",
        "models",
        "platforms",
        "tools",
        "skills",
        "activity",
        "top_sessions",
    } <= set(data)
    assert data["days"] == 30 and data["source_filter"] is None and data["empty"] is False
    assert {
        "total_sessions",
        "total_messages",
        "total_tool_calls",
        "total_input_tokens",
        "total_output_tokens",
        "total_cache_read_tokens",
        "total_cache_write_tokens",
        "total_tokens",
        "estimated_cost",
        "actual_cost",
        "total_hours",
        "avg_session_duration",
        "avg_messages_per_session",
        "avg_tokens_per_session",
        "user_messages",
        "assistant_messages",
        "tool_messages",
        "date_range_start",
        "date_range_end",
        "included_cost_sessions",
        "unknown_cost_sessions",
    } <= set(data["overview"])
    assert {
        "model",
        "sessions",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "reasoning_tokens",
        "total_tokens",
        "api_calls",
        "tool_calls",
        "cost",
    } <= set(data["models"][0])
    assert {
        "platform",
        "sessions",
        "messages",
        "input_tokens",
        "output_tokens",
        "total_tokens",
        "tool_calls",
    } <= set(data["platforms"][0])
    assert set(data["tools"][0]) >= {"tool", "count", "percentage"}
    assert set(data["skills"]) >= {"summary", "top_skills"}
    assert set(data["skills"]["top_skills"][0]) >= {
        "skill",
        "view_count",
        "manage_count",
        "last_used_at",
    }
    assert set(data["activity"]) >= {
        "by_day",
        "by_hour",
        "busiest_day",
        "busiest_hour",
        "active_days",
        "max_streak",
    }
    assert set(data["top_sessions"][0]) >= {"label", "session_id", "value"}
    assert data["overview"]["total_tokens"] == 30_675
    assert data["tools"][0] == {
        "tool": "skill_view",
        "count": 4,
        "percentage": pytest.approx(100 * 4 / 12),
        "url": "/messages/?tool_name=skill_view&role=tool&session_started_from_epoch=1764633600.0&show=compacted&show=rewound&show=hidden",
        "drilldown": "/messages/?tool_name=skill_view&role=tool&session_started_from_epoch=1764633600.0&show=compacted&show=rewound&show=hidden",
        "drilldown_count": 1,
        "calls_without_result": 3,
        "calls": 0,  # no result here answers a call by its id (docs/tool-calls.md)
    }


def test_csv_exports_each_table(page):
    for table, header in (
        ("models", "model,sessions,input_tokens"),
        ("platforms", "platform,sessions,messages"),
        ("tools", "tool,count,percentage"),
        ("skills", "skill,view_count,manage_count"),
        ("daily", "day,sessions,messages"),
    ):
        response = page.get(f"/insights/?days=30&_export=csv&table={table}")
        assert response.status_code == 200
        assert response["Content-Type"].startswith("text/csv")
        assert f"hermes-insights-{table}-30d.csv" in response["Content-Disposition"]
        assert response.content.decode().startswith(header)
    tools = page.get("/insights/?days=30&_export=csv&table=tools").content.decode()
    assert tools.splitlines()[1].startswith("skill_view,4,33.3333")
    assert page.get("/insights/?_export=csv&table=bogus").status_code == 400
    assert page.get("/insights/?_export=xml").status_code == 400


def test_csv_defuses_formula_names(tmp_path, staff_client):
    db = StateDB.create(tmp_path / "formula.db", "current")
    db.session("f1", started_at=NOW - DAY)
    db.message("f1", "tool", "x", tool_name='=HYPERLINK("http://evil")')
    db.close()
    use_store(tmp_path / "formula.db")
    body = staff_client.get("/insights/?days=all&_export=csv&table=tools").content.decode()
    assert body.splitlines()[1].startswith("\"'=HYPERLINK")


def test_viewer_sees_the_page_without_message_links_or_exports(current, client):
    from tests.roles_helpers import make_user

    client.force_login(make_user("viewer", username="vera"))
    response = client.get("/insights/?days=all")
    assert response.status_code == 200
    html = response.content.decode()
    assert "/messages/?tool_name=" not in html
    assert "_export=json" not in html
    assert client.get("/insights/?_export=json").status_code == 403


def test_report_cache_reuses_a_report_until_the_file_changes(current, settings):
    settings.HERMES_INSIGHTS_STALE_SECONDS = 0
    reports.report_for(Window(days=None))
    cached = reports.report_for(Window(days=None))
    assert reports.report_for(Window(days=None)) is not None
    writer = sqlite3.connect(current)
    writer.execute("UPDATE sessions SET input_tokens = input_tokens + 1 WHERE id = 's8-old'")
    writer.commit()
    writer.close()
    fresh = reports.report_for(Window(days=None))
    assert fresh.generated_at >= cached.generated_at
    assert fresh.overview["total_input_tokens"] == cached.overview["total_input_tokens"] + 1


def test_a_recent_report_of_an_earlier_file_is_shown_as_of_its_time(current, settings):
    """While the file changes, the latest report (insights_warm's, on its timer) is shown for
    up to HERMES_INSIGHTS_STALE_SECONDS, saying when it was computed; then one is computed."""
    settings.HERMES_INSIGHTS_STALE_SECONDS = 600
    first = reports.report_for(Window(days=None))
    writer = sqlite3.connect(current)
    writer.execute("UPDATE sessions SET input_tokens = input_tokens + 1 WHERE id = 's8-old'")
    writer.commit()
    writer.close()
    shown = reports.report_for(Window(days=None))
    assert shown.generated_at == first.generated_at
    assert shown.overview == first.overview
    settings.HERMES_INSIGHTS_STALE_SECONDS = 0
    fresh = reports.report_for(Window(days=None))
    assert fresh.overview["total_input_tokens"] == first.overview["total_input_tokens"] + 1


def _date(text):
    import datetime as dt

    return dt.date.fromisoformat(text)


def test_reasoning_tokens_of_files_without_usage_rows_come_from_the_sessions(tmp_path):
    """An older file (no session_model_usage) still records reasoning on its sessions."""
    path = tmp_path / "no-usage.db"
    with StateDB.create(path, "legacy") as db:
        db.session(
            "20260101_100000_aaaaaa",
            model="openai/gpt-5",
            started_at=NOW - 3600,
            input_tokens=100,
            output_tokens=50,
            reasoning_tokens=700,
        )
        db.session(
            "20260101_110000_bbbbbb",
            model="openai/gpt-5",
            started_at=NOW - 1800,
            input_tokens=10,
            output_tokens=5,
            reasoning_tokens=300,
        )
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE session_model_usage")
    conn.commit()
    conn.close()
    use_store(path)
    r = report(days=30)
    assert r.models_from == "sessions"
    assert by_name(r.models, "model")["gpt-5"]["reasoning_tokens"] == 1000
    assert r.overview["total_reasoning_tokens"] == 1000
    assert r.overview["stored_reasoning_tokens"] == 1000


def test_stored_reasoning_is_shown_beside_hermes_figure_when_usage_rows_leave_it_out(current):
    o = report(days=30).overview
    conn = sqlite3.connect(current)
    (per_session,) = conn.execute(
        "SELECT COALESCE(SUM(reasoning_tokens), 0) FROM sessions WHERE started_at >= ?",
        [NOW - 30 * 86400],
    ).fetchone()
    conn.close()
    assert o["stored_reasoning_tokens"] == per_session


def test_escaped_names_count_as_json_reads_them(tmp_path):
    """A tool name written with \\u escapes is the same name to Hermes's JSON reader: the
    skill calls are found even though their name is not in the text as it is."""
    db = StateDB.create(tmp_path / "escaped.db", "current")
    db.session("e1", source="cli", started_at=NOW - DAY, message_count=3, tool_call_count=3)
    escaped_skill = (
        '[{"id": "a", "type": "function", "function": {"name": "skill\\u005fview",'
        ' "arguments": "{\\"name\\": \\"escaped-skill\\"}"}},'
        ' {"id": "b", "type": "function", "function": {"name": "term\\u0069nal",'
        ' "arguments": "{}"}}]'
    )
    assert "skill_" not in escaped_skill and json.loads(escaped_skill)[1]["function"]["name"] == (
        "terminal"
    )
    db.message("e1", "user", "go", timestamp=NOW - DAY + 1)
    db.message("e1", "assistant", None, timestamp=NOW - DAY + 2, tool_calls=escaped_skill)
    db.message(
        "e1",
        "assistant",
        None,
        timestamp=NOW - DAY + 3,
        tool_calls=[tool_call("skill_manage", {"name": "plain-skill"}, "c")],
    )
    db.close()
    use_store(tmp_path / "escaped.db")
    try:
        r = build_report(Window(days=7), now=NOW, use_cache=False)
        assert {t["tool"]: t["count"] for t in r.tools} == {
            "skill_view": 1,
            "terminal": 1,
            "skill_manage": 1,
        }
        assert {
            (s["skill"], s["view_count"], s["manage_count"]) for s in r.skills["top_skills"]
        } == {
            ("escaped-skill", 1, 0),
            ("plain-skill", 0, 1),
        }
        assert r.skills["top_skills"][0]["last_used_at"] is not None
    finally:
        connections["hermes"].close()


def test_json_export_costs_carry_no_float_noise(tmp_path, staff_client):
    """A cost is a sum of floats, whose last binary digits depend on the order they were added
    in (a PostgreSQL schema adds them in another): the export gives it to a ten-billionth of a
    dollar, so 0.1 + 0.2 is 0.3 whichever adds it."""
    path = tmp_path / "costs.db"
    with StateDB.create(path, "current") as db:
        for n, cost in enumerate((0.1, 0.2)):
            db.session(f"s{n}", model="openai/gpt-5", estimated_cost_usd=cost, input_tokens=10)
    use_store(path)
    data = json.loads(staff_client.get("/insights/?days=all&_export=json").content)
    assert [day["cost"] for day in data["daily_by_start_day"]] == [0.3]
    assert data["overview"]["estimated_cost"] == 0.3
    assert data["models"][0]["cost"] == 0.3
    for table in ("models", "daily"):
        page = staff_client.get(f"/insights/?days=all&_export=csv&table={table}")
        (row,) = csv.DictReader(io.StringIO(page.content.decode()))
        assert row["cost"] == "0.3", table
