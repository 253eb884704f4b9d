"""Redaction is a boundary: every secret shape, stored wherever Hermes stores text, is hidden
on every output path, for analysts and viewers alike.

One store holds a session per shape of the shape table (``test_redaction_shapes.SHAPES``): the
secret in the title, the user message, the tool-call arguments (JSON inside JSON, as Hermes
writes them, with a ``password`` key and a ``\\u``-escaped copy), the tool result (after a
JSON ``\\n``) and the reasoning.  Each output path is then read whole and no 8 characters of
any secret may survive, in the text or in anything decoded from it.
"""

from __future__ import annotations

import json

import pytest
from django.db import connections

from tests.builders import NASTY_NOW, StateDB, tool_call
from tests.conftest import use_store
from tests.roles_helpers import make_user
from tests.test_redaction_shapes import SHAPES, _leaks

pytestmark = pytest.mark.django_db(databases=["default", "hermes"])


def _escaped(text: str) -> str:
    """The secret as a JSON writer that escapes letters would store it (``\\u0073k-…``)."""
    return "".join(f"\\u{ord(c):04x}" if c.isalpha() and i < 3 else c for i, c in enumerate(text))


@pytest.fixture(scope="module")
def secret_store(tmp_path_factory, django_db_blocker):
    path = tmp_path_factory.mktemp("paths") / "state.db"
    ids = []
    with StateDB.create(path, "current") as db:
        for n, (name, text, _secret) in enumerate(SHAPES):
            sid = f"20260101_{n:06d}_5ec{n:03d}"
            ids.append(sid)
            db.session(
                sid,
                title=f"zorblax case {n} {text}",
                user_id=f"user {n}",
                started_at=NASTY_NOW - 3600 + n,
                input_tokens=10,
            )
            db.message(sid, "user", f"zorblax please use {text} for {name}")
            arguments = {"command": f"cat > .env <<EOF\n{text}\nEOF", "password": text, "n": n}
            db.message(
                sid,
                "assistant",
                None,
                tool_calls=[tool_call("terminal", arguments, f"call_{n}")],
                reasoning=f"the zorblax key is {text}",
            )
            result = json.dumps({"output": f"ok\n{text}\n", "escaped": "x"})
            result = result.replace('"x"', '"' + _escaped(text) + '"')
            db.message(sid, "tool", result, tool_call_id=f"call_{n}", tool_name="terminal")
        db.refresh_counters()
    return path, ids


@pytest.fixture
def store_of_secrets(secret_store):
    path, ids = secret_store
    use_store(path)
    yield ids
    connections["hermes"].close()


def _client(role):
    from django.test import Client

    client = Client()
    client.force_login(make_user(role))
    return client


def _read(response) -> str:
    assert response.status_code == 200, response.status_code
    data = b"".join(response.streaming_content) if response.streaming else response.content
    return data.decode("utf-8", errors="replace")


def _assert_hidden(body: str, where: str) -> None:
    for name, _text, secret in SHAPES:
        leaked = _leaks(body, secret)
        if leaked:
            at = max(body.find(leaked[0]), 0)
            pytest.fail(f"{name} leaks on {where}: {leaked[:3]} in …{body[at - 200 : at + 60]!r}")


def test_the_table_covers_at_least_forty_shapes():
    assert len(SHAPES) >= 40


@pytest.mark.parametrize("role", ["analyst", "viewer"])
def test_pages_hide_every_secret(store_of_secrets, role):
    client = _client(role)
    urls = ["/", "/sessions/?flags=all", "/insights/?days=30", "/state/sessions"]
    urls += [f"/sessions/{sid}/" for sid in store_of_secrets]
    if role == "analyst":
        urls += ["/messages/?size=1000", "/search/?q=zorblax", "/search/?q=zorblax&mode=substring"]
    for url in urls:
        _assert_hidden(_read(client.get(url, follow=True)), f"{url} ({role})")


def test_exports_and_transcripts_hide_every_secret(store_of_secrets):
    client = _client("analyst")
    urls = [
        "/sessions/?flags=all&_export=csv",
        "/sessions/?flags=all&_export=json",
        "/messages/?_export=csv",
        "/messages/?_export=json",
        "/messages/?_export=jsonl",
        "/messages/?_export=csv&_raw=1",
        "/messages/?_export=csv&_preview=1",
        "/insights/?days=30&_export=json",
        "/state/messages.json?_size=max",
        "/state/messages.csv?_size=max",
    ]
    for sid in store_of_secrets:
        urls += [f"/sessions/{sid}/export.md", f"/sessions/{sid}/export.json"]
    for url in urls:
        _assert_hidden(_read(client.get(url, follow=True)), url)


def test_plain_text_of_each_message_hides_every_secret(store_of_secrets):
    client = _client("analyst")
    conn = connections["hermes"]
    with conn.cursor() as cursor:
        cursor.execute("SELECT session_id, id FROM messages ORDER BY id")
        rows = cursor.fetchall()
    for sid, mid in rows:
        _assert_hidden(_read(client.get(f"/sessions/{sid}/messages/{mid}.txt")), f"#{mid}.txt")


def test_console_results_hide_every_secret(store_of_secrets):
    client = _client("staff")
    sql = "SELECT s.title, m.content, m.tool_calls, m.reasoning FROM messages m JOIN sessions s ON s.id = m.session_id"
    page = client.post("/sql/", {"sql": sql})
    _assert_hidden(_read(page), "/sql/ page")
    download = client.post("/sql/", {"sql": sql, "_export": "csv"})
    _assert_hidden(_read(download), "/sql/ CSV")
