"""The session page, its timeline and transcripts, and the message list on a PostgreSQL profile.

Differential: every URL gives on the schema what it gives on the SQLite file the schema was
loaded from (``tests/hermes_pg.py``), on the three nasty layouts and on a demo store, for a
staff reader and for an analyst (who reads redacted content).
"""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3

import psycopg
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_explorer import store, stores
from hermes_explorer.hermes_pg.base import as_in_sqlite
from hermes_fixtures.demo import build_demo_db
from hermes_fixtures.postgres import encode_text
from tests.builders import StateDB, tool_call
from tests.hermes_pg import hermes_pg as hermes_pg_server  # noqa: F401
from tests.roles_helpers import client_for
from tests.test_pg_door import serve  # noqa: F401

pytestmark = pytest.mark.django_db(databases="__all__")
csv.field_size_limit(1 << 30)  # the megabyte tool output


@pytest.fixture
def pg(hermes_pg_server):  # noqa: F811
    return hermes_pg_server


SESSION_URLS = [
    "/sessions/{sid}/",
    "/sessions/{sid}/?show=all",
    "/sessions/{sid}/timeline/",
    "/sessions/{sid}/timeline/?_export=csv",
    "/sessions/{sid}/timeline/?_export=json&show=all",
    "/sessions/{sid}/export.md",
    "/sessions/{sid}/export.json",
    "/sessions/{sid}/export.md?chain=1&show=all",
    "/sessions/{sid}/export.json?chain=1",
]
MESSAGE_URLS = [
    "/messages/",
    "/messages/?role=tool",
    "/messages/?_export=csv",
    "/messages/?_export=json&role=user",
    "/messages/?_export=jsonl&sort=-id",
    "/messages/?_export=json&session_id={sid}",
    "/messages/?_export=json&tool_name=terminal&source=cli&source=telegram&date_from=2025-12-01",
    "/messages/?_export=json&show=compacted&show=hidden&show=rewound&sort=id",
    "/messages/?_export=json&session_model=claude-sonnet-4",
    "/messages/?_export=json&skill={skill}",
    "/messages/?skill={skill}",
    "/messages/?_export=csv&role=assistant&sort=-timestamp",
]


def not_on_both(path: str, url: str, schema: str) -> set[str]:
    """The columns of sessions and messages only one of the file and the schema has (the
    PostgreSQL layout has no uid columns, and has every column an older file lacks)."""
    with sqlite3.connect(path) as db:
        there = {
            r[1] for t in ("sessions", "messages") for r in db.execute(f"PRAGMA table_info({t})")
        }
    with psycopg.connect(url) as db:
        here = {
            r[0]
            for r in db.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = %s"
                " AND table_name IN ('sessions', 'messages')",
                [schema],
            )
        }
    # Also by the ORM's name of ``_compressed_summary``.
    return there ^ here | {c.lstrip("_") for c in there ^ here}


def _without(value, dropped: set[str]):
    """A JSON value without the keys of ``dropped`` columns (and the export's time)."""
    if isinstance(value, dict):
        return {
            k: _without(v, dropped)
            for k, v in value.items()
            if k.removesuffix("_iso") not in dropped
        }
    return [_without(v, dropped) for v in value] if isinstance(value, list) else value


def _same_page(url: str, body: bytes, dropped: set[str]) -> str:
    """A page's text with what names the profile or the request made the same, and without
    the ``dropped`` columns."""
    dropped = dropped | {"exported_at"}
    text = body.decode()
    if "export=jsonl" in url:
        text = "\n".join(
            json.dumps(_without(json.loads(line), dropped)) for line in text.splitlines()
        )
    elif "export=json" in url or ".json" in url:
        text = json.dumps(_without(json.loads(text), dropped), ensure_ascii=False)
    elif "export=csv" in url:
        rows = list(csv.DictReader(io.StringIO(text.lstrip("\ufeff"))))
        text = json.dumps(_without(rows, dropped))
    if "<main" in text:  # the page's own content, not the header naming the store
        text = text[text.index("<main") : text.index("</main>")]
    text = re.sub(r"csrfmiddlewaretoken\" value=\"[^\"]*", "", text)
    text = re.sub(r"[0-9.]+ ?ms\b", "", text)
    named = "|".join(dropped)
    text = re.sub(rf'<tr><th scope="row"><code>({named})</code>.*?</tr>', "", text)
    text = re.sub(r"All recorded fields \(\d+\)|<p class=\"muted not-recorded\">.*?</p>", "", text)
    text = re.sub(r"Exported:\*\* \S+", "", text)
    text = re.sub(r'(Profile:\*\* `|"profile": ")file\b', r"\1team", text)
    return text.replace("/p/file/", "/p/team/").replace(">file<", ">team<")


def differences(client, urls, sids, dropped: set[str], skill: str = "none") -> list:
    """The URLs whose answer on the schema differs from the file's (with both answers)."""
    out = []
    for sid in sids:
        for url in urls:
            url = url.format(sid=sid, skill=skill)
            got = {}
            for name in ("file", "team"):
                page = client.get(f"/p/{name}{url}")
                assert page.status_code in (200, 302), (name, url, page.status_code)
                body = b"".join(page.streaming_content) if page.streaming else page.content
                body = page["Location"].encode() if page.status_code == 302 else body
                got[name] = _same_page(url, body, dropped)
            if got["file"] != got["team"]:
                out.append((url, got["file"], got["team"]))
    return out


def first_difference(found: list) -> str:
    url, a, b = found[0]
    at = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    return f"{len(found)} URLs differ; first {url}: file {a[at - 80 : at + 80]!r} team {b[at - 80 : at + 80]!r}"


def test_every_session_page_reads_a_schema_as_its_file(pg, serve, client, staff_user):
    facts = pg.stores["current"]
    serve(file=facts.path, team=f"{pg.reader_url}?schema=hermes_current")
    client.force_login(staff_user)
    dropped = not_on_both(facts.path, pg.url, "hermes_current")
    found = differences(client, SESSION_URLS, facts.session_ids, dropped)
    found += differences(client, MESSAGE_URLS, facts.session_ids[:2], dropped, facts.skill_name)
    assert not found, first_difference(found)
    one = [
        f"/sessions/{facts.multimodal_session_id}/messages/{facts.multimodal_message_id}{end}"
        for end in ("/", ".txt")
    ] + [f"/sessions/{facts.megabyte_session_id}/messages/{facts.megabyte_message_id}.txt"]
    found = differences(client, one, [None], dropped)
    assert not found, first_difference(found)
    skill = client.get(f"/p/team/messages/?_export=json&skill={facts.skill_name}")
    assert json.loads(b"".join(skill.streaming_content))  # the skill filter keeps its calls


@pytest.mark.parametrize("shape", ["legacy", "doc"])
def test_an_older_layouts_transcripts_and_messages_read_as_its_file(
    pg,
    serve,
    client,
    staff_user,
    shape,
):
    """PostgreSQL's layout has every column an older file lacks (NULL there), so the pages
    that offer what those columns allow (history toggles, call pairing) offer it; the
    transcripts and the message rows are the file's."""
    facts = pg.stores[shape]
    serve(file=facts.path, team=f"{pg.reader_url}?schema=hermes_{shape}")
    client.force_login(staff_user)
    dropped = not_on_both(facts.path, pg.url, f"hermes_{shape}")
    urls = [u for u in SESSION_URLS if "export." in u]
    found = differences(client, urls, facts.session_ids, dropped)
    urls = [u for u in MESSAGE_URLS if "_export" in u]
    found += differences(client, urls, facts.session_ids[:2], dropped)
    assert not found, first_difference(found)


DEMO_NOW = 1_760_000_000.0
OPENAI = "sk-proj-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe" * 2
MIXED = "20260101_090000_mm0001"


@pytest.fixture
def mixed(pg, tmp_path):
    """A store whose content PostgreSQL must mark: a photo with a caption, tool output with a
    NUL, a text that starts like a marker, and a secret in a tool call's arguments."""
    path = tmp_path / "mixed.db"
    parts = [{"type": "text", "text": "caption of the photo"}, {"type": "image_url"}]
    with StateDB.create(path, "current") as db:
        db.session(MIXED, title="mixed content")
        db.message(MIXED, "user", "\x00json:" + json.dumps(parts))
        db.message(
            MIXED,
            "assistant",
            "calling",
            tool_calls=json.dumps([tool_call("deploy", {"token": OPENAI}, "call_1")]),
        )
        db.message(MIXED, "tool", "line one\x00line two", tool_call_id="call_1")
        db.message(MIXED, "assistant", "\x01json:not a marker of ours")
        db.refresh_counters()
    pg.load(path, "hermes_mixed")
    return str(path)


@pytest.mark.parametrize("role", ["staff", "analyst"])
def test_marked_content_reads_as_on_the_file(pg, serve, mixed, role):
    """Multimodal parts, a NUL in a tool output and a text starting with a marker show the
    same on the schema as on the file, in the page, the transcripts and the message rows."""
    serve(file=mixed, team=f"{pg.reader_url}?schema=hermes_mixed")
    client = client_for(role)
    urls = [u for u in SESSION_URLS if "timeline" not in u] + MESSAGE_URLS
    dropped = not_on_both(mixed, pg.url, "hermes_mixed")
    found = differences(client, urls, [MIXED], dropped)
    assert not found, first_difference(found)
    page = client.get(f"/p/team/sessions/{MIXED}/").content.decode()
    assert "caption of the photo\n[image]" in page and "json:" not in page.replace(
        "\x01json:not", ""
    )


def test_a_secret_in_tool_call_arguments_stays_redacted_on_a_schema(pg, serve, mixed):
    """For a reader who cannot reveal, a key in a call's arguments is redacted on the page,
    in the transcript and in the message export of a schema, as on the file."""
    serve(file=mixed, team=f"{pg.reader_url}?schema=hermes_mixed")
    client = client_for("analyst")
    for url in (f"/sessions/{MIXED}/", f"/sessions/{MIXED}/export.md", "/messages/?_export=csv"):
        got = {name: client.get(f"/p/{name}{url}") for name in ("file", "team")}
        bodies = {
            name: b"".join(r.streaming_content) if r.streaming else r.content
            for name, r in got.items()
        }
        assert got["team"].status_code == 200, url
        assert OPENAI.encode() not in bodies["team"], url
        assert OPENAI[:20].encode() not in bodies["team"], url
        assert b"deploy" in bodies["team"] and b"[redacted: " in bodies["team"], url


def test_a_demo_store_reads_the_same_from_a_schema(pg, serve, tmp_path):
    """A demo store (families, compactions, reasoning, multimodal parts, tool calls) loaded
    both ways: the sessions with a family, and the longest, read the same for staff, for an
    analyst (redacted) and for a viewer (metadata only)."""
    path = tmp_path / "demo.db"
    build_demo_db(path, sessions=40, messages=1500, seed=7, now=DEMO_NOW)
    pg.load(path, "hermes_demo")
    serve(file=str(path), team=f"{pg.reader_url}?schema=hermes_demo")
    with sqlite3.connect(path) as db:
        family = [
            r[0]
            for r in db.execute(
                "SELECT id FROM sessions WHERE parent_session_id IS NOT NULL OR id IN"
                " (SELECT parent_session_id FROM sessions) ORDER BY id LIMIT 6"
            )
        ]
        longest = [
            r[0]
            for r in db.execute(
                "SELECT session_id FROM messages GROUP BY session_id ORDER BY count(*) DESC LIMIT 4"
            )
        ]
    assert family and longest
    dropped = not_on_both(str(path), pg.url, "hermes_demo")
    for role in ("staff", "analyst"):
        client = client_for(role)
        found = differences(client, SESSION_URLS, family + longest, dropped)
        found += differences(client, MESSAGE_URLS, longest[:1], dropped)
        assert not found, (role, first_difference(found))
    viewer = client_for("viewer")  # metadata only
    found = differences(viewer, ["/sessions/{sid}/", "/sessions/{sid}/timeline/"], family, dropped)
    assert not found, ("viewer", first_difference(found))


MIXED_VALUES = [
    "plain text",
    None,
    "a \x01 inside plain text stays as it is",
    "\x00json:" + json.dumps([{"type": "text", "text": "caption"}]),
    b"\x00\x01raw bytes",
    "\x01json:a plain text starting with a marker",
    "a NUL\x00 inside",
    "",
]


def test_every_fetch_reads_marked_text_as_sqlite_holds_it(pg, serve):
    """Through each way a statement's rows are read (all, by chunks, one by one, iterated),
    a marked value among plain ones, in any column, reads back as SQLite holds it, and the
    others are untouched."""
    stored = [encode_text(v) if v is not None else None for v in MIXED_VALUES]
    with psycopg.connect(pg.url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS marks CASCADE")
        conn.execute("CREATE SCHEMA marks")
        conn.execute("CREATE TABLE marks.probe (id int, a text, b text, n int)")
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO marks.probe VALUES (%s, %s, %s, %s)",
                [(i, v, stored[-1 - i], i) for i, v in enumerate(stored)],
            )
        conn.execute("GRANT USAGE ON SCHEMA marks TO hermes_reader")
        conn.execute("GRANT SELECT ON marks.probe TO hermes_reader")
    (team,) = serve(team=f"{pg.reader_url}?schema=marks").values()
    expected = [(i, v, MIXED_VALUES[-1 - i], i) for i, v in enumerate(MIXED_VALUES)]
    sql = "SELECT id, a, b, n FROM probe ORDER BY id"
    with stores.using(team), store.cursor(budget=5) as cur:
        cur.execute(sql)
        assert cur.fetchall() == expected
        cur.execute(sql)
        assert cur.fetchmany(3) + cur.fetchmany(100) == expected
        cur.execute(sql)
        assert [cur.fetchone() for _ in expected] == expected and cur.fetchone() is None
        cur.execute(sql)
        assert list(cur) == expected


@given(st.one_of(st.text(), st.binary(), st.text().map(lambda t: "\x00json:" + t)))
def test_marked_text_reads_back_as_the_value_sqlite_holds(value):
    """Whatever Hermes marks on its way into PostgreSQL reads back as the SQLite value, and a
    marked value cut short (a preview) reads without failing."""
    stored = encode_text(value)
    marked = isinstance(stored, str) and stored.startswith(("\x01json:", "\x01bytes:"))
    assert (as_in_sqlite(stored) if marked else stored) == value
    for cut in range(0, len(stored), max(1, len(stored) // 7)) if marked else ():
        as_in_sqlite(stored[:cut])


def test_staff_reveal_a_message_of_a_schema_as_of_its_file(pg, serve, mixed):
    """Staff may reveal: the key in the call's arguments, and the tool output with its NUL,
    shown whole, as from the file."""
    serve(file=mixed, team=f"{pg.reader_url}?schema=hermes_mixed")
    client = client_for("staff")
    shown = {}
    for name in ("file", "team"):
        for message_id in (2, 3):
            page = client.post(f"/p/{name}/sessions/{MIXED}/messages/{message_id}/reveal")
            assert page.status_code == 200, (name, message_id)
            shown[name, message_id] = _same_page("", page.content, set())
    assert OPENAI in shown["team", 2] and "line one" in shown["team", 3]
    assert [shown["team", i] for i in (2, 3)] == [shown["file", i] for i in (2, 3)]


def test_each_page_of_a_long_sessions_calls_is_paired_as_the_files_sql_pairs_it(
    pg, serve, tmp_path
):
    """On a schema, a page of results is paired with callers read only as far back as it needs
    (``CALLERS_AT_A_TIME`` assistant rows at a time): every page gives the calls the file's SQL
    definition gives for the same results, and all pages together the whole session's."""
    from hermes_explorer import stores
    from sessions_app import toolcalls

    path = tmp_path / "long.db"
    db = StateDB.create(path, "current")
    db.session("long")
    db.message("long", "user", "go")
    callers = 2 * toolcalls.CALLERS_AT_A_TIME + 150
    # Callers first, their results afterwards in reverse: the last results' callers are three
    # batches back.  "twice" is called twice (the nearer caller names it), "gone" never.
    for n in range(callers):
        db.message("long", "assistant", None, tool_calls=[tool_call(f"t{n % 7}", {}, f"c{n}")])
    db.message("long", "assistant", None, tool_calls=[tool_call("first", {}, "twice")])
    db.message("long", "assistant", None, tool_calls=[tool_call("second", {}, "twice")])
    for n in reversed(range(callers)):
        db.message("long", "tool", "ok", tool_call_id=f"c{n}", tool_name=None if n % 3 else "x")
    db.message("long", "tool", "?", tool_call_id="twice")
    db.message("long", "tool", "?", tool_call_id="gone", tool_name="orphan")
    for n in range(40):  # ordinary turns: a call and its result
        db.message("long", "assistant", None, tool_calls=[tool_call("read", {}, f"r{n}")])
        db.message("long", "tool", "text", tool_call_id=f"r{n}")
    db.commit()
    db.close()
    pg.load(path, "hermes_long")
    served = serve(file=str(path), team=f"{pg.reader_url}?schema=hermes_long")
    with stores.using(served["file"]):
        expected = toolcalls.session_calls("long")
    with sqlite3.connect(path) as file:
        results = [r[0] for r in file.execute("SELECT id FROM messages WHERE role = 'tool'")]
    assert len(expected) == callers + 1 + 40  # every result but the orphan
    with stores.using(served["team"]):
        assert toolcalls.session_calls("long") == expected
        paged = []
        for start in range(0, len(results), 97):
            page = results[start : start + 97]
            got = toolcalls.session_calls("long", page)
            assert got == [row for row in expected if row[0] in set(page)]
            paged += got
    assert paged == expected
