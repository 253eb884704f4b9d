"""The store registry: every profile of a HERMES_HOME, a list of files, or one file."""

from __future__ import annotations

import sqlite3
import time

import pytest

from hermes_explorer import store, stores
from hermes_explorer.stores import REGISTRY, discover_home, parse_list
from sessions_app.models import Session
from tests.builders import StateDB
from tests.profile_home import PROFILES, build_home, serve_home

# "__all__": every profile is an alias of its own, made when the registry first sees it.
pytestmark = pytest.mark.django_db(databases="__all__")


def test_discovery_finds_the_root_and_every_profile(home):
    found = dict(discover_home(str(home.home)))
    assert set(found) == set(PROFILES)
    assert found["default"] == str(home.home / "state.db")
    served = stores.all_stores()
    assert [s.name for s in served][0] == "default"
    assert {s.name for s in served} == set(PROFILES)
    assert len({s.alias for s in served}) == len(served)
    assert stores.multi()


def test_each_store_reads_its_own_file_with_its_own_shape(home):
    versions = {}
    for one in stores.all_stores():
        with stores.using(one):
            assert store.path() == str(home.path(one.name))
            (n,) = store.one("SELECT count(*) FROM messages")
            assert n == home.messages[one.name]
            # The ORM follows the current store too (the router).
            assert Session.objects.count() == len(home.sessions[one.name])
            versions[one.name] = store.shape().schema_version
        # And the alias can be named directly.
        (n,) = store.one("SELECT count(*) FROM sessions", alias=one.alias)
        assert n == len(home.sessions[one.name])
    assert len(set(versions.values())) == len(PROFILES)


def test_every_store_is_read_only(home):
    for one in stores.all_stores():
        with stores.using(one), pytest.raises(Exception, match="readonly|read-only|query_only"):
            store.rows("DELETE FROM messages", [])


def test_an_explicit_list_of_files(settings, home, tmp_path):
    settings.HERMES_STORES = (
        f"alpha={home.path('coder')},beta={home.path('cron')},gone={tmp_path / 'nope.db'}"
    )
    REGISTRY.rescan()
    served = stores.all_stores()
    assert [s.name for s in served] == ["alpha", "beta", "gone"]
    assert REGISTRY.status(served[0]).readable
    gone = REGISTRY.status(served[2])
    assert not gone.readable and "missing" in gone.reason


def test_parse_list_skips_malformed_entries():
    assert parse_list("a=/x.db, b = /y.db,bad,=/z.db,a=/again.db,../x=/w.db") == [
        ("a", "/x.db"),
        ("b", "/y.db"),
    ]


def test_a_single_state_db_is_the_default_profile(current_store):
    served = stores.all_stores()
    assert len(served) == 1 and served[0].name == "default" and served[0].alias == "hermes"
    assert not stores.multi()


def test_a_profile_created_at_runtime_appears_after_the_rescan(settings, tmp_path, request):
    facts = build_home(tmp_path / "home", per=2, profiles={"default": "current"})
    serve_home(settings, facts.home, request)
    settings.HERMES_STORES_RESCAN = 0.3
    assert [s.name for s in stores.all_stores()] == ["default"]
    new = facts.home / "profiles" / "late" / "state.db"
    new.parent.mkdir(parents=True)
    StateDB.create(new, "v20").close()
    time.sleep(0.4)
    assert [s.name for s in stores.all_stores()] == ["default", "late"]
    # A profile whose file goes away stays listed, unavailable, and the rest reads on.
    new.unlink()
    time.sleep(0.4)
    late = stores.by_name("late")
    assert late is not None
    assert not REGISTRY.status(late, fresh=True).readable
    assert REGISTRY.status(stores.by_name("default"), fresh=True).readable


def _broken_home(tmp_path):
    facts = build_home(tmp_path / "home", per=2, profiles={"default": "current", "ok": "v10"})
    corrupt = facts.home / "profiles" / "corrupt" / "state.db"
    corrupt.parent.mkdir(parents=True)
    corrupt.write_text("this is not an sqlite file " * 100)
    foreign = facts.home / "profiles" / "foreign" / "state.db"
    foreign.parent.mkdir(parents=True)
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE notes (x)")
    conn.commit()
    conn.close()
    return facts


def test_broken_stores_are_unavailable_with_a_reason_and_the_others_work(
    settings, tmp_path, staff_client, request
):
    facts = _broken_home(tmp_path)
    serve_home(settings, facts.home, request)
    status = {s.name: REGISTRY.status(s, fresh=True) for s in stores.all_stores()}
    assert status["default"].readable and status["ok"].readable
    assert not status["corrupt"].readable and "not an SQLite database" in status["corrupt"].reason
    assert not status["foreign"].readable and "not look like a Hermes" in status["foreign"].reason
    health = staff_client.get("/healthz")
    assert health.status_code == 200
    by_profile = {s["profile"]: s for s in health.json()["stores"]}
    assert by_profile["ok"]["readable"] and by_profile["default"]["readable"]
    assert not by_profile["corrupt"]["readable"] and not by_profile["foreign"]["readable"]
    assert by_profile["ok"]["size"] > 0
    assert staff_client.get("/p/ok/sessions/").status_code == 200
    assert staff_client.get("/p/corrupt/sessions/").status_code == 503


def test_healthz_fails_only_when_no_store_reads(settings, tmp_path, client, request):
    home = tmp_path / "home"
    (home / "profiles" / "bad").mkdir(parents=True)
    (home / "state.db").write_text("garbage " * 100)
    (home / "profiles" / "bad" / "state.db").write_text("garbage " * 100)
    serve_home(settings, home, request)
    health = client.get("/healthz")
    assert health.status_code == 503
    listed = health.json()["stores"]
    # A monitor on this host (loopback, no proxy): every store's health by profile.
    assert len(listed) == 2 and not any(s["readable"] for s in listed)
    # From elsewhere, signed out: up or not, and whether every store reads; nothing more.
    remote = client.get("/healthz", REMOTE_ADDR="192.0.2.7")
    assert remote.status_code == 503
    assert set(remote.json()) == {"status", "stores_readable", "elapsed_ms"}
    assert remote.json()["stores_readable"] is False


def test_profile_urls_read_that_profile_only(home, staff_client):
    for profile, made in home.sessions.items():
        page = staff_client.get(f"/p/{profile}/sessions/").content.decode()
        own = made[0][0]
        assert own in page
        others = [m[0][0] for p, m in home.sessions.items() if p != profile]
        assert not any(o in page for o in others)
        # Links built on the page stay in the profile.
        assert f"/p/{profile}/sessions/{own}/" in page
        detail = staff_client.get(f"/p/{profile}/sessions/{own}/")
        assert detail.status_code == 200
    assert staff_client.get("/p/nobody/sessions/").status_code == 404


def test_old_session_urls_land_on_their_profile(home, staff_client):
    sid = home.sessions["coder"][2][0]
    response = staff_client.get(f"/sessions/{sid}/?page=1")
    assert response.status_code == 302
    assert response["Location"] == f"/p/coder/sessions/{sid}/?page=1"
    export = staff_client.get(f"/sessions/{sid}/export.md")
    assert export["Location"] == f"/p/coder/sessions/{sid}/export.md"
    assert staff_client.get("/sessions/no-such-session/").status_code == 404


def test_an_id_in_several_profiles_gets_a_chooser(home, staff_client):
    from tests.profile_home import SHARED_ID

    page = staff_client.get(f"/sessions/{SHARED_ID}/")
    assert page.status_code == 300
    body = page.content.decode()
    assert f"/p/default/sessions/{SHARED_ID}/" in body
    assert f"/p/support/sessions/{SHARED_ID}/" in body
    assert "shared in support" in body


def test_profiles_app_imports_no_other_app():
    """The apps that merge stores import it, never the reverse."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    apps = {p.name for p in root.iterdir() if p.name.endswith("_app")}
    found = set()
    for path in (root / "profiles_app").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
            elif isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
    assert found & apps <= {"profiles_app"}
