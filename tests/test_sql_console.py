"""The SQL console: read-only by construction, time-limited, capped, with named queries."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import sqlite3
from pathlib import Path

import pytest
from django.urls import reverse

from accounts_app.models import AuditEvent
from console_app import isolation
from console_app.canned import CANNED_QUERIES
from console_app.models import SavedQuery
from console_app.readonly import (
    ConsoleDenied,
    ConsoleError,
    ConsoleTimeout,
    sql_parameters,
)
from tests.roles_helpers import client_for

# The sandbox's tests run the console's child process on a store file and touch neither the app
# database nor the cache; the page's tests do (sessions, audit events, saved queries), so only
# they are marked ``appdb`` and rerun on PostgreSQL and Redis.
pytestmark = [pytest.mark.django_db(databases=["default", "hermes"]), pytest.mark.render_context]

RUNAWAY = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) "
    "SELECT count(*) FROM c"
)

# Every way of writing or escaping we could think of: each must be refused before it runs.
WRITE_FORMS = [
    "INSERT INTO sessions (id, source, started_at) VALUES ('x', 'cli', 1)",
    "REPLACE INTO sessions (id, source, started_at) VALUES ('x', 'cli', 1)",
    "UPDATE sessions SET title = 'pwned'",
    "DELETE FROM messages",
    "WITH doomed AS (SELECT id FROM sessions) DELETE FROM sessions WHERE id IN doomed",
    "CREATE TABLE scratch (x)",
    "CREATE TEMP TABLE scratch (x)",
    "CREATE TEMP VIEW v AS SELECT 1",
    "CREATE INDEX idx_x ON sessions (title)",
    "CREATE TRIGGER t AFTER INSERT ON sessions BEGIN SELECT 1; END",
    "CREATE VIRTUAL TABLE v USING fts5(x)",
    "DROP TABLE sessions",
    "DROP INDEX idx_sessions_source",
    "ALTER TABLE sessions ADD COLUMN pwned TEXT",
    "ALTER TABLE sessions RENAME TO s2",
    "ATTACH DATABASE '/tmp/evil.db' AS evil",
    "ATTACH DATABASE ':memory:' AS scratch",
    "DETACH DATABASE main",
    "VACUUM",
    "VACUUM INTO '/tmp/copy-of-state.db'",
    "REINDEX",
    "ANALYZE",
    "BEGIN",
    "BEGIN IMMEDIATE",
    "COMMIT",
    "SAVEPOINT sp",
    "PRAGMA journal_mode = DELETE",
    "PRAGMA journal_mode = WAL",
    "PRAGMA user_version = 5",
    "PRAGMA writable_schema = 1",
    "PRAGMA query_only = 0",
    "PRAGMA wal_checkpoint(TRUNCATE)",
    "PRAGMA journal_mode",
    "PRAGMA integrity_check",
    "SELECT * FROM pragma_user_version",
    "SELECT load_extension('/tmp/evil.so')",
    "SELECT load_extension('x', 'sqlite3_x_init')",
    "SELECT fts3_tokenizer('simple')",
    "UPDATE sqlite_master SET sql = 'x'",
    "INSERT INTO messages_fts(messages_fts) VALUES ('rebuild')",
    "SELECT * FROM messages_fts_cjk",
    'SELECT * FROM "messages_fts_cjk"',
    "PRAGMA table_info(messages_fts_cjk)",
]


def fingerprint(path) -> tuple[str, int]:
    path = Path(path)
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


def run(sql, params=None, *, path, timeout=2.0, max_rows=1000):
    """One statement in the console's child process, with the download's way of returning
    values (whole text, blobs as hex)."""
    limits = isolation.Limits(timeout=timeout, max_rows=max_rows, max_bytes=64 * 2**20)
    return isolation.run(sql, params or {}, path=str(path), limits=limits)


# The sandbox on its own ----------------------------------------------------------------------
@pytest.mark.parametrize("sql", WRITE_FORMS)
def test_every_write_form_is_refused_and_the_file_is_unchanged(current_store, sql):
    before = fingerprint(current_store.path)
    with pytest.raises(ConsoleError) as caught:
        run(sql, path=current_store.path)
    assert "Traceback" not in str(caught.value)
    assert fingerprint(current_store.path) == before


@pytest.mark.parametrize(
    "sql, needle",
    [
        ("ATTACH DATABASE ':memory:' AS x", "ATTACH"),
        ("VACUUM", "VACUUM"),
        ("PRAGMA user_version = 5", "PRAGMA user_version"),
        ("SELECT load_extension('x')", "load_extension"),
        ("DROP TABLE sessions", "DROP"),
        ("BEGIN", "BEGIN"),
        ("SELECT * FROM messages_fts_cjk", "tokenizer"),
    ],
)
def test_refusals_say_what_was_refused(current_store, sql, needle):
    with pytest.raises(ConsoleDenied, match=needle):
        run(sql, path=current_store.path)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT id, title FROM sessions ORDER BY started_at DESC",
        "SELECT * FROM sqlite_master",
        "PRAGMA table_info(sessions)",
        "PRAGMA table_xinfo('messages')",
        "PRAGMA index_list(messages)",
        "SELECT * FROM pragma_table_info('sessions')",
        "EXPLAIN QUERY PLAN SELECT * FROM messages WHERE session_id = 'x'",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5) SELECT x FROM c",
        "SELECT json_extract('{\"a\": 1}', '$.a'), lower('ABC'), length(randomblob(10))",
        "SELECT rowid FROM messages_fts WHERE messages_fts MATCH 'telegram'",
        "SELECT 1;",
        "  -- a comment and nothing else",
    ],
)
def test_reads_are_allowed(store, sql):
    result = run(sql, path=store.path)
    assert result.truncated is False


def test_a_runaway_query_stops_at_its_deadline(current_store):
    import time

    started = time.monotonic()
    with pytest.raises(ConsoleTimeout, match="0.3 s limit"):
        run(RUNAWAY, path=current_store.path, timeout=0.3)
    assert time.monotonic() - started < 2.0


def test_the_deadline_covers_fetching_too(current_store):
    """Each row is cheap, but fetching them all is not: the same clock stops the fetch."""
    slow_rows = (
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000000) "
        "SELECT x FROM c"
    )
    with pytest.raises(ConsoleTimeout):
        run(slow_rows, path=current_store.path, timeout=0.3, max_rows=10**9)


def test_rows_are_capped_and_marked_truncated(current_store):
    sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 50) SELECT x FROM c"
    result = run(sql, path=current_store.path, max_rows=10)
    assert result.row_count == 10
    assert result.truncated is True
    assert run(sql, path=current_store.path, max_rows=50).truncated is False


def test_only_one_statement_runs(current_store):
    with pytest.raises(ConsoleError, match="one statement"):
        run("SELECT 1; DELETE FROM sessions", path=current_store.path)


def test_huge_values_cannot_exhaust_memory(current_store):
    with pytest.raises(ConsoleError, match="too big"):
        run("SELECT randomblob(1000000000)", path=current_store.path)


def test_a_huge_like_pattern_is_refused(current_store):
    with pytest.raises(ConsoleError, match="pattern too complex"):
        run("SELECT 'a' LIKE printf('%.*c', 20000, '%')", path=current_store.path)


def test_named_parameters_are_found_outside_strings_and_comments():
    sql = (
        "SELECT ':not_me', \":nor_me\" FROM t -- :comment\n"
        "WHERE a = :first AND b = :second /* :block */ AND c = :first AND d = '10:30'"
    )
    assert sql_parameters(sql) == ["first", "second"]


def test_parameters_are_bound_never_pasted(current_store):
    hostile = "x' OR 1=1; DROP TABLE sessions; --"
    result = run("SELECT :value AS v", {"value": hostile}, path=current_store.path)
    assert result.rows == [[hostile]]


def test_a_connection_without_mode_ro_but_with_query_only_refuses_writes(current_store, tmp_path):
    """The console's pragma layer on its own (on a copy: this connection could write)."""
    copy = tmp_path / "copy.db"
    copy.write_bytes(Path(current_store.path).read_bytes())
    conn = sqlite3.connect(copy)
    conn.execute("PRAGMA query_only = 1")
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        conn.execute("DELETE FROM sessions")
    conn.close()


# The page ----------------------------------------------------------------------------------------
@pytest.fixture
def console_client(staff_client, current_store):
    return staff_client


@pytest.mark.appdb
def test_console_runs_a_query_and_escapes_the_results(console_client, current_store):
    response = console_client.post(
        reverse("sql:console"),
        {"sql": "SELECT title FROM sessions WHERE id = :id", "id": current_store.xss_session_id},
    )
    assert response.status_code == 200
    body = response.content.decode()
    assert "<script>alert(&quot;title&quot;)</script>" not in body
    assert "&lt;script&gt;alert(&quot;title&quot;)&lt;/script&gt;" in body
    assert response.context["result"].row_count == 1


@pytest.mark.appdb
@pytest.mark.parametrize(
    "sql", ["DELETE FROM sessions", "ATTACH ':memory:' AS x", "PRAGMA user_version=5"]
)
def test_console_page_refuses_writes_with_a_400_and_a_message(console_client, current_store, sql):
    before = fingerprint(current_store.path)
    response = console_client.post(reverse("sql:console"), {"sql": sql})
    assert response.status_code == 400
    assert "not allowed" in response.context["error"] or "refused" in response.context["error"]
    assert fingerprint(current_store.path) == before


@pytest.mark.appdb
def test_console_page_says_when_a_query_ran_out_of_time(console_client, current_store, settings):
    settings.HERMES_SQL_TIMEOUT = 0.2
    response = console_client.post(reverse("sql:console"), {"sql": RUNAWAY})
    assert response.status_code == 400
    assert "0.2 s limit" in response.content.decode()


@pytest.mark.appdb
def test_console_page_notes_truncation(console_client, current_store, settings):
    settings.HERMES_SQL_MAX_ROWS = 3
    response = console_client.post(reverse("sql:console"), {"sql": "SELECT id FROM messages"})
    assert response.status_code == 200
    assert "truncated" in response.content.decode()
    assert len(response.context["rows"]) == 3


@pytest.mark.appdb
@pytest.mark.parametrize("query", CANNED_QUERIES, ids=lambda q: q.slug)
def test_every_canned_query_runs_on_every_shape(staff_client, store, query):
    params = {"query": query.slug}
    for name in sql_parameters(query.sql):
        params[name] = "telegram"
    response = staff_client.post(reverse("sql:console"), params)
    assert response.status_code == 200, response.context["error"]
    assert response.context["result"] is not None


@pytest.mark.appdb
def test_canned_keyword_query_asks_for_its_parameter_first(console_client):
    response = console_client.post(reverse("sql:console"), {"query": "search-messages"})
    assert response.status_code == 200
    assert response.context["result"] is None
    assert response.context["missing"] == ["keyword"]
    assert 'name="keyword"' in response.content.decode()
    response = console_client.post(
        reverse("sql:console"), {"query": "search-messages", "keyword": "telegram"}
    )
    assert response.context["result"].row_count >= 1
    assert all("telegram" in row[3]["text"].lower() for row in response.context["rows"])


@pytest.mark.appdb
def test_old_datasette_sql_url_lands_on_the_console(console_client, current_store):
    sql = "SELECT s.title, s.source, COUNT(m.id) as nb_messages FROM sessions s JOIN messages m ON m.session_id = s.id GROUP BY s.id ORDER BY nb_messages DESC"
    response = console_client.get("/state", {"sql": sql}, follow=True)
    assert response.status_code == 200
    assert response.resolver_match.view_name == "sql:console"
    # The link fills in the form; running it takes a deliberate POST.
    assert response.context["form"]["sql"].value() == sql
    assert response.context["result"] is None
    ran = console_client.post(reverse("sql:console"), {"sql": sql})
    assert ran.context["result"].columns == ["title", "source", "nb_messages"]


@pytest.mark.appdb
@pytest.mark.parametrize("fmt", ["csv", "json", "jsonl"])
def test_console_exports_stream_the_result(console_client, current_store, fmt):
    response = console_client.post(
        reverse("sql:console"),
        {"sql": "SELECT id, source, 1 AS one, 1 AS one FROM sessions ORDER BY id", "_export": fmt},
    )
    assert response.status_code == 200
    assert response.streaming
    body = b"".join(response.streaming_content).decode()
    if fmt == "csv":
        rows = list(csv.reader(io.StringIO(body)))
        assert rows[0] == ["id", "source", "one", "one_2"]
        assert len(rows) == len(current_store.session_ids) + 1
    elif fmt == "json":
        assert len(json.loads(body)) == len(current_store.session_ids)
    else:
        assert len(body.strip().splitlines()) == len(current_store.session_ids)


@pytest.mark.appdb
def test_console_export_of_a_refused_statement_is_not_a_download(console_client, current_store):
    response = console_client.post(
        reverse("sql:console"), {"sql": "DELETE FROM sessions", "_export": "csv"}
    )
    assert response.status_code == 400
    assert not response.streaming


@pytest.mark.appdb
def test_console_results_and_exports_are_redacted(console_client, current_store):
    secret = "sk-proj-" + "A1b2C3d4" * 6
    response = console_client.post(
        reverse("sql:console"), {"sql": "SELECT :s AS leaked", "s": secret}
    )
    # The parameter field echoes what was typed; the result cell is redacted.
    assert response.context["rows"] == [[{"text": "[redacted: openai key]"}]]
    assert f"<td>{secret}" not in response.content.decode()
    export = console_client.post(
        reverse("sql:console"), {"sql": "SELECT :s AS leaked", "s": secret, "_export": "csv"}
    )
    assert secret not in b"".join(export.streaming_content).decode()


@pytest.mark.appdb
def test_console_runs_are_audited(console_client, current_store, staff_user):
    console_client.post(reverse("sql:console"), {"sql": "SELECT count(*) FROM sessions"})
    event = AuditEvent.objects.get(action=AuditEvent.SQL)
    assert event.user == staff_user
    assert "count(*)" in event.detail
    assert event.ip == "127.0.0.1"


@pytest.mark.appdb
def test_staff_save_reopen_and_delete_a_query(console_client, current_store):
    response = console_client.post(
        reverse("sql:save"),
        {
            "name": "Cron sessions",
            "slug": "",
            "description": "cron only",
            "sql": "SELECT id FROM sessions WHERE source = :src",
        },
    )
    assert response.status_code == 302
    saved = SavedQuery.objects.get()
    assert saved.slug == "cron-sessions"
    page = console_client.post(reverse("sql:console"), {"query": "cron-sessions", "src": "cron"})
    assert page.status_code == 200
    assert [row[0]["text"] for row in page.context["rows"]] == [current_store.cron_session_id]
    assert "Cron sessions" in console_client.get(reverse("sql:saved")).content.decode()
    console_client.post(reverse("sql:delete", args=["cron-sessions"]))
    assert not SavedQuery.objects.exists()


@pytest.mark.appdb
def test_a_saved_query_cannot_take_a_canned_slug(console_client, current_store):
    response = console_client.post(
        reverse("sql:save"), {"name": "x", "slug": "sessions-with-cost", "sql": "SELECT 1"}
    )
    assert response.status_code == 400
    assert not SavedQuery.objects.exists()


@pytest.mark.appdb
def test_staff_cannot_delete_someone_elses_query(current_store, django_user_model):
    owner = django_user_model.objects.create_user("owner", is_staff=True)
    SavedQuery.objects.create(name="Mine", slug="mine", sql="SELECT 1", created_by=owner)
    other = client_for("staff")
    other.post(reverse("sql:delete", args=["mine"]))
    assert SavedQuery.objects.filter(slug="mine").exists()


@pytest.mark.appdb
def test_console_save_and_delete_need_csrf(current_store, staff_user):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(staff_user)
    response = client.post(reverse("sql:save"), {"name": "x", "sql": "SELECT 1"})
    assert response.status_code == 403
    assert not SavedQuery.objects.exists()


@pytest.mark.appdb
@pytest.mark.parametrize("role", ["viewer", "analyst", None])
def test_console_is_staff_only(current_store, role):
    client = client_for(role)
    for url in [
        reverse("sql:console"),
        reverse("sql:saved"),
        reverse("sql:console") + "?sql=SELECT+1&_export=csv",
    ]:
        response = client.get(url)
        assert response.status_code == 403
        assert "cannot use the SQL console" in response.content.decode()
    response = client.post(reverse("sql:save"), {"name": "x", "sql": "SELECT 1"})
    assert response.status_code == 403


@pytest.mark.appdb
def test_console_csv_defuses_formulas_unless_raw_and_adds_a_bom_for_spreadsheets(console_client):
    sql = {"sql": "SELECT '=HYPERLINK(\"x\")' AS f, 1 AS n"}

    def download(**options):
        response = console_client.post(reverse("sql:console"), sql | {"_export": "csv", **options})
        return b"".join(response.streaming_content).decode("utf-8")

    assert download().splitlines()[1].startswith("\"'=HYPERLINK")
    assert download(_raw="1").splitlines()[1].startswith('"=HYPERLINK')
    assert download(_bom="1").startswith("\ufeff")
