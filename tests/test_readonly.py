"""The state.db is never written: three layers, each proven on its own."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from django.db import DatabaseError, connections

from hermes_explorer.hermes_db.uri import readonly_uri
from hermes_explorer.routers import HermesReadOnlyError, HermesRouter
from sessions_app.models import Message, Session

pytestmark = pytest.mark.django_db(databases=["default", "hermes"])


def fingerprint(path) -> tuple[str, int]:
    path = Path(path)
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


def test_router_refuses_writes_and_migrations():
    router = HermesRouter()
    with pytest.raises(HermesReadOnlyError):
        router.db_for_write(Session)
    assert router.db_for_read(Message) == "hermes"
    assert router.allow_migrate("hermes", "auth") is False
    assert router.allow_migrate("default", "sessions_app") is False
    assert router.allow_migrate("default", "auth") is None


def test_orm_writes_are_refused_by_the_router(store):
    before = fingerprint(store.path)
    with pytest.raises(HermesReadOnlyError):
        Session.objects.create(id="new", source="cli", started_at=1.0)
    session = Session.objects.first()
    session.title = "changed"
    with pytest.raises(HermesReadOnlyError):
        session.save()
    with pytest.raises(HermesReadOnlyError):
        Session.objects.filter(pk=session.pk).update(title="changed")
    with pytest.raises(HermesReadOnlyError):
        session.delete()
    assert fingerprint(store.path) == before


def test_writes_with_the_router_bypassed_fail_on_the_connection(store):
    """Layers 2 and 3: `.using("hermes")` skips the router; the connection still refuses."""
    before = fingerprint(store.path)
    with pytest.raises(DatabaseError, match="readonly"):
        Session.objects.using("hermes").filter(source="cli").update(title="bypass")
    with pytest.raises(DatabaseError, match="readonly"):
        Message.objects.using("hermes").all().delete()
    with connections["hermes"].cursor() as cursor:
        for statement in [
            "INSERT INTO sessions (id, source, started_at) VALUES ('raw', 'cli', 1)",
            "UPDATE sessions SET title = 'x'",
            "DELETE FROM messages",
            "CREATE TABLE scratch (x)",
            "CREATE TEMP TABLE scratch (x)",
            "CREATE INDEX idx_scratch ON sessions (title)",
            "PRAGMA user_version = 7",
        ]:
            with pytest.raises(DatabaseError):
                cursor.execute(statement)
    assert fingerprint(store.path) == before


def test_the_connection_is_opened_read_only_with_query_only(store):
    connection = connections["hermes"]
    connection.ensure_connection()
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA query_only")
        assert cursor.fetchone()[0] == 1
    assert "mode=ro" in connection.get_connection_params()["database"]


def test_uri_layer_alone_refuses_writes(store):
    """mode=ro without query_only: the file itself cannot be written."""
    before = fingerprint(store.path)
    conn = sqlite3.connect(readonly_uri(str(store.path)), uri=True)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        conn.execute("INSERT INTO sessions (id, source, started_at) VALUES ('u', 'cli', 1)")
    conn.close()
    assert fingerprint(store.path) == before


def test_query_only_layer_alone_refuses_writes(store, tmp_path):
    """query_only without mode=ro (on a copy, since this connection could write)."""
    copy = tmp_path / "copy.db"
    copy.write_bytes(Path(store.path).read_bytes())
    conn = sqlite3.connect(copy)
    conn.execute("PRAGMA query_only = 1")
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        conn.execute("INSERT INTO sessions (id, source, started_at) VALUES ('q', 'cli', 1)")
    conn.close()


def test_readonly_uri_never_keeps_immutable():
    assert readonly_uri("/x/state.db") == "file:/x/state.db?mode=ro"
    assert readonly_uri("file:/x/state.db?immutable=1&mode=rw") == "file:/x/state.db?mode=ro"
    assert readonly_uri("/x/a b?.db").startswith("file:/x/a%20b%3F.db?mode=ro")


def test_browsing_every_page_leaves_the_file_unchanged(staff_client, store):
    before = fingerprint(store.path)
    for url in ["/", "/sessions/", "/sessions/?sort=source", "/healthz"]:
        assert staff_client.get(url).status_code == 200
    ro = sqlite3.connect(readonly_uri(str(store.path)), uri=True)
    for (session_id,) in ro.execute("SELECT id FROM sessions").fetchall():
        assert staff_client.get(f"/sessions/{session_id}/").status_code == 200
    connections["hermes"].close()
    assert fingerprint(store.path) == before
