"""A profile kept in a PostgreSQL schema: its sources, the read-only door, its faults.

Against a real throwaway PostgreSQL (``tests/hermes_pg.py``): the nasty fixture of each shape
loaded into ``hermes_<shape>``, a SELECT-only role, and the server's superuser (a role that
could write, which the explorer must refuse to use for writing all the same).
"""

from __future__ import annotations

import hashlib
import io
import json
import socket
import time

import psycopg
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import DatabaseError, connections

from hermes_explorer import hermes_pg, store, stores
from hermes_explorer.hermes_db.deadline import QueryTimeout
from hermes_explorer.hermes_pg import base as pg_base
from hermes_explorer.stores import REGISTRY, discover_home, parse_list
from sessions_app.models import Session
from tests import servers
from tests.builders import StateDB
from tests.hermes_pg import hermes_pg as hermes_pg_server  # noqa: F401
from tests.profile_home import allow_new_aliases

pytestmark = pytest.mark.django_db(databases="__all__")


@pytest.fixture
def pg(hermes_pg_server):  # noqa: F811
    return hermes_pg_server


@pytest.fixture
def serve(settings, request):
    """``serve(name=source, …)``: the explorer serving exactly these stores for one test."""
    allow_new_aliases(
        request.getfixturevalue("monkeypatch"), request.getfixturevalue("django_db_blocker")
    )

    def serving(**sources):
        settings.HERMES_STORES = ",".join(f"{n}={s}" for n, s in sources.items())
        settings.HERMES_SINGLE_FILE = False
        REGISTRY.rescan()
        return {s.name: s for s in stores.all_stores()}

    yield serving
    for one in stores.all_stores():
        connections[one.alias].close()
    REGISTRY.rescan()


def at(url: str, schema: str) -> str:
    return f"{url}?schema={schema}"


def snapshot(pg) -> tuple:
    """What the superuser sees of the current shape's schema: tables, rows, the revision."""
    with psycopg.connect(pg.url) as conn:
        tables = conn.execute(
            "SELECT string_agg(relname, ',' ORDER BY relname) FROM pg_class"
            " WHERE relnamespace = 'hermes_current'::regnamespace"
        ).fetchone()
        counts = conn.execute(
            "SELECT (SELECT count(*) FROM hermes_current.messages),"
            " (SELECT count(*) FROM hermes_current.sessions),"
            " (SELECT revision FROM hermes_current.state_change_revision),"
            " (SELECT count(*) FROM pg_largeobject_metadata),"
            " (SELECT last_value FROM hermes_current.messages_id_seq)"
        ).fetchone()
        schemas = conn.execute("SELECT count(*) FROM pg_namespace").fetchone()
    return tables, counts, schemas


# --- sources -------------------------------------------------------------------------------


def test_a_list_mixes_files_and_schemas_and_the_schema_comes_off_the_url():
    url = "postgresql://explorer:s3cret@db:5432/hermes?schema=hermes_team&sslmode=require"
    assert parse_list(f"bot=/srv/a.db,team={url}") == [("bot", "/srv/a.db"), ("team", url)]
    conninfo, schema = hermes_pg.split_source(url)
    assert (conninfo, schema) == (
        "postgresql://explorer:s3cret@db:5432/hermes?sslmode=require",
        "hermes_team",
    )
    config = hermes_pg.database_settings(url, {"TIME_ZONE": None})
    assert (config["HOST"], config["PORT"], config["NAME"], config["USER"]) == (
        "db",
        5432,
        "hermes",
        "explorer",
    )
    assert config["OPTIONS"] == {"sslmode": "require"} and config["HERMES_SCHEMA"] == "hermes_team"
    assert not config["HERMES_PROBLEM"]
    # Shown without its password; a schema name Hermes would refuse is a problem, not a query.
    assert hermes_pg.shown(url) == url.replace(":s3cret@", ":***@")
    assert (
        "invalid schema"
        in hermes_pg.database_settings("postgresql://db/h?schema=x;drop", {})["HERMES_PROBLEM"]
    )


def write_profile(directory, config: str | None = None, env: str | None = None, db: bool = False):
    directory.mkdir(parents=True, exist_ok=True)
    if config is not None:
        (directory / "config.yaml").write_text(config)
    if env is not None:
        (directory / ".env").write_text(env)
    if db:
        StateDB.create(directory / "state.db", "current").close()


def test_discovery_reads_each_profiles_config_yaml_and_env(tmp_path, monkeypatch):
    home = tmp_path / ".hermes"
    url = "postgresql://explorer@db:5432/hermes"
    write_profile(home, "model: x\n", db=True)
    # Moved to PostgreSQL: the old state.db stays, frozen; the configuration decides.
    write_profile(
        home / "profiles" / "team",
        "database:\n  backend: postgres\n  schema: hermes_team\n",
        f'export HERMES_DATABASE_URL="{url}"\n',
        db=True,
    )
    # No schema: derived as Hermes does; no .env: the process environment's URL.
    write_profile(home / "profiles" / "Ops.Bot", "database:\n  backend: postgres\n")
    monkeypatch.setenv("HERMES_DATABASE_URL", "postgresql://other@db2/hermes")
    write_profile(home / "profiles" / "broken", "database: [backend: postgres\n", db=True)
    write_profile(home / "profiles" / "nourl", "database: {backend: postgres}\n", "X=1\n")
    problems: dict[str, str] = {}
    found = dict(discover_home(str(home), problems))
    assert found["default"] == str(home / "state.db")
    assert found["team"] == f"{url}?schema=hermes_team"
    digest = hashlib.sha256(str((home / "profiles" / "Ops.Bot" / "state.db").resolve()).encode())
    assert (
        found["Ops.Bot"]
        == f"postgresql://other@db2/hermes?schema=hermes_ops_bot_{digest.hexdigest()[:12]}"
    )
    assert found["nourl"].startswith("postgresql://other@db2/hermes?schema=hermes_nourl_")
    assert set(problems) == {"broken"} and "config.yaml" in problems["broken"]
    monkeypatch.delenv("HERMES_DATABASE_URL")
    problems.clear()
    discover_home(str(home), problems)
    assert set(problems) == {"broken", "nourl", "Ops.Bot"}
    assert "HERMES_DATABASE_URL" in problems["nourl"]
    assert stores.derived_schema("A" * 40 + "-x", home / "s.db").startswith(
        "hermes_" + "a" * 35 + "_"
    )


def test_a_malformed_config_is_that_profile_unavailable_with_the_reason(
    settings, request, tmp_path, client, staff_user
):
    home = tmp_path / ".hermes"
    write_profile(home, db=True)
    write_profile(home / "profiles" / "broken", "database:\n  backend: [postgres\n", db=True)
    allow_new_aliases(
        request.getfixturevalue("monkeypatch"), request.getfixturevalue("django_db_blocker")
    )
    settings.HERMES_HOME, settings.HERMES_STORES, settings.HERMES_SINGLE_FILE = str(home), "", False
    REGISTRY.rescan()
    broken = stores.by_name("broken")
    status = REGISTRY.status(broken)
    assert not status.readable and "config.yaml cannot be read" in status.reason
    assert REGISTRY.status(stores.by_name("default")).readable
    client.force_login(staff_user)
    page = client.get("/p/broken/sessions/")
    assert page.status_code == 503 and b"configuration" in page.content
    assert client.get("/p/default/sessions/").status_code == 200
    health = client.get("/healthz").json()
    assert {s["profile"]: s["readable"] for s in health["stores"]} == {
        "default": True,
        "broken": False,
    }
    REGISTRY.rescan()


# --- reading ---------------------------------------------------------------------------------


def test_a_schema_reads_through_the_same_door_as_a_file(pg, serve):
    facts = pg.stores["current"]
    served = serve(file=facts.path, team=at(pg.reader_url, "hermes_current"))
    team = served["team"]
    assert team.postgres and not served["file"].postgres and team.alias == "hermes@team"
    for one in served.values():
        with stores.using(one):
            (n,) = store.one("SELECT count(*) FROM messages")
            assert n == facts.message_count
            assert Session.objects.count() == len(facts.session_ids)
    with stores.using(team):
        shape = store.shape()
        assert shape.fts_layout == "postgres tsvector"
        assert shape.has_column("messages", "search_vector") and shape.schema_version is not None
        assert shape.catalog.table("sessions").pks == ("id",)
        assert store.journal_mode() == "mvcc" and not store.readers_block_writer()
        assert store.writes() == ""
        assert "s3cret" not in store.name()
    status = REGISTRY.status(team)
    assert status.readable and status.writes == "" and status.size is None
    # The PostgreSQL layout has its own full-text index, and no daily usage table.
    assert status.shape == "Hermes schema v31 (older layout, no daily usage)"


def test_the_change_key_is_the_schemas_revision(pg, serve):
    served = serve(team=at(pg.reader_url, "hermes_current"))
    with stores.using(served["team"]):
        before = store.file_signature()
        assert before is not None
        assert store.while_unchanged("t", (), lambda: 1, 60) == 1
        assert store.while_unchanged("t", (), lambda: 2, 60) == 1
        with psycopg.connect(pg.url) as conn:
            conn.execute("UPDATE hermes_current.state_change_revision SET revision = revision + 1")
        try:
            assert store.file_signature() != before
            assert store.while_unchanged("t", (), lambda: 3, 60) == 3
        finally:
            with psycopg.connect(pg.url) as conn:
                conn.execute(
                    "UPDATE hermes_current.state_change_revision SET revision = revision - 1"
                )


# --- read-only -------------------------------------------------------------------------------

WRITES = [
    "INSERT INTO messages (session_id, role, content) VALUES ('x', 'user', 'x')",
    "UPDATE sessions SET title = 'x'",
    "DELETE FROM messages",
    "CREATE TABLE intruder (x int)",
    "TRUNCATE messages",
    "COPY messages (content) FROM STDIN",
    "SELECT nextval('messages_id_seq')",
    "SET TRANSACTION READ WRITE; INSERT INTO sessions (id) VALUES ('x')",
    "DROP SCHEMA hermes_current CASCADE",
]
# A first statement that tries to open the door for the next one.
OPENERS = [
    "SET default_transaction_read_only = off",
    "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
    "BEGIN READ WRITE",
    "SELECT set_config('default_transaction_read_only', 'off', false)",
    "SELECT set_config('transaction_read_only', 'off', false)",
    "SET TRANSACTION READ WRITE",
    "COMMIT",
]


@pytest.mark.parametrize("role", ["superuser", "reader"])
def test_every_write_is_refused_and_the_schema_is_unchanged(pg, serve, role):
    url = pg.url if role == "superuser" else pg.reader_url
    served = serve(team=at(url, "hermes_current"))
    before = snapshot(pg)
    with stores.using(served["team"]):
        session = Session.objects.first()
        session.title = "changed"
        with pytest.raises(DatabaseError):
            session.save()
        for sql in WRITES:
            with pytest.raises(DatabaseError):
                store.rows(sql)
        # Ways around execute() are closed.
        with connections[served["team"].alias].cursor() as cur:
            for call in (cur.executemany, cur.copy, cur.stream):
                with pytest.raises(DatabaseError):
                    call("INSERT INTO sessions (id) VALUES (%s)", [["intruder"]])
        # PostgreSQL lets a read-only transaction make a large object: it is rolled back.
        store.rows("SELECT lo_create(0)")
        for opener in OPENERS:
            with pytest.raises(DatabaseError):
                try:
                    store.rows(opener)
                except DatabaseError:
                    pass
                store.rows("INSERT INTO sessions (id) VALUES ('intruder')")
    assert snapshot(pg) == before


def test_a_role_that_could_write_is_named_on_pages_and_in_healthz(
    pg, serve, client, staff_user, caplog
):
    served = serve(team=at(pg.url, "hermes_current"), reader=at(pg.reader_url, "hermes_current"))
    assert "superuser" in REGISTRY.status(served["team"]).writes
    assert REGISTRY.status(served["reader"]).writes == ""
    # Logged when the connection opens, once per connection.
    warned = [r.getMessage() for r in caplog.records if "could write" in r.getMessage()]
    assert len(warned) == 1 and "hermes_current" in warned[0] and "superuser" in warned[0]
    client.force_login(staff_user)
    health = client.get("/healthz").json()
    by_name = {s["profile"]: s for s in health["stores"]}
    assert (
        "superuser" in by_name["team"]["writes"]
        and "CREATE on the schema" in by_name["team"]["writes"]
    )
    assert "writes" not in by_name["reader"]
    page = client.get("/p/team/annotations/tags/")
    assert page.status_code == 200 and b"SELECT-only role" in page.content
    assert b"SELECT-only role" not in client.get("/p/reader/annotations/tags/").content


# --- faults ----------------------------------------------------------------------------------


def other_role(pg, name: str, *grants: str) -> str:
    """A LOGIN role ``name`` with only ``grants`` on the current shape's schema: its URL."""
    with psycopg.connect(pg.url, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [name]).fetchone() is None:
            conn.execute(f"CREATE ROLE {name} LOGIN")
        for grant in grants:
            conn.execute(f"GRANT {grant} TO {name}")
    return pg.server.url.replace("//explorer@", f"//{name}@", 1)


@pytest.fixture
def silent_port():
    """A port that accepts connections and never answers (a server hung or far away)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield listener.getsockname()[1]


def faulty_sources(pg, silent_port) -> dict[str, str]:
    down = servers.free_port()
    return {
        "down": f"postgresql://explorer@127.0.0.1:{down}/explorer?schema=hermes_current",
        "hung": f"postgresql://explorer@127.0.0.1:{silent_port}/explorer?schema=hermes_current",
        "noschema": at(pg.reader_url, "hermes_nowhere"),
        "denied": at(other_role(pg, "hermes_stranger"), "hermes_current"),
        "notables": at(
            other_role(pg, "hermes_looker", "USAGE ON SCHEMA hermes_current"), "hermes_current"
        ),
    }


REASONS = {
    "down": "cannot be reached",
    "hung": "cannot be reached",
    "noschema": "schema does not exist",
    "denied": "permission denied",
    "notables": "permission denied",
}


def test_each_fault_is_that_profile_unavailable_with_its_reason(
    pg, serve, silent_port, client, staff_user
):
    served = serve(ok=at(pg.reader_url, "hermes_current"), **faulty_sources(pg, silent_port))
    for name, why in REASONS.items():
        began = time.monotonic()
        status = REGISTRY.status(served[name], fresh=True)
        assert not status.readable and why in status.reason, (name, status)
        # libpq waits 2 s at least for a connection; nothing waits longer.
        assert time.monotonic() - began < 3.5, name
    assert REGISTRY.status(served["ok"]).readable
    client.force_login(staff_user)
    for name in REASONS:
        page = client.get(f"/p/{name}/sessions/")
        assert page.status_code == 503, name
    health = client.get("/healthz")
    assert health.status_code == 200
    readable = {s["profile"]: s["readable"] for s in health.json()["stores"]}
    assert readable == {"ok": True, **{name: False for name in REASONS}}
    metrics = client.get("/metrics").content.decode()
    assert 'hermes_explorer_store_readable{profile="ok"} 1.0' in metrics
    for name in REASONS:
        assert f'hermes_explorer_store_readable{{profile="{name}"}} 0.0' in metrics


def test_a_query_a_standby_cancels_for_its_replay_is_told_to_load_the_page_again(
    pg, serve, client, staff_user
):
    """A hot standby cancels a query that holds up its replay (SQLSTATE 40001, "conflict with
    recovery"): the page and the old API say so (503), and so does the profile's probe.  The
    server raises that very error here from a schema whose ``sessions`` is a view calling a
    function that raises it, so every read of the sessions meets it."""
    from tests.hermes_pg import READER

    with psycopg.connect(pg.url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS hermes_replayed CASCADE")
        conn.execute("CREATE SCHEMA hermes_replayed")
        conn.execute(
            "CREATE FUNCTION hermes_replayed.replay() RETURNS boolean LANGUAGE plpgsql AS $$"
            "BEGIN RAISE EXCEPTION USING ERRCODE = '40001',"
            " MESSAGE = 'canceling statement due to conflict with recovery',"
            " DETAIL = 'User query might have needed to see row versions that must be removed.';"
            " END$$"
        )
        for table in ("messages", "schema_version"):
            conn.execute(
                f"CREATE VIEW hermes_replayed.{table} AS SELECT * FROM hermes_current.{table}"
            )
        conn.execute(
            "CREATE VIEW hermes_replayed.sessions AS SELECT * FROM hermes_current.sessions"
            " WHERE hermes_replayed.replay()"
        )
        conn.execute(f"GRANT USAGE ON SCHEMA hermes_replayed TO {READER}")
        conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA hermes_replayed TO {READER}")
    served = serve(standby=at(pg.reader_url, "hermes_replayed"))
    client.force_login(staff_user)
    page = client.get("/p/standby/sessions/")
    assert page.status_code == 503
    assert b"cancelled this query to replay a change from its primary" in page.content
    assert b"Load the page again" in page.content
    from tests.roles_helpers import script_client_for

    api = script_client_for("staff").get("/p/standby/state.json?sql=select+count(*)+from+sessions")
    assert api.status_code == 503, api.content[:300]
    assert "replay a change" in api.json()["error"]
    # Here every read of the sessions meets it, so the profile's probe says the same (on a
    # standby the cancellation passes: the next probe reads).
    assert "replay a change" in REGISTRY.status(served["standby"], fresh=True).reason


def test_a_server_too_old_is_refused_and_says_what_is_supported(pg, serve, monkeypatch):
    monkeypatch.setattr(pg_base, "MIN_VERSION", (99,))
    served = serve(old=at(pg.reader_url, "hermes_current"), file=pg.stores["current"].path)
    status = REGISTRY.status(served["old"], fresh=True)
    assert not status.readable and "too old" in status.reason and "14 and later" in status.reason
    with stores.using(served["old"]), pytest.raises(DatabaseError, match=r"99 or later.*found 1"):
        store.shape()
    assert REGISTRY.status(served["file"]).readable


def test_a_statement_past_its_budget_is_stopped_with_the_sqlite_timeout(pg, serve):
    served = serve(team=at(pg.reader_url, "hermes_current"))
    with stores.using(served["team"]):
        store.shape()
        began = time.monotonic()
        with pytest.raises(QueryTimeout) as caught:
            store.rows("SELECT pg_sleep(5)", budget=0.3)
        assert time.monotonic() - began < 1.5 and caught.value.budget == 0.3
        # The connection is fine afterwards, and the next statement has its own budget.
        assert store.one("SELECT count(*) FROM sessions")[0] == len(
            pg.stores["current"].session_ids
        )


def test_a_dropped_connection_is_replaced_on_the_next_request(pg, serve):
    served = serve(team=at(pg.reader_url, "hermes_current"))
    alias = served["team"].alias
    with stores.using(served["team"]):
        store.shape()
        pid = store.one("SELECT pg_backend_pid()")[0]
        with psycopg.connect(pg.url, autocommit=True) as conn:
            conn.execute("SELECT pg_terminate_backend(%s)", [pid])
        connections[alias].close_if_unusable_or_obsolete()
        assert store.one("SELECT pg_backend_pid()")[0] != pid


def test_the_profile_switcher_and_list_say_each_profiles_kind(pg, serve, client, staff_user):
    serve(
        file=pg.stores["current"].path,
        team=at(pg.reader_url.replace("@", ":s3cret@", 1), "hermes_current"),
    )
    client.force_login(staff_user)
    page = client.get("/annotations/tags/").content.decode()
    switcher = page[page.index('class="profile-switcher"') :]
    assert 'p/file/annotations/tags/">file</a> <small class="muted">SQLite file</small>' in switcher
    assert (
        'p/team/annotations/tags/">team</a> <small class="muted">PostgreSQL schema</small>'
        in switcher
    )
    listing = io.StringIO()
    call_command("profiles", "list", stdout=listing)
    assert "profile team (PostgreSQL schema): postgresql://hermes_reader:***@" in listing.getvalue()
    assert f"profile file (SQLite file): {pg.stores['current'].path}" in listing.getvalue()


# --- the session list --------------------------------------------------------------------------


def test_the_session_list_renders_from_a_schema_as_from_its_file(pg, serve, client, staff_user):
    facts = pg.stores["current"]
    serve(file=facts.path, team=at(pg.reader_url, "hermes_current"))
    client.force_login(staff_user)
    pages = {name: client.get(f"/p/{name}/sessions/?_export=json") for name in ("file", "team")}
    assert {name: page.status_code for name, page in pages.items()} == {"file": 200, "team": 200}
    rows = {
        name: [{**row, "profile": None} for row in json.loads(b"".join(page.streaming_content))]
        for name, page in pages.items()
    }
    assert rows["team"] == rows["file"] and rows["team"]
    html = client.get("/p/team/sessions/")
    assert html.status_code == 200 and facts.unicode_title in html.content.decode()


@pytest.mark.parametrize(
    "query",
    [
        "source=cli&source=telegram&source=discord",
        "sort=-message_count",
        "sort=title",
        "model=x",
        "started_after=2025-01-01",
        "title=a",
        "user_id=318273645510098944",
        "has_parent=true",
    ],
)
def test_the_session_lists_filters_and_sorts_read_a_schema(pg, serve, client, staff_user, query):
    serve(file=pg.stores["current"].path, team=at(pg.reader_url, "hermes_current"))
    client.force_login(staff_user)
    got = {
        name: client.get(f"/p/{name}/sessions/?{query}&_export=json") for name in ("file", "team")
    }
    assert {name: page.status_code for name, page in got.items()} == {"file": 200, "team": 200}
    ids = {
        name: [row["id"] for row in json.loads(b"".join(page.streaming_content))]
        for name, page in got.items()
    }
    assert ids["team"] == ids["file"]


@pytest.mark.render_context
def test_title_and_user_filters_never_confirm_a_secret_on_a_schema(pg, serve, client, tmp_path):
    openai = "sk-proj-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe" * 2
    github = "ghp_" + "Q1w2E3r4T5" * 4
    path = tmp_path / "meta.db"
    with StateDB.create(path, "current") as db:
        db.session("20260101_090000_me7a01", title=f"debug {openai}", user_id=github)
        db.message("20260101_090000_me7a01", "user", "the usual words")
        db.refresh_counters()
    pg.load(path, "hermes_meta")
    serve(meta=at(pg.reader_url, "hermes_meta"))
    client.force_login(get_user_model().objects.create_user("viewer", password="pw-viewer-123"))
    for params in ({"title": openai[:20]}, {"title": openai[8:30]}, {"user_id": github}):
        response = client.get("/sessions/", params)
        assert response.status_code == 200
        assert list(response.context["table"].data) == [], params
    # What the reader can see still filters.
    assert len(list(client.get("/sessions/", {"title": "DEBUG"}).context["table"].data)) == 1


def test_a_page_held_up_by_a_lock_says_it_ran_out_of_time_within_its_budget(
    pg, serve, settings, client, staff_user
):
    served = serve(team=at(pg.reader_url, "hermes_current"), file=pg.stores["current"].path)
    settings.HERMES_QUERY_TIMEOUT = 0.5
    client.force_login(staff_user)
    with psycopg.connect(pg.url) as holder:
        # A migration of Hermes holds the table: every read of it waits.
        holder.execute("LOCK TABLE hermes_current.sessions IN ACCESS EXCLUSIVE MODE")
        began = time.monotonic()
        page = client.get("/p/team/sessions/")
        assert time.monotonic() - began < 2.5
        assert page.status_code == 503 and b"0.5" in page.content
        assert client.get("/p/file/sessions/").status_code == 200
        holder.rollback()
    with stores.using(served["team"]):
        assert store.one("SELECT count(*) FROM sessions")[0] == len(
            pg.stores["current"].session_ids
        )


def test_the_live_page_reads_a_schema(pg, serve, client, staff_user):
    serve(team=at(pg.reader_url, "hermes_current"))
    client.force_login(staff_user)
    assert client.get("/p/team/live/").status_code == 200


PAGE_FAMILIES = [
    "/p/team/",
    "/p/team/sessions/",
    "/p/team/sessions/?_export=csv",
    "/p/team/sessions/{sid}/",
    "/p/team/sessions/{sid}/timeline/",
    "/p/team/sessions/{sid}/export.md",
    "/p/team/messages/",
    "/p/team/messages/?role=user",
    "/p/team/search/?q=hello",
    "/p/team/insights/?days=all",
    "/p/team/people/?days=all",
    "/p/team/failures/?days=30",
    "/p/team/live/",
    "/p/team/state/sessions",
    "/p/team/state/sessions.json",
    "/p/team/state/messages.json?_search=hello",
    "/p/team/state/messages.csv",
    "/p/team/state.json",
    "/p/team/sessions/?_export=dataset",
    "/p/team/sessions/{sid}/after/0/",
    "/p/team/review/sessions/{sid}/?source=cli",
    "/p/team/review/sessions/{sid}/",
    "/p/team/sql/?sql=select+count(*)+from+sessions",
]


@pytest.mark.parametrize("url", PAGE_FAMILIES)
def test_every_page_family_answers_on_a_schema(pg, serve, client, staff_user, url):
    """Every page family answers a PostgreSQL profile (what each answers is compared with the
    SQLite file in the tests of that family)."""
    serve(team=at(pg.reader_url, "hermes_current"))
    client.force_login(staff_user)
    sid = pg.stores["current"].session_ids[0]
    assert client.get(url.format(sid=sid)).status_code == 200


def test_a_page_without_a_postgresql_version_says_so_and_never_500(
    pg, serve, client, staff_user, monkeypatch
):
    """A statement a PostgreSQL schema cannot run (a page whose SQL has no PostgreSQL version)
    gives the page that says so (501), never a 500."""
    from django.core.cache import caches

    from live_app import views

    def sqlite_only(**kwargs):
        return store.rows("SELECT typeof(id) FROM sessions LIMIT 1", [])

    for cache in caches.all():
        cache.clear()
    monkeypatch.setattr(views, "live_sessions", sqlite_only)
    serve(team=at(pg.reader_url, "hermes_current"))
    client.force_login(staff_user)
    page = client.get("/p/team/live/")
    assert page.status_code == 501
    assert b"cannot read a PostgreSQL profile yet" in page.content


@pytest.mark.parametrize("url", ["/", "/failures/?days=30", "/insights/?days=all", "/sessions/"])
def test_pages_over_every_profile_still_answer_beside_a_schema(
    pg, serve, client, staff_user, tmp_path, url
):
    """A page over "All profiles" answers with the SQLite profiles' figures when a PostgreSQL
    profile beside them cannot be read by it yet."""
    path = tmp_path / "state.db"
    StateDB.create(path, "current").close()
    serve(file=str(path), team=at(pg.reader_url, "hermes_current"))
    client.force_login(staff_user)
    assert client.get(url).status_code == 200


@pytest.mark.parametrize("url", ["/", "/sessions/", "/healthz", "/metrics", "/live/", "/sql/"])
def test_an_explorer_of_schemas_only_answers(pg, serve, client, staff_user, url):
    """With no SQLite file at all (every profile a schema), the pages over all profiles answer."""
    serve(team=at(pg.reader_url, "hermes_current"), other=at(pg.reader_url, "hermes_legacy"))
    client.force_login(staff_user)
    assert client.get(url).status_code in (200, 501)


def test_a_session_link_without_a_profile_lands_on_the_schema_that_holds_it(
    pg, serve, client, staff_user, tmp_path
):
    """``/sessions/<id>/`` with no profile finds the profile holding the session, a schema
    included, and leaves that profile readable."""
    path = tmp_path / "state.db"
    StateDB.create(path, "current").close()
    served = serve(file=str(path), team=at(pg.reader_url, "hermes_current"))
    client.force_login(staff_user)
    sid = pg.stores["current"].session_ids[0]
    page = client.get(f"/sessions/{sid}/")
    assert page.status_code == 302, page.content[:300]
    assert page["Location"] == f"/p/team/sessions/{sid}/"
    assert REGISTRY.status(served["team"]).readable
