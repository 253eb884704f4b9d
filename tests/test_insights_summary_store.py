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
from insights_app.models import StoredSummary, SummaryMark, SummaryTool
from insights_app.stats import Window, build_report
from sessions_app.models import Session
from tests.conftest import use_store
from tests.test_insights import NOW, S2_START, build_fixture, by_name

pytestmark = pytest.mark.django_db(databases=["default", "hermes"])

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
    real = summaries.compute

    def compute(ids, counts):
        computed.extend(ids)
        return real(ids, counts)

    monkeypatch.setattr(summaries, "compute", compute)
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


def test_router_sends_stored_summaries_to_the_app_database_only():
    router = HermesRouter()
    assert router.db_for_read(StoredSummary) is None
    assert router.db_for_write(StoredSummary) is None
    assert router.allow_migrate("default", "insights_app", "storedsummary") is None
    assert router.allow_migrate("hermes", "insights_app", "storedsummary") is False
    assert router.db_for_read(Session) == "hermes"
    with pytest.raises(HermesReadOnlyError):
        router.db_for_write(Session)
