"""The live file misbehaving: missing, unreadable, corrupt, locked, replaced, slow, written to.

Each fault must give a clear page (503, never a 500) and a failing ``/healthz``, and the app
must recover by itself once the file is fine again.

NOTE on "unreadable": the suite runs as root, and root reads a ``chmod 000`` file anyway, so
a permission test would prove nothing here. What a reader sees for a file it cannot open is
SQLite's "unable to open database file", which a *directory* at the path produces for any
user; a file it can open but cannot understand ("file is not a database") is a text file.

NOTE on the transient ``disk I/O error`` retry (``hermes_db/base.py``, ``IO_RETRIES``): it
cannot be provoked on demand without mocking the database, which the project does not do; it
is a three-line loop, documented there, and exercised for real by the concurrent writer test
below whenever a checkpoint races a read.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from django.db import close_old_connections, connections

from tests.builders import DAY, NASTY_NOW, StateDB, build_nasty_db
from tests.conftest import use_store

pytestmark = pytest.mark.django_db(databases=["default", "hermes"])


def fingerprint(path) -> tuple[str, int]:
    path = Path(path)
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


def assert_store_unavailable(client, *, says: str):
    """The session table and /healthz both fail cleanly, saying ``says``."""
    connections["hermes"].close()
    page = client.get("/sessions/")
    assert page.status_code == 503, page.content[:500]
    body = page.content.decode()
    assert says in body
    assert "state.db" in body
    health = client.get("/healthz")
    assert health.status_code == 503
    assert health.json()["state_db"]["readable"] is False
    assert health["Content-Type"].startswith("application/json")


@pytest.fixture(autouse=True)
def _sound_store_afterwards(nasty_stores):
    """Leave the alias on a sound file: Django's teardown connects to every test database."""
    yield
    use_store(nasty_stores["current"].path)


@pytest.fixture
def own_store(tmp_path):
    """A nasty current-shape file this test may move, break or replace."""
    facts = build_nasty_db(tmp_path / "state.db", "current")
    use_store(facts.path)
    yield facts
    connections["hermes"].close()


# Missing, unreadable, corrupt -------------------------------------------------------------------
def test_missing_file_gives_a_clear_503_and_healthz_fails(staff_client, tmp_path):
    use_store(tmp_path / "no-such-state.db")
    assert_store_unavailable(staff_client, says="cannot be opened")
    assert not (tmp_path / "no-such-state.db").exists(), "mode=ro must never create the file"


def test_a_path_that_cannot_be_opened_gives_a_clear_503(staff_client, tmp_path):
    """A directory where the file should be: SQLite fails to read it (a disk I/O error)."""
    directory = tmp_path / "state.db"
    directory.mkdir()
    use_store(directory)
    assert_store_unavailable(staff_client, says="disk I/O error")


def test_a_file_that_is_not_sqlite_gives_a_clear_503(staff_client, tmp_path):
    path = tmp_path / "state.db"
    path.write_text("this is a text file, not a database\n" * 200)
    use_store(path)
    assert_store_unavailable(staff_client, says="not an SQLite database")


@pytest.mark.parametrize("kind", ["zero-byte", "other-app", "sessions-only", "being-created"])
def test_a_file_that_is_not_a_hermes_store_gives_a_clear_503(staff_client, tmp_path, kind):
    path = tmp_path / "state.db"
    if kind == "zero-byte":
        path.write_bytes(b"")
    else:
        conn = sqlite3.connect(path)
        if kind == "other-app":
            conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        elif kind == "sessions-only":
            conn.execute(
                "CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, started_at REAL)"
            )
        else:  # Hermes has started its schema: the version table exists, nothing else yet
            conn.execute("CREATE TABLE schema_version (version INTEGER)")
        conn.commit()
        conn.close()
    use_store(path)
    assert_store_unavailable(staff_client, says="does not look like a Hermes state.db")
    assert "not a Hermes state.db" in staff_client.get("/healthz").json()["state_db"]["error"]


def test_random_bytes_give_a_clear_503(staff_client, tmp_path):
    path = tmp_path / "state.db"
    path.write_bytes(os.urandom(64 * 1024))
    use_store(path)
    assert_store_unavailable(staff_client, says="not an SQLite database")


def test_a_damaged_file_gives_a_clear_503(staff_client, own_store):
    """Pages past the schema overwritten with noise: SQLite reports a malformed image."""
    connections["hermes"].close()
    path = Path(own_store.path)
    data = bytearray(path.read_bytes())
    page_size = int.from_bytes(data[16:18], "big") or 65536
    noise = os.urandom(len(data) - 8 * page_size)
    data[8 * page_size :] = noise
    path.write_bytes(bytes(data))
    connections["hermes"].close()
    responses = [staff_client.get(url) for url in ["/sessions/", "/healthz", "/"]]
    codes = [r.status_code for r in responses]
    assert 500 not in codes
    assert 503 in codes, codes
    bad = next(r for r in responses if r.status_code == 503 and "html" in r["Content-Type"])
    assert "corrupt" in bad.content.decode() or "not an SQLite" in bad.content.decode()


def test_a_truncated_copy_never_gives_a_500(staff_client, own_store, tmp_path):
    copy = tmp_path / "truncated.db"
    data = Path(own_store.path).read_bytes()
    copy.write_bytes(data[: len(data) // 3])
    use_store(copy)
    urls = ["/", "/sessions/", f"/sessions/{own_store.tool_session_id}/", "/healthz"]
    codes = {url: staff_client.get(url).status_code for url in urls}
    assert all(code in (200, 404, 503) for code in codes.values()), codes


def test_the_app_recovers_when_the_file_comes_back(staff_client, own_store, tmp_path):
    aside = tmp_path / "aside.db"
    os.replace(own_store.path, aside)
    connections["hermes"].close()
    assert staff_client.get("/healthz").status_code == 503
    os.replace(aside, own_store.path)
    assert staff_client.get("/healthz").status_code == 200
    assert staff_client.get("/sessions/").status_code == 200


# Replaced under the app --------------------------------------------------------------------------
def test_a_file_replaced_under_the_app_is_picked_up_without_restart(
    staff_client, own_store, tmp_path
):
    """Hermes's repair writes a new file and renames it over the old one."""
    assert own_store.xss_title in staff_client.get("/sessions/").content.decode().replace(
        "&lt;", "<"
    ).replace("&gt;", ">").replace("&quot;", '"').replace("&amp;", "&")
    replacement = tmp_path / "replacement.db"
    with StateDB.create(replacement, "doc") as db:
        db.session(
            "20260101_000000_feed01", title="Only in the replacement", started_at=NASTY_NOW - DAY
        )
    os.replace(replacement, own_store.path)
    # What ends every real request: with CONN_MAX_AGE=0 it closes the state.db connection.
    # (Django's test client disconnects this signal handler, so the test calls it.)
    assert connections["hermes"].settings_dict["CONN_MAX_AGE"] == 0
    close_old_connections()

    page = staff_client.get("/sessions/")
    assert page.status_code == 200
    body = page.content.decode()
    assert "Only in the replacement" in body
    assert "claude" not in body.lower()
    # The shape cache is keyed by inode and schema cookie: the doc shape is seen as such.
    assert "older layout, no per-model usage" in body
    health = staff_client.get("/healthz").json()
    assert "older layout, no per-model usage" in health["state_db"]["shape"]


# Locked ------------------------------------------------------------------------------------------
def test_a_locked_file_waits_the_busy_timeout_then_fails_cleanly(staff_client, own_store):
    """A writer holding an EXCLUSIVE lock on a DELETE-journal file blocks every reader."""
    connection = connections["hermes"]
    connection.close()
    options = connection.settings_dict["OPTIONS"]
    saved_timeout = options.get("timeout")
    options["timeout"] = 0.3
    writer = sqlite3.connect(own_store.path, isolation_level=None)
    try:
        assert writer.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        writer.execute("BEGIN EXCLUSIVE")
        started = time.monotonic()
        page = staff_client.get("/sessions/")
        waited = time.monotonic() - started
        assert page.status_code == 503
        assert "locked" in page.content.decode()
        assert waited >= 0.25, "the reader should wait the busy timeout before failing"
        assert staff_client.get("/healthz").status_code == 503
    finally:
        writer.execute("ROLLBACK")
        writer.close()
        connection.close()
        options["timeout"] = saved_timeout
    assert staff_client.get("/sessions/").status_code == 200


# Slow --------------------------------------------------------------------------------------------
def test_a_query_past_its_deadline_gives_the_timeout_page(staff_client, tmp_path, settings):
    """With a budget no real query can meet, the page's first big statement is stopped."""
    path = tmp_path / "big.db"
    with StateDB.create(path, "current") as db:
        db.conn.executemany(
            "INSERT INTO sessions (id, source, started_at, title) VALUES (?, 'cli', ?, ?)",
            [(f"s{i:05d}", NASTY_NOW - i, f"session {i}") for i in range(12_000)],
        )
    use_store(path)
    settings.HERMES_QUERY_TIMEOUT = 0.000001
    response = staff_client.get("/sessions/")
    assert response.status_code == 503
    body = response.content.decode()
    assert "took too long" in body
    assert "limit and was stopped" in body
    settings.HERMES_QUERY_TIMEOUT = 3
    assert staff_client.get("/sessions/").status_code == 200


# Written to while we read ------------------------------------------------------------------------
WRITER = textwrap.dedent(
    """
    import sqlite3, sys, time
    path, seconds = sys.argv[1], float(sys.argv[2])
    conn = sqlite3.connect(path, isolation_level=None, timeout=5)
    conn.execute("PRAGMA journal_mode = WAL")
    print("ready", flush=True)
    deadline = time.monotonic() + seconds
    n = 0
    while time.monotonic() < deadline:
        sid = f"20260102_{n:06d}_writer"
        now = time.time()
        conn.execute("BEGIN IMMEDIATE")
        conn.execute(
            "INSERT INTO sessions (id, source, started_at, title, message_count)"
            " VALUES (?, 'telegram', ?, ?, 2)",
            (sid, now, f"written live {n}"),
        )
        conn.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'user', ?, ?)",
            (sid, f"live message {n} about the backup", now),
        )
        conn.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'assistant', ?, ?)",
            (sid, "x" * 5000, now),
        )
        conn.execute("COMMIT")
        n += 1
        if n % 50 == 0:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    print(n, flush=True)
    """
)


def test_a_writer_inserting_continuously_never_breaks_browsing_or_exports(staff_client, tmp_path):
    facts = build_nasty_db(tmp_path / "live.db", "current")
    with sqlite3.connect(facts.path) as conn:
        conn.execute("PRAGMA journal_mode = WAL")
    use_store(facts.path)
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, facts.path, "4"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout.readline().strip() == "ready"
        urls = [
            "/",
            "/sessions/",
            "/sessions/?source=telegram",
            f"/sessions/{facts.tool_session_id}/",
            "/sessions/?_export=csv",
            "/messages/",
            "/messages/?_export=jsonl",
            "/search/?q=backup",
            "/healthz",
        ]
        problems = []
        requests = 0
        deadline = time.monotonic() + 3.5
        while time.monotonic() < deadline and writer.poll() is None:
            for url in urls:
                response = staff_client.get(url)
                if response.status_code == 404 and url.startswith(("/messages/", "/search/")):
                    continue  # a page this test does not cover
                if response.streaming:
                    b"".join(response.streaming_content)
                requests += 1
                if response.status_code != 200:
                    problems.append((url, response.status_code))
        out, err = writer.communicate(timeout=30)
    finally:
        if writer.poll() is None:
            writer.kill()
    assert writer.returncode == 0, err
    assert int(out.strip()) > 10, "the writer should have committed many rows"
    assert requests > 10
    assert problems == []
    # Rows the writer committed are visible to a fresh request.
    assert "written live" in staff_client.get("/sessions/?source=telegram").content.decode()


def test_shared_fixture_files_are_never_changed_by_browsing(staff_client, nasty_stores):
    """The session-scoped fixtures every test browses keep their bytes and mtime."""
    before = {shape: fingerprint(f.path) for shape, f in nasty_stores.items()}
    for facts in nasty_stores.values():
        use_store(facts.path)
        for url in ["/", "/sessions/", f"/sessions/{facts.tool_session_id}/", "/healthz"]:
            assert staff_client.get(url).status_code == 200
        connections["hermes"].close()
    assert {shape: fingerprint(f.path) for shape, f in nasty_stores.items()} == before


def test_copying_a_store_keeps_it_readable(tmp_path, own_store, staff_client):
    """A backup copy (cp while nothing writes) is a valid store the app can be pointed at."""
    copy = tmp_path / "backup.db"
    shutil.copyfile(own_store.path, copy)
    use_store(copy)
    assert staff_client.get("/healthz").status_code == 200
