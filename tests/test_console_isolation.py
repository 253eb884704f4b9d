"""The console cannot hold a worker or its memory: each statement runs in a process of its own,
killed at its deadline, with capped memory and a capped result; statements run on POST only."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import pytest
from django.db import connections
from django.test import Client
from django.urls import reverse

from accounts_app.models import AuditEvent
from hermes_explorer import host_slots
from tests.conftest import use_store

# Timing-sensitive: run apart from the parallel run (make test's second pass).
pytestmark = [
    pytest.mark.serial,
    pytest.mark.django_db(databases=["default", "hermes"]),
    pytest.mark.render_context,
]

# Work inside one SQL function call, which SQLite's progress handler cannot interrupt.
HUGE_LIKE = (
    "SELECT printf('%.*c', 8000000, 'a') LIKE '%' || printf('%.*c', 5000, 'a') || 'b%' AS hit"
)
HUGE_INSTR = "SELECT instr(printf('%.*c', 10000000, 'a'), printf('%.*c', 100000, 'a') || 'b') AS at"
# Results that would fill a worker's memory if they were kept.
ZEROBLOBS = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 256) "
    "SELECT zeroblob(4000000) AS b FROM c"
)
PRINTFS = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000) "
    "SELECT printf('%.*c', 1000000, 'x') AS s FROM c"
)


@pytest.fixture(scope="module")
def wal_store(nasty_stores, tmp_path_factory):
    """The current-layout fixture in WAL mode, where the console's own limits apply (a
    rollback-journal file shortens them: see test_journal_mode)."""
    path = tmp_path_factory.mktemp("console") / "state.db"
    with sqlite3.connect(nasty_stores["current"].path) as source, sqlite3.connect(path) as copy:
        source.backup(copy)
        copy.execute("PRAGMA journal_mode=WAL")
    return path


@pytest.fixture
def console(staff_client, wal_store):
    use_store(wal_store)
    yield staff_client
    connections["hermes"].close()


def _post(client, sql, **extra):
    started = time.monotonic()
    response = client.post(reverse("sql:console"), {"sql": sql, **extra})
    return response, time.monotonic() - started


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def _console_children() -> list[int]:
    """Live (or unreaped) child processes of this process."""
    me = str(os.getpid())
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[1] == me:
            found.append(int(entry))
    return found


# GET fills in, POST runs --------------------------------------------------------------------
def test_a_get_fills_in_the_form_but_never_runs_the_statement(console):
    response = console.get(reverse("sql:console"), {"sql": "SELECT count(*) FROM sessions"})
    assert response.status_code == 200
    assert response.context["result"] is None
    assert response.context["form"]["sql"].value() == "SELECT count(*) FROM sessions"
    assert "press Run to run it" in response.content.decode()
    assert not AuditEvent.objects.exists()


def test_a_get_with_export_does_not_download_either(console):
    response = console.get(reverse("sql:console"), {"sql": "SELECT 1", "_export": "csv"})
    assert response.status_code == 200
    assert not response.streaming
    assert not AuditEvent.objects.exists()


def test_running_takes_a_post_with_a_csrf_token(current_store, staff_user):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(staff_user)
    response = strict.post(reverse("sql:console"), {"sql": "SELECT 1"})
    assert response.status_code == 403
    assert not AuditEvent.objects.exists()
    page = strict.get(reverse("sql:console"))
    token = page.context["csrf_token"]
    response = strict.post(
        reverse("sql:console"), {"sql": "SELECT 1 AS one", "csrfmiddlewaretoken": str(token)}
    )
    assert response.status_code == 200
    assert response.context["result"].columns == ["one"]


def test_the_result_offers_a_link_and_downloads_that_post_the_same_statement(console):
    response, _ = _post(console, "SELECT :n AS n", n="7")
    body = response.content.decode()
    assert response.context["share_link"] == "/sql/?sql=SELECT+%3An+AS+n&n=7"
    assert 'name="_export" value="csv"' in body
    assert ("sql", "SELECT :n AS n") in response.context["replay"]
    download = console.post(
        reverse("sql:console"), dict(response.context["replay"]) | {"_export": "csv"}
    )
    assert b"".join(download.streaming_content).decode() == "n\r\n7\r\n"


# Time ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("sql", [HUGE_LIKE, HUGE_INSTR], ids=["like", "instr"])
def test_work_inside_one_function_call_is_stopped_at_the_deadline(console, settings, sql):
    assert settings.HERMES_SQL_TIMEOUT == 1
    response, elapsed = _post(console, sql)
    assert response.status_code == 400
    assert "ran longer than its 1 s limit" in response.context["error"]
    assert elapsed < settings.HERMES_SQL_TIMEOUT + 1
    assert _console_children() == [], "the statement's process was killed and reaped"


def test_a_request_the_child_cannot_read_in_time_leaves_no_process_behind(wal_store, monkeypatch):
    from console_app import isolation

    monkeypatch.setattr(isolation, "KILL_GRACE", 0)  # the deadline passes while it starts
    limits = isolation.Limits(timeout=0.001, max_rows=10, max_bytes=2**20)
    with pytest.raises(isolation.ConsoleTimeout):  # larger than a pipe holds unread
        isolation.run("SELECT :p", {"p": "x" * 2**20}, path=str(wal_store), limits=limits)
    assert _console_children() == [], "the statement's process was killed and reaped"


def test_a_download_is_stopped_at_its_own_deadline(console, settings):
    settings.HERMES_EXPORT_CHUNK_TIMEOUT = 1
    response, elapsed = _post(console, HUGE_INSTR, _export="csv")
    assert response.status_code == 400
    assert not response.streaming
    assert elapsed < 2


# Memory -------------------------------------------------------------------------------------
@pytest.mark.parametrize("sql", [ZEROBLOBS, PRINTFS], ids=["zeroblob", "printf"])
def test_a_huge_result_is_refused_as_too_large_without_growing_the_worker(console, sql):
    _post(console, "SELECT 1")  # warm up: templates, the first process start
    before = _rss_mb()
    response, elapsed = _post(console, sql)
    grown = _rss_mb() - before
    assert response.status_code == 400
    assert "The result is too large" in response.context["error"]
    assert "8 MB" in response.context["error"]
    assert response.context["result"] is None
    assert grown <= 64, f"the web process grew by {grown:.0f} MB"
    assert elapsed < 2


def test_a_huge_download_is_cut_at_its_byte_cap(console, settings):
    settings.HERMES_SQL_EXPORT_MAX_BYTES = 2 * 2**20
    before = _rss_mb()
    response, _ = _post(console, PRINTFS, _export="jsonl")
    assert response.status_code == 200
    lines = b"".join(response.streaming_content).splitlines()
    assert _rss_mb() - before <= 64
    assert len(lines) == 2  # two 1 MB rows fit under 2 MiB, the third does not
    assert response["X-Rows-Truncated"] == f"at {2 * 2**20} bytes"


def test_a_single_row_larger_than_the_row_cap_is_not_downloaded(console):
    response, _ = _post(console, "SELECT printf('%.*c', 5000000, 'x') AS s", _export="csv")
    assert response.status_code == 400
    assert "one row holds more than 4 MB" in response.context["error"]


def test_a_statement_that_needs_too_much_memory_is_stopped(console, settings):
    settings.HERMES_SQL_MEMORY_MB = 256
    response, _ = _post(
        console,
        "SELECT length(group_concat(printf('%.*c', 1000000, 'x'))) FROM "
        "(WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 400) "
        "SELECT x FROM c)",
    )
    assert response.status_code == 400
    assert "memory" in response.context["error"] or "too big" in response.context["error"]


def test_long_text_is_cut_by_the_child_and_still_redacted(console):
    secret = "sk-proj-" + "A1b2C3d4" * 6
    response, _ = _post(
        console,
        "SELECT printf('%.*c', 1980, 'x') || ' key ' || :s || ' ' || printf('%.*c', 200000, 'y')",
        s=secret,
    )
    cell = response.context["rows"][0][0]
    assert cell["cut"] == 1980 + 5 + len(secret) + 1 + 200000
    assert len(cell["text"]) == 2000
    assert "A1b2C3d4" not in cell["text"]
    assert "[redacted" in cell["text"]


# Workers ------------------------------------------------------------------------------------
def test_one_statement_more_than_the_slots_is_told_the_console_is_busy(console, settings):
    settings.HERMES_SQL_CONCURRENCY = 2
    with host_slots.take("console", 2), host_slots.take("console", 2):
        response, elapsed = _post(console, "SELECT 1")
    assert response.status_code == 503
    assert "already running 2 statements" in response.context["error"]
    assert elapsed < 0.5
    assert console.post(reverse("sql:console"), {"sql": "SELECT 1"}).status_code == 200


def test_head_answers_like_get_on_the_console(console):
    response = console.head(reverse("sql:console"), {"sql": "SELECT 1"})
    assert response.status_code == 200
    assert response.content == b""
    assert not AuditEvent.objects.exists()


def test_a_wide_result_shows_fewer_rows_and_says_so(console):
    wide = ", ".join(f"x AS c{i}" for i in range(100))
    sql = f"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000) SELECT {wide} FROM c"
    response, _ = _post(console, sql)
    result = response.context["result"]
    assert result.truncated and result.row_cap == 500 and result.row_count == 500
    assert "only the first 500 rows are shown" in response.content.decode()


def test_a_full_page_of_cells_renders_within_the_deadline(console, settings):
    columns = ", ".join(f"printf('%.*c', 200, 'a') AS c{i}" for i in range(30))
    sql = f"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000) SELECT {columns} FROM c"
    _post(console, "SELECT 1")
    response, elapsed = _post(console, sql)
    assert response.status_code == 200
    assert response.context["result"].row_count == 1000
    assert response.content.decode().count("<td>") == 30_000
    assert elapsed < settings.HERMES_SQL_TIMEOUT + 1
