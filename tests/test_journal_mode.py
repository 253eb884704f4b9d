"""Rollback-journal (DELETE) state.dbs: the explorer's reads never hold up Hermes's commits.

Hermes writes in rollback-journal mode on SQLite builds it does not trust with WAL (this
machine's among them). There a reader's lock keeps the writer from committing, so on such a file
every read is cut into short statements (``hermes_explorer.store.ChunkClock``) and a process
runs one statement at a time (``hermes_explorer.hermes_db.gate``). These tests check that

* the journal mode is read from the file;
* exports, insights and search give the same answers on a DELETE file, read in many short
  statements, as on a WAL copy read the usual way, and no single pass runs there;
* a Hermes-like writer committing every 50 ms meanwhile never fails and never waits long;
* between two chunks of a streamed export no lock is held at all;
* the clock and the gate behave as documented.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import threading
import time

import pytest
from django.core.cache import cache
from django.db import connections
from django.test import Client, RequestFactory

from hermes_explorer import store
from hermes_explorer.hermes_db import gate, holds
from hermes_explorer.hermes_db.deadline import QueryTimeout
from hermes_fixtures.demo import RARE_TOKENS, build_demo_db
from insights_app import summaries, window
from insights_app.stats import Window, build_report
from sessions_app import exports
from sessions_app.exports import chunks
from sessions_app.models import Message
from sessions_app.search import SearchRequest, ranges, run_search
from sessions_app.transcripts import BY_ID
from tests.conftest import use_store
from tests.roles_helpers import script_client_for

MESSAGES = 20_000
SESSIONS = 400
# Timing-sensitive: run apart from the parallel run (make test's second pass).
pytestmark = [
    pytest.mark.serial,
    pytest.mark.django_db(databases=["default", "hermes"]),
    pytest.mark.render_context,
]
# Threads of the test need what the test wrote to the app database (signed-in users).
threaded = pytest.mark.django_db(databases=["default", "hermes"], transaction=True)
SEARCHES = [
    {"q": "the"},
    {"q": "the", "page": "3"},
    {"q": "error", "sort": "newest"},
    {"q": "the", "role": "tool", "sort": "newest"},
    {"q": next(iter(RARE_TOKENS))},
    {"q": "error", "mode": "substring"},
]


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """The same demo store twice: in WAL mode (as built) and in rollback-journal mode."""
    base = tmp_path_factory.mktemp("journal")
    wal = base / "wal.db"
    build_demo_db(wal, sessions=SESSIONS, messages=MESSAGES, seed=11)
    delete = base / "delete.db"
    source, copy = sqlite3.connect(wal), sqlite3.connect(delete)
    source.backup(copy)
    source.close()
    copy.execute("PRAGMA journal_mode=DELETE")
    copy.close()
    return {"wal": wal, "delete": delete}


@pytest.fixture
def many_short_reads(monkeypatch):
    """Aim statements at a couple of milliseconds and start every chunk small, so that this
    small store is read in many chunks on a rollback-journal file."""
    monkeypatch.setattr(store, "SHORT_READ_SECONDS", 0.002)
    monkeypatch.setattr(window, "SHORT_WINDOW_SESSIONS", 0)
    monkeypatch.setattr(window, "WINDOW_FIRST_CHUNK", 20)
    monkeypatch.setattr(summaries, "SHORT_READ_FIRST_MESSAGES", 200)
    monkeypatch.setattr(chunks, "SHORT_READ_MIN_ROWS", 10)
    monkeypatch.setattr(ranges, "NEWEST_FIRST_WIDTH", 500)
    monkeypatch.setattr(ranges, "MIN_WIDTH", 64)


def rounded(value):
    """``value`` with every float cut to 9 significant digits: sums of the same costs added in
    another order differ in their last bits."""
    if isinstance(value, float):
        return float(f"{value:.9g}")
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v) for v in value]
    return value


def answers(client: Client) -> dict:
    """What the heaviest reads answer: a full export, insights over all time (computed cold)
    and a few searches."""
    summaries.forget_all()
    cache.clear()
    export = b"".join(client.get("/messages/?_export=csv").streaming_content)
    insights = rounded(client.get("/insights/", {"days": "all", "_export": "json"}).json())
    insights.pop("generated_at")
    found = []
    for params in SEARCHES:
        result = client.get("/search/", params).context["result"]
        found.append((result.sort, result.notes, [(h.id, str(h.snippet)) for h in result.hits]))
    return {"export": export, "insights": insights, "search": found}


# The mode -------------------------------------------------------------------------------------
def test_the_journal_mode_is_read_from_the_file(stores, staff_client):
    use_store(stores["delete"])
    assert store.journal_mode() == "delete" and store.readers_block_writer()
    assert staff_client.get("/healthz").json()["state_db"]["journal_mode"] == "delete"
    # A statement that cannot be cut gets a short budget there...
    assert store.uncut_statement_budget(1.0) == store.UNCUT_READ_CAP < 1.0
    use_store(stores["wal"])
    assert store.journal_mode() == "wal" and not store.readers_block_writer()
    assert store.uncut_statement_budget(1.0) == 1.0  # ...and its own on a WAL file
    connections["hermes"].close()


SLOW_SQL = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50000000) "
    "SELECT count(*) FROM n"
)


def test_a_console_query_is_held_short_on_a_rollback_journal_file(stores, staff_client):
    use_store(stores["delete"])
    started = time.monotonic()
    page = staff_client.post("/sql/", {"sql": SLOW_SQL})
    elapsed = time.monotonic() - started
    text = page.content.decode()
    assert page.status_code == 400
    assert f"its {store.UNCUT_READ_CAP:g} s limit" in text and "rollback-journal mode" in text
    assert elapsed < 1.5  # the cap plus the child's start, not the console's own limit
    # The old API's SQL goes through the same runner and the same cap.
    answer = script_client_for("staff").get("/state.json", {"sql": SLOW_SQL})
    assert answer.status_code == 400 and "rollback-journal mode" in answer.json()["error"]
    use_store(stores["wal"])
    page = staff_client.post("/sql/", {"sql": "SELECT count(*) FROM sessions"})
    assert page.status_code == 200 and "rollback-journal" not in page.content.decode()
    connections["hermes"].close()


# Same answers, short statements ----------------------------------------------------------------
def test_short_reads_give_the_same_answers_as_one_statement(stores, staff_client, many_short_reads):
    use_store(stores["wal"])
    with holds.watch() as wal_statements:
        expected = answers(staff_client)
    use_store(stores["delete"])
    with holds.watch() as short_statements:
        got = answers(staff_client)
    connections["hermes"].close()

    assert got["export"] == expected["export"]
    assert got["export"].count(b"\n") > MESSAGES
    assert got["insights"] == expected["insights"]
    assert got["insights"]["messages_complete"]
    assert got["search"] == expected["search"]
    assert all(hits for _sort, _notes, hits in got["search"])

    # The WAL copy ran the insights pass and a ranked page as one statement each...
    def single_pass(sql: str) -> bool:
        return "per AS MATERIALIZED" in sql

    def searched_everything(sql: str) -> bool:
        return " MATCH %s" in sql and "rowid >= %s" not in sql and "m.id >= %s" not in sql

    assert any(single_pass(h.sql) for h in wal_statements)
    assert any(searched_everything(h.sql) for h in wal_statements)
    # ...the rollback-journal file in many short ones, none of them long.
    assert not any(single_pass(h.sql) or searched_everything(h.sql) for h in short_statements)
    assert len(short_statements) > 3 * len(wal_statements)
    longest = max(short_statements, key=lambda h: h.seconds)
    assert longest.seconds < 0.5, longest


# Hermes committing meanwhile -------------------------------------------------------------------
# A Hermes-like writer: every 50 ms BEGIN IMMEDIATE, a message and the session's counters,
# COMMIT; SQLite's busy handler re-done in Python (same sleeps, 1 s timeout) so that the time
# spent waiting for readers' locks is known; three retries after a short pause, as Hermes does.
WRITER = r"""
import json, random, sqlite3, sys, time
path, seconds, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
conn = sqlite3.connect(path, timeout=0, isolation_level=None)
conn.execute("PRAGMA synchronous=OFF")
DELAYS = (1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100)
waited = 0.0
def patiently(sql, params=()):
    global waited
    tries = 0
    while True:
        try:
            return conn.execute(sql, params)
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc):
                raise
            done = sum(DELAYS[:tries]) + 100 * max(0, tries - len(DELAYS))
            if done >= 1000:
                raise
            delay = min(DELAYS[tries] if tries < len(DELAYS) else 100, 1000 - done)
            began = time.monotonic()
            time.sleep(delay / 1000)
            waited += time.monotonic() - began
            tries += 1
sid = conn.execute("SELECT id FROM sessions ORDER BY started_at DESC LIMIT 1").fetchone()[0]
samples, started, tick = [], time.monotonic(), 0
while time.monotonic() - started < seconds:
    time.sleep(max(0.0, started + tick * 0.05 - time.monotonic()))
    tick += 1
    waited, began, ok, error = 0.0, time.monotonic(), False, ""
    for attempt in range(4):
        try:
            patiently("BEGIN IMMEDIATE")
            patiently("INSERT INTO messages (session_id, role, content, timestamp)"
                      " VALUES (?, 'user', 'the writer was here', ?)", (sid, time.time()))
            patiently("UPDATE sessions SET message_count = message_count + 1 WHERE id = ?", (sid,))
            patiently("COMMIT")
            ok = True
            break
        except sqlite3.OperationalError as exc:
            error = str(exc)
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            time.sleep(random.uniform(0.02, 0.15))
    samples.append({"ms": (time.monotonic() - began) * 1000, "waited_ms": waited * 1000,
                    "ok": ok, "error": error})
json.dump(samples, open(out, "w"))
"""


@threaded
def test_hermes_keeps_committing_while_the_heaviest_reads_run(stores, tmp_path):
    """Three threads of one process export, report and search; a writer commits meanwhile."""
    path = tmp_path / "busy.db"
    shutil.copyfile(stores["delete"], path)
    use_store(path)
    out = tmp_path / "writer.json"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(path), "6", str(out)])
    failures: list[BaseException] = []

    def reads(work) -> None:
        try:
            work()
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            failures.append(exc)
        finally:
            connections.close_all()

    def export():
        request = RequestFactory().get("/messages/", {"_export": "csv"})
        response = exports.export_messages(request, Message.objects.all(), BY_ID)
        assert b"".join(response.streaming_content).count(b"\n") > MESSAGES

    def insights():
        summaries.forget_all()
        report = build_report(Window(days=None))
        assert report.messages_complete and report.overview["total_sessions"] >= SESSIONS

    def search():
        for params in SEARCHES * 3:
            params = dict(params)
            text, page = params.pop("q"), int(params.pop("page", 1))
            assert run_search(SearchRequest(text=text, page=page, **params)).hits, params

    try:
        time.sleep(0.5)  # the writer's first commits, alone
        threads = [threading.Thread(target=reads, args=(w,)) for w in (export, insights, search)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
    finally:
        writer.wait(60)
        connections["hermes"].close()
    assert not failures, failures
    samples = json.loads(out.read_text())
    assert len(samples) >= 40
    assert all(s["ok"] for s in samples), [s for s in samples if not s["ok"]]
    # What the explorer's locks cost the writer, and its whole commits (generous bounds for a
    # busy machine: the readers' statements last a few milliseconds each).
    assert max(s["waited_ms"] for s in samples) < 500, sorted(s["waited_ms"] for s in samples)
    assert max(s["ms"] for s in samples) < 1500


def test_no_lock_is_held_between_the_chunks_of_an_export(
    stores, tmp_path, staff_client, monkeypatch
):
    """While a download waits for its client, Hermes commits without waiting at all."""
    path = tmp_path / "export.db"
    shutil.copyfile(stores["delete"], path)
    use_store(path)
    monkeypatch.setattr(chunks, "EXPORT_CHUNK_ROWS", 500)
    writer = sqlite3.connect(path, timeout=0, isolation_level=None)
    try:
        response = staff_client.get("/messages/?_export=csv&sort=id")
        pieces = iter(response.streaming_content)
        first = next(pieces)  # the first chunk is read; the next one is not asked for yet
        writer.execute("BEGIN IMMEDIATE")
        writer.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) "
            "SELECT id, 'user', 'written mid-export', started_at FROM sessions LIMIT 1"
        )
        writer.execute("COMMIT")  # a timeout of 0: any reader's lock would fail it
        rest = b"".join(pieces)
    finally:
        writer.close()
        connections["hermes"].close()
    assert (first + rest).count(b"\n") > MESSAGES


# The gate -------------------------------------------------------------------------------------
@threaded
def test_threads_of_a_process_take_turns_on_a_rollback_journal_file(stores):
    use_store(stores["delete"])
    opened, release, order = threading.Event(), threading.Event(), []

    def holder():
        with connections["hermes"].cursor() as cursor:
            cursor.execute("SELECT id FROM messages")
            cursor.fetchone()  # the statement stays open (and holds the gate)
            opened.set()
            release.wait(5)
            order.append("holder done")
        connections.close_all()

    def other():
        opened.wait(5)
        store.rows("SELECT count(*) FROM sessions")
        order.append("other ran")
        connections.close_all()

    threads = [threading.Thread(target=holder), threading.Thread(target=other)]
    for thread in threads:
        thread.start()
    opened.wait(5)
    time.sleep(0.2)
    assert order == []  # the other statement waits for the open one
    release.set()
    for thread in threads:
        thread.join(10)
    assert order == ["holder done", "other ran"]


@threaded
def test_a_statement_on_one_file_does_not_hold_another_files(
    stores, tmp_path, monkeypatch, django_db_blocker
):
    """SQLite's lock is per file: a profile's open statement never makes another profile's
    statements (another rollback-journal file) wait."""
    from hermes_explorer import stores as registry
    from tests.profile_home import allow_new_aliases

    allow_new_aliases(monkeypatch, django_db_blocker)
    use_store(stores["delete"])
    other_file = tmp_path / "other.db"
    shutil.copy(stores["delete"], other_file)
    other_alias = registry._alias_for("other", str(other_file))
    opened, release, order = threading.Event(), threading.Event(), []

    def holder():
        with connections["hermes"].cursor() as cursor:
            cursor.execute("SELECT id FROM messages")
            cursor.fetchone()
            opened.set()
            release.wait(5)
            order.append("holder done")
        connections.close_all()

    def other():
        opened.wait(5)
        assert store.journal_mode(other_alias) == "delete"
        store.rows("SELECT count(*) FROM sessions", alias=other_alias)
        order.append("other ran")
        connections.close_all()

    threads = [threading.Thread(target=holder), threading.Thread(target=other)]
    try:
        for thread in threads:
            thread.start()
        opened.wait(5)
        deadline = time.monotonic() + 1.5
        while order != ["other ran"] and time.monotonic() < deadline:
            time.sleep(0.01)
        assert order == ["other ran"]  # ran while the first file's statement stayed open
    finally:
        release.set()
        for thread in threads:
            thread.join(10)
        connections[other_alias].close()
        del connections.settings[other_alias]
    assert order == ["other ran", "holder done"]


def test_each_file_has_one_gate_whatever_path_names_it(tmp_path):
    first, second = tmp_path / "a.db", tmp_path / "b.db"
    first.write_bytes(b"")
    second.write_bytes(b"")
    (tmp_path / "link").symlink_to(tmp_path)
    assert gate.for_file(str(first)) is gate.for_file(str(tmp_path / "link" / "a.db"))
    assert gate.for_file(str(first)) is not gate.for_file(str(second))


def test_a_stuck_statement_does_not_stop_the_others_for_long(monkeypatch):
    monkeypatch.setattr(gate, "WAIT", 0.1)
    turnstile = gate.StatementGate()
    assert turnstile.enter()
    assert turnstile.enter()  # the same thread nests
    entered = []
    thread = threading.Thread(target=lambda: entered.append(turnstile.enter()))
    began = time.monotonic()
    thread.start()
    thread.join(5)
    assert entered == [False] and 0.08 < time.monotonic() - began < 2


# The clock ------------------------------------------------------------------------------------
def test_on_a_wal_file_the_clock_gives_the_callers_sizes():
    fixed = store.ChunkClock(1000, short=False)
    assert fixed.run(lambda n: n) == (1000, 1000)
    fixed.measured(1000, 10.0)
    assert fixed.size == 1000
    growing = store.ChunkClock(5000, maximum=2_000_000, grow_below=0.1, short=False)
    growing.measured(5000, 0.01)
    assert growing.size == 20_000
    growing.measured(20_000, 0.5)
    assert growing.size == 20_000


def test_on_a_rollback_journal_file_the_clock_follows_time():
    aim = store.SHORT_READ_SECONDS
    clock = store.ChunkClock(1000, first=100, maximum=1000, short=True)
    assert clock.size == 100
    clock.measured(100, aim / 10)  # quick: twice the size
    assert clock.size == 200
    clock.measured(200, aim)  # on the aim: the same
    assert clock.size == 200
    clock.measured(200, aim * 4)  # slow: a quarter
    assert clock.size == 50
    for _ in range(10):
        clock.measured(clock.size, 0)
    assert clock.size == 1000  # never over the maximum


def test_a_statement_stopped_by_the_cap_runs_again_smaller():
    clock = store.ChunkClock(800, minimum=10, short=True)
    tried = []

    def work(n):
        tried.append(n)
        if n > 100:
            raise QueryTimeout(store.SHORT_READ_CAP, capped=True)
        return n

    assert clock.run(work) == (100, 100)
    assert tried == [800, 100]

    def over_budget(n):
        raise QueryTimeout(1.0)  # the caller's own budget: not for the clock to handle

    with pytest.raises(QueryTimeout):
        clock.run(over_budget)
