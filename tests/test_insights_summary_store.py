"""The insights summaries are stored in the app's database: shared, kept across restarts,
refreshed for exactly the sessions that changed, and never written to the state.db.

"A restart" is :func:`summaries.forget_all`: the process memory is gone, the app database is
not.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connections
from django.test.utils import CaptureQueriesContext

from hermes_explorer.routers import HermesReadOnlyError, HermesRouter
from insights_app import summaries, summary_store
from insights_app.export import _costs_rounded
from insights_app.models import StoredSummary, SummaryMark, SummaryTool
from insights_app.stats import Window, build_report
from sessions_app.models import Session
from tests.conftest import use_store
from tests.test_insights import NOW, S2_START, build_fixture, by_name

pytestmark = [pytest.mark.django_db(databases=["default", "hermes"]), pytest.mark.appdb]

SUMMARY_SQL = re.compile(r"json_each\(")


@pytest.fixture(autouse=True)
def utc(settings):
    settings.TIME_ZONE = "UTC"


@pytest.fixture
def current(tmp_path):
    path = build_fixture(tmp_path / "current.db", "current")
    use_store(path)
    summaries.forget_all()
    yield path
    summaries.forget_all()
    connections["hermes"].close()


def report(days=90):
    return build_report(Window(days=days), now=NOW)


def restart():
    summaries.forget_all()
    connections["hermes"].close()


def fingerprint(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def recording(monkeypatch) -> list[str]:
    computed: list[str] = []
    real = summaries.read

    def read(ids):
        computed.extend(ids)
        return real(ids)

    monkeypatch.setattr(summaries, "read", read)
    return computed


def test_summaries_survive_a_restart_without_summary_sql(current):
    before = fingerprint(current)
    first = report()
    key = summary_store.store_key()
    assert StoredSummary.objects.filter(store_key=key).count() == 8  # all in 90 days
    assert SummaryMark.objects.get(store_key=key).high_water is not None
    restart()
    with CaptureQueriesContext(connections["hermes"]) as queries:
        again = report()
    statements = [q["sql"] for q in queries.captured_queries]
    assert not [s for s in statements if SUMMARY_SQL.search(s)]
    assert again.tools == first.tools and again.overview == first.overview
    assert again.skills == first.skills
    assert fingerprint(current) == before  # the state.db is never written


def test_a_new_process_picks_up_what_another_stored(current, monkeypatch):
    report()
    restart()
    computed = recording(monkeypatch)
    build_report(Window(days=30), now=NOW)
    assert computed == []


def test_message_appended_to_an_old_session_refreshes_exactly_it(current, monkeypatch):
    first = report()
    restart()  # the new row arrives while no process runs
    writer = sqlite3.connect(current)
    writer.execute(
        "INSERT INTO messages (session_id, role, content, tool_name, timestamp, active)"
        " VALUES ('s2-telegram', 'tool', 'late', 'web_search', ?, 1)",
        (S2_START + 50,),
    )
    writer.commit()
    writer.close()
    computed = recording(monkeypatch)
    later = report()
    assert computed == ["s2-telegram"]
    web = by_name(later.tools, "tool")["web_search"]["count"]
    assert web == by_name(first.tools, "tool")["web_search"]["count"] + 1
    key = summary_store.store_key()
    stored = SummaryTool.objects.filter(store_key=key, session_id="s2-telegram")
    fresh = summaries.compute(["s2-telegram"], {})["s2-telegram"]
    assert tuple(sorted(stored.values_list("tool_name", "count", "result_rows"))) == fresh.tools


def test_a_changed_message_count_refreshes_exactly_that_session(current, monkeypatch):
    report()
    restart()
    writer = sqlite3.connect(current)
    # A counter catching up (no new row): the stored count no longer matches.
    writer.execute("UPDATE sessions SET message_count = message_count + 1 WHERE id = 's3-partial'")
    writer.commit()
    writer.close()
    computed = recording(monkeypatch)
    report()
    assert computed == ["s3-partial"]


def test_usage_rows_changing_needs_no_summary_and_shows_at_once(current, monkeypatch):
    """Usage figures come from the live pass over the sessions, never from the summaries: a
    usage row that changes shows in the next report, and no summary is recomputed."""
    first = report()
    restart()
    writer = sqlite3.connect(current)
    writer.execute(
        "UPDATE session_model_usage SET input_tokens = input_tokens + 1000"
        " WHERE session_id = 's1-switch' AND model = 'openai/gpt-5'"
    )
    writer.commit()
    writer.close()
    computed = recording(monkeypatch)
    later = report()
    assert computed == []
    gpt5 = by_name(later.models, "model")["gpt-5"]["input_tokens"]
    assert gpt5 == by_name(first.models, "model")["gpt-5"]["input_tokens"] + 1000


def test_warm_command_builds_every_summary(current, monkeypatch):
    out = []
    monkeypatch.setattr("sys.stdout.write", out.append, raising=False)
    call_command("insights_warm", batch=3)
    key = summary_store.store_key()
    assert StoredSummary.objects.filter(store_key=key).count() == 8  # every session
    restart()
    computed = recording(monkeypatch)
    build_report(Window(days=None), now=NOW)
    assert computed == []


def test_warm_command_computes_the_preset_reports_the_first_views_read(
    current, monkeypatch, staff_client
):
    """After insights_warm (its timer, as deployed), the first view of a preset window after a
    restart runs no pass: it reads the report the command computed."""
    from insights_app import stats

    call_command("insights_warm", no_failures=True)
    restart()
    passes = []
    real = stats.one_pass
    monkeypatch.setattr(stats, "one_pass", lambda *a, **k: passes.append(1) or real(*a, **k))
    for days in (7, 30, 90, 365):
        assert staff_client.get(f"/insights/?days={days}").status_code == 200
    assert passes == []


def test_router_sends_stored_summaries_to_the_app_database_only():
    router = HermesRouter()
    assert router.db_for_read(StoredSummary) is None
    assert router.db_for_write(StoredSummary) is None
    assert router.allow_migrate("default", "insights_app", "storedsummary") is None
    assert router.allow_migrate("hermes", "insights_app", "storedsummary") is False
    assert router.db_for_read(Session) == "hermes"
    with pytest.raises(HermesReadOnlyError):
        router.db_for_write(Session)


# --- Windows checked in SQL, builds in the background, other processes ----------------------


def test_a_deleted_session_leaves_the_stored_window(current):
    first = report()
    restart()
    writer = sqlite3.connect(current)
    writer.execute("DELETE FROM messages WHERE session_id = 's3-partial'")
    writer.execute("DELETE FROM sessions WHERE id = 's3-partial'")
    writer.commit()
    writer.close()
    later = report()
    key = summary_store.store_key()
    assert not StoredSummary.objects.filter(store_key=key, session_id="s3-partial").exists()
    assert not SummaryTool.objects.filter(store_key=key, session_id="s3-partial").exists()
    unstored = build_report(Window(days=90), now=NOW, use_cache=False)
    assert later.tools == unstored.tools and later.skills == unstored.skills
    assert later.overview == unstored.overview
    assert later.overview["total_sessions"] == first.overview["total_sessions"] - 1


def test_stored_figures_equal_computed_ones_for_every_window(current):
    report(days=None)
    for window in (
        Window(days=7),
        Window(days=30),
        Window(days=None),
        Window(days=30, source="telegram"),
        Window(days=90, model="claude-sonnet-4.5"),
    ):
        restart()
        stored = build_report(window, now=NOW)
        computed = build_report(window, now=NOW, use_cache=False)
        assert stored.tools == computed.tools, window
        assert stored.skills == computed.skills, window
        assert stored.overview == computed.overview, window
        assert stored.tool_result_rows == computed.tool_result_rows, window


@pytest.fixture
def deferred_builds(monkeypatch):
    """A report leaves the summaries to insights_warm from one missing session on."""
    from insights_app import summary_build

    monkeypatch.setattr(summary_build, "BACKGROUND_FROM", 1)


def test_a_big_first_build_is_left_to_insights_warm(current, deferred_builds):
    from insights_app import summary_build

    partial = report()
    assert partial.summaries_build is None  # no thread of the request builds them
    assert partial.sessions_uncounted == partial.overview["total_sessions"] == 8
    assert partial.tools == [] and not partial.messages_complete
    # The figures that need no summary are there at once, and exact.
    unstored = build_report(Window(days=90), now=NOW, use_cache=False)
    assert partial.models == unstored.models and partial.platforms == unstored.platforms
    assert partial.overview["total_tokens"] == unstored.overview["total_tokens"]

    key = summary_store.store_key()
    seen = []
    assert summary_store.claim_build(key, 0)  # what the build thread does first…
    assert not summary_store.claim_build(key, 0)  # …and no other may while it lives
    summary_store.build_finished(key)
    summary_build.build(key, progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1] == (8, 8)
    assert summary_store.build_progress(key) is None  # finished
    done = report()
    assert done.summaries_build is None and done.messages_complete
    assert done.tools == unstored.tools and done.skills == unstored.skills
    assert done.overview == unstored.overview


def test_a_build_in_chunks_reads_each_session_once_newest_first(current, monkeypatch):
    from insights_app import summary_build

    key = summary_store.store_key()
    monkeypatch.setattr(summaries, "CHUNK_SESSIONS", 3)
    read = recording(monkeypatch)
    seen = []
    assert summary_build.build(key, progress=lambda d, t: seen.append((d, t))) == 8
    assert sorted(read) == sorted(set(read)) and len(read) == 8  # each session read once
    assert StoredSummary.objects.filter(store_key=key).count() == 8
    assert seen[-1] == (8, 8)


def test_a_failing_read_stops_the_build_and_says_so(current, monkeypatch):
    """An error reaches the build's caller, and the build is not left claimed: the next one
    completes the work."""
    from insights_app import summary_build

    key = summary_store.store_key()
    monkeypatch.setattr(summaries, "CHUNK_SESSIONS", 2)
    real, calls = summaries.read, []

    def breaks(ids):
        calls.append(ids)
        if len(calls) == 2:
            raise RuntimeError("the disk went away")
        return real(ids)

    monkeypatch.setattr(summaries, "read", breaks)
    with pytest.raises(RuntimeError, match="disk went away"):
        summary_build.build(key)
    assert summary_store.build_progress(key) is None  # not left claimed
    monkeypatch.setattr(summaries, "read", real)
    summary_build.build(key)  # the next build completes it
    assert StoredSummary.objects.filter(store_key=key).count() == 8


def test_the_page_says_how_far_the_build_is(current, deferred_builds, staff_client, monkeypatch):
    from insights_app import summary_build

    monkeypatch.setattr("insights_app.stats.current_time", lambda: NOW)
    key = summary_store.store_key()
    summaries.refresh_high_water()
    assert summary_store.claim_build(key, 10)
    summary_store.build_advanced(key, 4)
    html = staff_client.get("/insights/?days=90").content.decode()
    assert "Summaries being built: 40% (4 of 10 sessions)" in html
    # The page reloads itself while they are built (no script needed), and says so.
    assert '<meta http-equiv="refresh" content="3">' in html
    assert "reloads itself every 3 seconds" in html
    data = staff_client.get("/insights/?days=90&_export=json").json()
    assert data["summaries_being_built"] == {"done": 4, "total": 10}
    assert data["overview"]["total_sessions"] == 8  # the sessions' own figures are complete
    summary_store.build_finished(key)
    summary_build.build(key)
    data = staff_client.get("/insights/?days=90&_export=json").json()
    assert data["summaries_being_built"] is None and data["messages_complete"]
    assert 'http-equiv="refresh"' not in staff_client.get("/insights/?days=90").content.decode()


def test_a_dead_build_is_taken_over(current, monkeypatch):
    key = summary_store.store_key()
    summaries.refresh_high_water()
    assert summary_store.claim_build(key, 5)
    later = summary_store.time.time() + summary_store.BUILD_STALE_SECONDS + 1
    monkeypatch.setattr(summary_store.time, "time", lambda: later)
    assert summary_store.build_progress(key) is None
    assert summary_store.claim_build(key, 5)


WARM_THEN_READ = """
import json, sys
import django
django.setup()
from insights_app import summaries
from insights_app.stats import Window, build_report
def refuse(*args, **kwargs):
    raise AssertionError("a summary was computed")
summaries.read = refuse
report = build_report(Window(days=None), now=float(sys.argv[1]))
print(json.dumps({"tools": report.tools, "complete": report.messages_complete}))
"""


def test_summaries_are_shared_between_processes(current, tmp_path):
    """One process builds them (``insights_warm``), another reads them and computes none."""
    import json
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "hermes_explorer.settings",
        "HERMES_STATE_DB": str(current),
        "HERMES_EXPLORER_DATA_DIR": str(tmp_path / "data"),
        "DJANGO_SECRET_KEY": "test-only-secret",
        "HERMES_TIME_ZONE": "UTC",
    }
    before = fingerprint(current)

    def manage(*args):
        subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=root,
            env=env,
            check=True,
            capture_output=True,
            timeout=120,
        )

    manage("migrate", "--noinput")
    manage("insights_warm", "--no-failures")
    out = subprocess.run(
        [sys.executable, "-c", WARM_THEN_READ, str(NOW)],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    expected = build_report(Window(days=None), now=NOW, use_cache=False)
    assert seen["complete"] and seen["tools"] == json.loads(json.dumps(expected.tools))
    assert fingerprint(current) == before


def test_summaries_stored_meanwhile_by_another_process_are_replaced_not_lost(
    current, monkeypatch, caplog
):
    # These sessions are stored already (the first attempt, an INSERT, meets the unique
    # constraint), and another writer commits them again between the second attempt's DELETE
    # and INSERT (as two processes can on PostgreSQL): the third attempt replaces them.
    report()
    key = summary_store.store_key()
    stored = dict(StoredSummary.objects.filter(store_key=key).values_list("session_id", "stored"))
    ids = sorted(stored)[:3]
    fresh = summaries.compute(ids, {sid: None for sid in ids})
    real_drop = summary_store._drop
    calls = []

    def raced_drop(k, dropped):
        calls.append(list(dropped))
        if len(calls) > 1:
            real_drop(k, dropped)  # the retry sees the other writer's rows and drops them

    monkeypatch.setattr(summary_store, "_drop", raced_drop)
    with caplog.at_level("WARNING", logger=summary_store.log.name):
        summary_store.save(key, fresh, {})
    # (On PostgreSQL the driver may also warn that it ended the batch the first attempt's
    # INSERT broke: not the explorer's warning.)
    ours = [r for r in caplog.records if r.name == summary_store.log.name]
    assert len(calls) == 2 and not ours
    assert StoredSummary.objects.filter(store_key=key, session_id__in=ids).count() == 3


def test_new_summaries_are_inserted_without_a_delete_and_stored_ones_replaced(current):
    key = summary_store.store_key()
    ids = ["s1-switch", "s2-telegram"]
    fresh = summaries.compute(ids, {sid: None for sid in ids})
    with CaptureQueriesContext(connections["default"]) as queries:
        summary_store.save(key, fresh, {})
    assert not [q for q in queries.captured_queries if "DELETE" in q["sql"]]
    # Saved again (stored meanwhile by another process): replaced, not doubled.
    summary_store.save(key, fresh, {})
    assert StoredSummary.objects.filter(store_key=key).count() == 2
    tools = SummaryTool.objects.filter(store_key=key, session_id="s1-switch")
    assert tuple(sorted(tools.values_list("tool_name", "count", "result_rows"))) == (
        fresh["s1-switch"].tools
    )


def test_views_during_a_build_read_only_the_message_figures_again(
    current, deferred_builds, staff_client, monkeypatch
):
    from insights_app import stats, summary_build

    clock = iter(range(0, 10_000, 7))  # the clock moves on between views
    monkeypatch.setattr("insights_app.stats.current_time", lambda: NOW + next(clock))
    passes = []
    real = stats.one_pass

    def counted(*args, **kwargs):
        passes.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(stats, "one_pass", counted)
    url = "/insights/?days=90&_export=json"
    first = staff_client.get(url).json()
    assert not first["messages_complete"] and len(passes) == 1
    again = staff_client.get(url).json()
    assert not again["messages_complete"] and len(passes) == 1  # no second pass
    assert again["models"] == first["models"] and again["window"] == first["window"]
    # The previous period is measured from the report's own clock, in every view.
    assert again["explorer"]["previous_period"] == first["explorer"]["previous_period"]
    assert (
        first["explorer"]["previous_period"]["started_at_max_exclusive"]
        == (first["window"]["started_at_min"])
    )
    summary_build.build(summary_store.store_key())
    done = staff_client.get(url).json()
    assert done["messages_complete"] and done["summaries_being_built"] is None
    assert len(passes) == 1
    assert done["window"] == first["window"]  # the same bounds, to the second
    assert done["explorer"]["previous_period"] == first["explorer"]["previous_period"]
    fresh = build_report(
        Window(days=90), now=first["window"]["started_at_min"] + 90 * 86_400, use_cache=False
    ).as_hermes_dict()
    fresh = _costs_rounded(fresh)  # the export gives costs to a ten-billionth of a dollar
    assert done["overview"] == fresh["overview"]
    for key in ("tools", "models", "platforms"):
        # The JSON adds drill-down links to each row: Hermes's fields are compared.
        assert len(done[key]) == len(fresh[key]), key
        assert [{k: row[k] for k in want} for row, want in zip(done[key], fresh[key])] == fresh[
            key
        ], key
    assert done["skills"]["summary"] == fresh["skills"]["summary"]


def test_while_a_build_runs_views_do_not_compare_every_session(current, monkeypatch):
    from insights_app import summary_build
    from insights_app.figures import messages

    compared = []
    real = messages._window_sessions
    monkeypatch.setattr(
        messages, "_window_sessions", lambda scope: compared.append(1) or real(scope)
    )
    key = summary_store.store_key()
    summaries.refresh_high_water()
    assert summary_store.claim_build(key, 8)
    partial = report()
    assert compared == [] and not partial.messages_complete
    assert partial.summaries_build == (0, 8)
    summary_store.build_finished(key)
    summary_build.build(key)
    done = report()
    assert done.messages_complete and done.summaries_build is None
