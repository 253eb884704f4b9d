"""Exports: CSV, JSON and JSONL of table views, streamed; transcripts as Markdown/JSON.

Every export is checked against a direct ``sqlite3`` query of the fixture file, on the three
shapes, with content built to break naive writers: NUL, CR/LF, quotes, commas, HTML, code
fences, formulas, a megabyte row, multimodal parts and an orphan message.
"""

from __future__ import annotations

import ast
import csv
import datetime as dt
import io
import json
import random
import sqlite3
import tracemalloc
import zoneinfo
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.db import connections
from django.test import RequestFactory
from django.urls import resolve, reverse
from django.utils import timezone

from hermes_fixtures.ddl import SHAPES
from sessions_app import exports, timefmt, transcripts
from sessions_app.exports import csv_fast, isotime
from sessions_app.models import Message, Session
from sessions_app.pagination import Keyset
from sessions_app.querysets import PREVIEW_CHARS
from sessions_app.selectors import SESSION_SORTS
from tests.builders import DAY, HOUR, NASTY_NOW, StateDB, tool_call
from tests.conftest import use_store

pytestmark = pytest.mark.django_db(databases=["default", "hermes"])

BY_ID = Keyset((("id", False),), name="id")
TODAY = None  # filled per test: filenames carry the local date

FORMULA_TITLES = ('=HYPERLINK("http://evil.example/","x")', "+1 555 0100", "-2+3", "@SUM(A1:A9)")
NASTY_TITLES = (
    'comma, "quote" and\nnewline',
    "<script>alert('t')</script> & <b>b</b>",
    "\ttab first",
    "東京 🚀 مرحبا",
    "cr\ronly",
)
FENCE_TEXT = (
    "Here is code:\n```python\nprint('hi')\n```\nand a longer one\n````\nraw ``` inside\n````\n"
)
NASTY_CONTENTS = (
    "nul \x00 inside",
    "crlf\r\nline two\r\n",
    'quotes " and "" and, commas,,',
    "<img src=x onerror=alert(1)> <script>alert(2)</script>",
    FENCE_TEXT,
    "=cmd|' /C calc'!A0",
    "-1",
    "",
)
SECRET = "sk-proj-Abcdefghijklmnopqrstuvwxyz0123456789"
MEGABYTE = ("0123456789abcdef" * 64 + "\n") * 1100  # ~1.1 MB


def sql(path, query, params=()):
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return conn.execute(query, params).fetchall()


def cell(value) -> str:
    """How the default CSV writes a value: as Python's csv module does, with a text cell
    that a spreadsheet would run as a formula defused by a leading apostrophe."""
    if isinstance(value, str) and value.startswith(csv_fast.FORMULA_STARTS):
        return "'" + value
    return "" if value is None else str(value)


def body(response) -> bytes:
    assert response.streaming, "exports must stream"
    return b"".join(response.streaming_content)


def parse_csv(data: bytes) -> list[dict]:
    # Full content exports hold megabyte cells: lift the csv module's 128 KiB field limit.
    csv.field_size_limit(2**31 - 1)
    text = data.decode("utf-8")
    return list(csv.DictReader(io.StringIO(text, newline="")))


def build_export_db(path, shape: str) -> dict:
    """A small store with hostile values in every text column the exports write."""
    db = StateDB.create(path, shape)
    facts: dict = {"path": str(path), "shape": shape}
    sources = ("telegram", "cli", "discord")
    ids = []
    titles = (*FORMULA_TITLES, *NASTY_TITLES, None)
    for i in range(23):
        sid = f"2025120{i % 9 + 1}_1000{i:02d}_ab{i:04x}"
        # Every third pair shares started_at: ties must be broken by id, as the page does.
        started = NASTY_NOW - DAY * (i // 2) - HOUR
        db.session(
            sid,
            source=sources[i % 3],
            title=titles[i] if i < len(titles) else f"Plain plan {i}",
            started_at=started,
            ended_at=started + (600 if i % 5 else -30),
            user_id=None if i % 4 == 0 else f"user,{i}",
            model="vendor/model-a" if i % 2 else "model-b",
            estimated_cost_usd=None if i % 3 == 0 else i * 0.0125,
            cost_status="estimated" if i % 3 else None,
            last_activity_at=started + (5000 if i % 2 else 0),
            end_reason="idle",
        )
        ids.append(sid)
    facts["session_ids"] = ids

    nasty = db.session(
        "nasty-session",
        source="telegram",
        title='Nasty, "content"',
        started_at=NASTY_NOW - 10 * DAY,
        reasoning_tokens=0,
    )
    message_ids = []
    for text in NASTY_CONTENTS:
        message_ids.append(db.message(nasty, "user", text))
    message_ids.append(
        db.message(
            nasty,
            "assistant",
            None,
            tool_calls=[tool_call("terminal", {"command": "echo ```; rm -rf /"}, "call_a")],
            reasoning='think, "carefully"\n```\nnot a fence end',
            finish_reason="tool_calls",
        )
    )
    message_ids.append(db.message(nasty, "tool", MEGABYTE, tool_call_id="call_a", tool_name=None))
    parts = [{"type": "text", "text": "look ```"}, {"type": "image_url", "image_url": {"url": "x"}}]
    message_ids.append(db.message(nasty, "user", "\x00json:" + json.dumps(parts)))
    message_ids.append(db.message(nasty, "assistant", None, tool_calls="{not json"))
    message_ids.append(db.message(nasty, "assistant", "=1+1 the end"))
    facts["nasty_session_id"] = nasty
    facts["nasty_message_ids"] = message_ids

    # A message whose session row is gone (pruned): it still exports.
    facts["orphan_message_id"] = db.message("pruned-session", "user", "orphan, still here")

    # A compression chain root -> middle -> tip, with a subagent and a branch off the root
    # that are not part of it.
    chain = []
    for i, sid in enumerate(("chain-root", "chain-middle", "chain-tip")):
        start = NASTY_NOW - 30 * DAY + i * HOUR
        db.session(
            sid,
            source="cli",
            title=f"Chain part {i + 1}",
            started_at=start,
            ended_at=start + HOUR - 60,
            end_reason="compression" if i < 2 else "cli_close",
            parent_session_id=chain[-1] if chain else None,
        )
        if chain:
            db.message(sid, "user", f"[CONTEXT SUMMARY] after {chain[-1]}", _compressed_summary=1)
        db.message(sid, "user", f"step {i + 1} ```please```", timestamp=start + 10)
        db.message(sid, "assistant", f"done {i + 1}", timestamp=start + 20)
        chain.append(sid)
    db.session(
        "chain-subagent",
        source="subagent",
        started_at=NASTY_NOW - 30 * DAY + 10,
        parent_session_id="chain-root",
        model_config={"_delegate_from": "chain-root"},
    )
    db.message("chain-subagent", "user", "subagent work")
    db.session(
        "chain-branch",
        source="cli",
        started_at=NASTY_NOW - 30 * DAY + 20,
        parent_session_id="chain-root",
        model_config={"_branched_from": "chain-root"},
    )
    db.message("chain-branch", "user", "branch work")
    facts["chain_ids"] = tuple(chain)

    secret = db.session("secret-session", source="cli", title="Secrets", started_at=NASTY_NOW - DAY)
    facts["secret_session_id"] = secret
    facts["secret_message_id"] = db.message(secret, "tool", f"env:\nOPENAI_API_KEY={SECRET}\n")
    db.message(
        secret,
        "assistant",
        None,
        tool_calls=[
            tool_call("terminal", {"command": f"curl -H 'Authorization: Bearer {SECRET}'"})
        ],
    )

    history = db.session("history", source="cli", title="History", started_at=NASTY_NOW - DAY)
    facts["history_id"] = history
    db.message(history, "user", "archived", active=0, compacted=1)
    db.message(history, "user", "rewound", active=0, compacted=0)
    db.message(history, "user", "hidden", display_kind="hidden")
    db.message(history, "user", "live")
    db.refresh_counters()
    db.close()
    return facts


@pytest.fixture(scope="session")
def export_dbs(tmp_path_factory):
    base = tmp_path_factory.mktemp("export-stores")
    return {shape: build_export_db(base / f"{shape}.db", shape) for shape in SHAPES}


@pytest.fixture(params=SHAPES)
def export_store(request, export_dbs):
    facts = export_dbs[request.param]
    use_store(facts["path"])
    yield facts
    connections["hermes"].close()


@pytest.fixture
def small_chunks(monkeypatch):
    """Cross many chunk boundaries on small fixtures."""
    monkeypatch.setattr(exports.chunks, "EXPORT_CHUNK_ROWS", 4)
    monkeypatch.setattr(transcripts, "TRANSCRIPT_CHUNK_ROWS", 3)


def today() -> str:
    return timezone.localdate().isoformat()


# Sessions: the rows of the page's filters and sort, all pages -------------------------------
SESSION_CASES = [
    ({}, "1=1", "started_at DESC, id DESC"),
    ({"source": "telegram", "sort": "started_at"}, "source = 'telegram'", "started_at, id"),
    ({"sort": "source"}, "1=1", "source, id"),
    ({"sort": "-source", "title": "plan"}, "title LIKE '%plan%'", "source DESC, id DESC"),
    ({"source": ["cli", "discord"]}, "source IN ('cli', 'discord')", "started_at DESC, id DESC"),
    # A cursor of the page must not restrict the export: all pages.
    ({"cursor": "garbage"}, "1=1", "started_at DESC, id DESC"),
]
SESSION_CHECKED = ("id", "title", "source", "user_id", "model", "message_count")


@pytest.mark.parametrize(("params", "where", "order"), SESSION_CASES)
def test_session_csv_is_exactly_the_rows_of_the_filtered_sorted_view(
    staff_client, export_store, small_chunks, params, where, order
):
    query = urlencode({**params, "_export": "csv"}, doseq=True)
    response = staff_client.get(f"{reverse('sessions:list')}?{query}")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    rows = parse_csv(body(response))
    expected = sql(
        export_store["path"],
        f"SELECT {', '.join(SESSION_CHECKED)}, started_at, ended_at, estimated_cost_usd "
        f"FROM sessions WHERE {where} ORDER BY {order}",
    )
    assert len(rows) == len(expected) > 0
    for row, want in zip(rows, expected, strict=True):
        got = [row[c] for c in SESSION_CHECKED]
        assert got == [cell(v) for v in want[: len(SESSION_CHECKED)]]
        started, ended, cost = want[len(SESSION_CHECKED) :]
        assert float(row["started_at_epoch"]) == started
        assert row["ended_at_epoch"] == cell(ended)
        assert row["estimated_cost_usd"] == cell(cost)
        assert row["started_at"] == timezone.localtime(
            dt.datetime.fromtimestamp(started, tz=dt.UTC)
        ).isoformat(timespec="seconds")


def test_session_export_follows_the_last_active_sort_on_current_files(
    staff_client, export_dbs, small_chunks
):
    facts = export_dbs["current"]
    use_store(facts["path"])
    for sort, order in (("-last_active", "DESC"), ("last_active", "ASC")):
        response = staff_client.get(f"/sessions/?sort={sort}&_export=jsonl")
        ids = [json.loads(line)["id"] for line in body(response).decode().splitlines()]
        expected = sql(
            facts["path"],
            f"SELECT id FROM sessions ORDER BY COALESCE(last_activity_at, started_at) {order}, "
            f"id {order}",
        )
        assert ids == [r[0] for r in expected]


def test_session_columns_are_those_of_the_shape(staff_client, export_store):
    response = staff_client.get("/sessions/?_export=csv")
    header = next(csv.reader(io.StringIO(body(response).decode())))
    assert header[:7] == [
        "id",
        "title",
        "source",
        "user_id",
        "model",
        "started_at",
        "started_at_epoch",
    ]
    assert "ended_at_epoch" in header and "estimated_cost_usd" in header
    file_columns = {r[1] for r in sql(export_store["path"], "PRAGMA table_info(sessions)")}
    # The team's annotations (the app's own database) come after the file's columns.
    assert header[-4:] == ["tags", "starred", "notes_count", "scores"]
    for column in header[:-4]:
        assert column.removesuffix("_epoch") in file_columns
    assert ("cost_status" in header) == ("cost_status" in file_columns)
    assert ("last_activity_at" in header) == (export_store["shape"] == "current")
    assert "system_prompt" not in header


def test_times_are_iso_8601_in_the_configured_zone_next_to_the_raw_epoch(
    staff_client, export_store, settings
):
    settings.TIME_ZONE = "Asia/Tokyo"
    rows = parse_csv(body(staff_client.get("/sessions/?_export=csv&sort=started_at")))
    first = rows[0]
    epoch = float(first["started_at_epoch"])
    expected = dt.datetime.fromtimestamp(epoch, tz=dt.timezone(dt.timedelta(hours=9)))
    assert first["started_at"] == expected.isoformat(timespec="seconds")
    assert first["started_at"].endswith("+09:00")


def test_json_and_jsonl_hold_the_same_rows_as_csv(staff_client, export_store, small_chunks):
    base = "/sessions/?source=telegram&sort=source"
    # JSON is raw, as the raw CSV is.
    csv_rows = parse_csv(body(staff_client.get(base + "&_export=csv&_raw=1")))
    as_json = json.loads(body(staff_client.get(base + "&_export=json")))
    lines = body(staff_client.get(base + "&_export=jsonl")).decode().splitlines()
    as_jsonl = [json.loads(line) for line in lines]
    assert isinstance(as_json, list)
    assert as_json == as_jsonl
    assert [r["id"] for r in as_json] == [r["id"] for r in csv_rows]
    assert [r["title"] for r in as_json] == [r["title"] or None for r in csv_rows]
    first = as_json[0]
    assert isinstance(first["started_at_epoch"], float)
    assert isinstance(first["message_count"], int)


@pytest.mark.parametrize(("fmt", "expected"), [("csv", None), ("json", b"[]\n"), ("jsonl", b"")])
def test_empty_result_is_header_only_csv_or_empty_array(staff_client, export_store, fmt, expected):
    response = staff_client.get(f"/sessions/?source=no-such-source&_export={fmt}")
    assert response.status_code == 200
    data = body(response)
    if fmt == "csv":
        lines = data.decode().splitlines()
        assert len(lines) == 1 and lines[0].startswith("id,title,source,")
    else:
        assert data == expected
    if fmt == "json":
        assert json.loads(data) == []


def test_invalid_filters_give_a_400_that_names_them(staff_client, export_store):
    response = staff_client.get("/sessions/?min_cost=lots&_export=csv")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/plain")
    assert "min_cost" in response.content.decode()


def test_unknown_format_shows_the_page_with_a_note(staff_client, export_store):
    response = staff_client.get("/sessions/?_export=xlsx")
    assert response.status_code == 200
    assert "Content-Disposition" not in response
    assert "Unknown export format" in response.content.decode()


def test_formulas_are_neutralised_in_every_csv_unless_raw_is_asked(staff_client, export_store):
    plain = body(staff_client.get("/sessions/?_export=csv&sort=source"))
    raw = body(staff_client.get("/sessions/?_export=csv&sort=source&_raw=1"))
    sheet = body(staff_client.get("/sessions/?_export=csv&sort=source&_bom=1"))
    assert not plain.startswith(b"\xef\xbb\xbf") and not raw.startswith(b"\xef\xbb\xbf")
    assert sheet.startswith(b"\xef\xbb\xbf")
    raw_titles = {r["title"] for r in parse_csv(raw)}
    plain_titles = {r["title"] for r in parse_csv(plain)}
    sheet_rows = parse_csv(sheet[3:])
    sheet_titles = {r["title"] for r in sheet_rows}
    for title in FORMULA_TITLES:
        assert title in raw_titles
        assert "'" + title in plain_titles
        assert "'" + title in sheet_titles
    assert "'\ttab first" in sheet_titles and "\ttab first" in raw_titles
    # Numbers stay numbers; only text cells are touched.
    assert all(not r["message_count"].startswith("'") for r in sheet_rows)
    assert [r["id"] for r in sheet_rows] == [r["id"] for r in parse_csv(plain)]


def test_filenames_say_what_they_hold(staff_client, export_store):
    response = staff_client.get("/sessions/?source=telegram&_export=csv")
    assert response["Content-Disposition"] == (
        f'attachment; filename="sessions-telegram-{today()}.csv"'
    )
    response = staff_client.get("/sessions/?_export=json")
    assert response["Content-Disposition"] == f'attachment; filename="sessions-{today()}.json"'
    assert exports.export_filename("messages", ["20251231_080000_8c9d0e"], "jsonl") == (
        f"messages-20251231_080000_8c9d0e-{today()}.jsonl"
    )
    nasty = exports.export_filename("sessions", ['../"evil"\r\nname;.csv', "", None], "csv")
    assert nasty == f"sessions-evil_name_.csv-{today()}.csv"
    assert set(nasty) <= set("abcdefghijklmnopqrstuvwxyz0123456789._-")


# Messages -------------------------------------------------------------------------------------
MESSAGE_SQL = """
    SELECT m.id, m.session_id, s.title, s.source, m.role, m.tool_name, m.content,
           m.tool_calls, m.timestamp, m.token_count
    FROM messages m LEFT JOIN sessions s ON s.id = m.session_id
    WHERE {where} ORDER BY m.id
"""
MESSAGE_CHECKED = (
    "id",
    "session_id",
    "session_title",
    "source",
    "role",
    "tool_name",
    "content",
    "tool_calls",
    "timestamp_epoch",
    "token_count",
)


def export_request(**params):
    return RequestFactory().get("/messages/", params)


def message_export(fmt="csv", **extra):
    facts_ids = extra.pop("ids")
    request = export_request(_export=fmt, **extra)
    queryset = Message.objects.filter(id__in=facts_ids)
    return exports.export_messages(request, queryset, BY_ID, filename_bits=["nasty-session"])


def test_message_csv_holds_full_nasty_content_exactly_as_stored(export_store, small_chunks):
    ids = [*export_store["nasty_message_ids"], export_store["orphan_message_id"]]
    response = message_export(ids=ids)
    rows = parse_csv(body(response))
    placeholders = ", ".join("?" * len(ids))
    expected = sql(export_store["path"], MESSAGE_SQL.format(where=f"m.id IN ({placeholders})"), ids)
    assert [r["id"] for r in rows] == [str(e[0]) for e in expected]
    for row, want in zip(rows, expected, strict=True):
        assert [row[c] for c in MESSAGE_CHECKED] == [cell(v) for v in want]
    by_id = {int(r["id"]): r for r in rows}
    assert by_id[export_store["orphan_message_id"]]["session_title"] == ""
    assert MEGABYTE in {r["content"] for r in rows}
    assert response["Content-Disposition"] == (
        f'attachment; filename="messages-nasty-session-{today()}.csv"'
    )


def test_message_columns_follow_the_shape(export_store):
    response = message_export(ids=export_store["nasty_message_ids"][:1])
    header = next(csv.reader(io.StringIO(body(response).decode())))
    assert header[:4] == ["id", "session_id", "session_title", "source"]
    assert "timestamp" in header and "timestamp_epoch" in header and "content" in header
    current = export_store["shape"] == "current"
    assert ("active" in header) == current and ("display_kind" in header) == current
    assert ("tool_call_id" in header) == (export_store["shape"] != "doc")


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_message_json_and_jsonl_parse_with_the_same_content(export_store, small_chunks, fmt):
    ids = export_store["nasty_message_ids"]
    data = body(message_export(fmt, ids=ids)).decode("utf-8")
    rows = json.loads(data) if fmt == "json" else [json.loads(x) for x in data.splitlines()]
    expected = sql(
        export_store["path"],
        f"SELECT id, content FROM messages WHERE id IN ({', '.join(map(str, ids))}) ORDER BY id",
    )
    assert [(r["id"], r["content"]) for r in rows] == expected
    assert all(r["source"] == "telegram" and r["session_title"] == 'Nasty, "content"' for r in rows)


def test_preview_export_cuts_text_in_sql(export_store):
    ids = export_store["nasty_message_ids"]
    response = message_export(ids=ids, _preview="1")
    assert "-preview-" in response["Content-Disposition"]
    rows = parse_csv(body(response))
    expected = sql(
        export_store["path"],
        f"SELECT content FROM messages WHERE id IN ({', '.join(map(str, ids))}) ORDER BY id",
    )
    # The first PREVIEW_CHARS characters of each, multimodal "\x00json:" rows included
    # (SQLite's own substr() would give '' for those: it stops at the NUL).
    assert [r["content"] for r in rows] == [cell(e[0])[:PREVIEW_CHARS] for e in expected]
    assert max(len(r["content"]) for r in rows) == PREVIEW_CHARS


def test_message_export_takes_session_title_from_the_same_query(
    export_store, django_assert_num_queries
):
    use_store(export_store["path"])
    connections["hermes"].hermes_shape_now()  # connect first: shape detection is not a chunk
    ids = export_store["nasty_message_ids"][:10]
    queryset = Message.objects.filter(id__in=ids)
    plan = exports.message_rows(queryset, BY_ID, preview=False)
    with django_assert_num_queries(4, connection=connections["hermes"]):
        chunks = list(plan.chunks(chunk_size=3))
    assert [len(c) for c in chunks] == [3, 3, 3, 1]
    title = plan.columns.index("session_title")
    assert all(r[title] for c in chunks for r in c)


# The streaming machinery ------------------------------------------------------------------------
def test_keyset_chunks_run_one_bounded_query_per_chunk(export_store, django_assert_num_queries):
    connections["hermes"].hermes_shape_now()
    queryset = Session.objects.filter(source__in=["telegram", "cli", "discord"]).values(
        "id", "started_at"
    )
    ten = list(queryset.order_by("-started_at", "-id").values_list("id", flat=True)[:10])
    keyset = SESSION_SORTS["-started_at"]
    subset = queryset.filter(id__in=ten)
    with django_assert_num_queries(6, connection=connections["hermes"]):
        chunks = list(exports.keyset_chunks(subset, keyset, to_row=dict, chunk_size=2))
    assert [len(c) for c in chunks] == [2, 2, 2, 2, 2]
    assert [r["id"] for c in chunks for r in c] == ten


def test_exports_use_only_the_public_queryset_api():
    """No compiler, alias map or ``QuerySet.query`` internals: a Django upgrade may change them."""
    private_names = {"query", "get_compiler", "alias_map", "promote", "setup_query"}
    found = []
    for path in sorted(Path(exports.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Attribute) and node.attr in private_names:
                found.append(f"{path.name}:{node.lineno} .{node.attr}")
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "django.db.models.sql"
            ):
                found.append(f"{path.name}:{node.lineno} {node.module}")
    assert found == []


def test_session_export_over_http_costs_queries_per_chunk_not_per_row(
    staff_client, export_store, monkeypatch, django_assert_max_num_queries
):
    monkeypatch.setattr(exports.chunks, "EXPORT_CHUNK_ROWS", 5)
    total = sql(export_store["path"], "SELECT count(*) FROM sessions")[0][0]
    chunks = total // 5 + 1
    # Fixed costs: connection shape detection and the filter form's choices.
    with django_assert_max_num_queries(chunks + 6, connection=connections["hermes"]):
        rows = parse_csv(body(staff_client.get("/sessions/?_export=csv")))
    assert len(rows) == total > 25


def test_big_rows_shrink_the_next_chunk_without_losing_order(export_store):
    ids = export_store["nasty_message_ids"]
    queryset = Message.objects.filter(id__in=ids).values("id", "content")
    chunks = list(
        exports.keyset_chunks(queryset, BY_ID, to_row=dict, chunk_size=4, max_chunk_bytes=10_000)
    )
    assert [r["id"] for c in chunks for r in c] == sorted(ids)
    big_chunk = next(i for i, c in enumerate(chunks) if any(r["content"] == MEGABYTE for r in c))
    assert len(chunks[big_chunk + 1]) == 1  # shrank after a megabyte
    assert max(len(c) for c in chunks[big_chunk + 1 :]) <= 4


def test_big_message_text_shrinks_the_next_chunk_of_an_export(export_store, monkeypatch):
    """The same byte bound on the export path, measured on content, tool calls and reasoning."""
    monkeypatch.setattr(exports.chunks, "EXPORT_CHUNK_BYTES", 10_000)
    ids = export_store["nasty_message_ids"]
    plan = exports.message_rows(Message.objects.filter(id__in=ids), BY_ID, preview=False)
    chunks = list(plan.chunks(chunk_size=4))
    content = plan.columns.index("content")
    assert [r[0] for c in chunks for r in c] == sorted(ids)
    big = next(i for i, c in enumerate(chunks) if any(r[content] == MEGABYTE for r in c))
    assert len(chunks[big + 1]) == 1  # shrank after a megabyte
    assert max(len(c) for c in chunks[big + 1 :]) <= 4


def test_no_read_transaction_stays_open_between_chunks(tmp_path):
    """A writer can checkpoint (and truncate) the WAL while an export waits between chunks:
    the export holds no snapshot. The same writer cannot while a plain reader is mid-read."""
    path = tmp_path / "wal.db"
    db = StateDB.create(path, "current")
    for i in range(10):
        db.session(f"s{i:02d}", started_at=NASTY_NOW - i)
    db.close()
    writer = sqlite3.connect(path, timeout=0)
    writer.execute("PRAGMA journal_mode=WAL")
    use_store(path)
    try:
        queryset = Session.objects.values("id", "started_at")
        chunks = exports.keyset_chunks(
            queryset, SESSION_SORTS["-started_at"], to_row=dict, chunk_size=3
        )
        first = next(chunks)
        writer.execute("INSERT INTO sessions (id, source, started_at) VALUES ('new', 'cli', 0)")
        writer.commit()
        busy, _log, _done = writer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        assert busy == 0, "the export kept a read transaction open between chunks"
        rest = [r for c in chunks for r in c]
        assert [r["id"] for r in first + rest] == [f"s{i:02d}" for i in range(10)] + ["new"]

        # The control: a statement left mid-read does pin the WAL.
        reader = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        cursor = reader.execute("SELECT id FROM sessions")
        cursor.fetchone()
        writer.execute("INSERT INTO sessions (id, source, started_at) VALUES ('new2', 'cli', 0)")
        writer.commit()
        busy, _log, _done = writer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        assert busy == 1
        reader.close()
    finally:
        writer.close()
        connections["hermes"].close()


def test_hermes_connection_runs_in_autocommit_without_transactions(export_store):
    connection = connections["hermes"]
    connection.ensure_connection()
    assert connection.features.supports_transactions is False
    assert connection.get_autocommit() is True
    assert connection.connection.isolation_level is None


def test_stream_export_writes_rfc4180_csv_and_streamed_json():
    columns = ["a", "b"]
    chunks = [[{"a": 'x,"y"\r\nz', "b": 1.5}], [{"a": None, "b": float("nan")}]]
    response = exports.stream_export(fmt="csv", columns=columns, chunks=chunks, filename="t.csv")
    assert body(response) == b'a,b\r\n"x,""y""\r\nz",1.5\r\n,nan\r\n'
    response = exports.stream_export(fmt="json", columns=columns, chunks=chunks, filename="t.json")
    assert json.loads(body(response)) == [{"a": 'x,"y"\r\nz', "b": 1.5}, {"a": None, "b": None}]
    response = exports.stream_export(
        fmt="csv", columns=columns, chunks=iter(()), filename='a b/"c".csv', preview_only=True
    )
    assert body(response) == b"a,b\r\n"
    assert response["Content-Disposition"] == 'attachment; filename="a_b_c-preview.csv"'


def test_requested_format_reads_the_query_string():
    factory = RequestFactory()
    assert exports.requested_format(factory.get("/x", {"_export": "CSV"})) == "csv"
    assert exports.requested_format(factory.get("/x", {"_export": "jsonl"})) == "jsonl"
    assert exports.requested_format(factory.get("/x")) is None


# Links on the pages ------------------------------------------------------------------------------
def test_session_list_offers_export_links_of_the_current_view(staff_client, export_store):
    response = staff_client.get("/sessions/?source=telegram&sort=started_at&cursor=abc")
    html = response.content.decode()
    assert 'class="export-links"' in html
    assert "/sessions/?source=telegram&amp;sort=started_at&amp;_export=csv" in html
    assert "_export=csv&amp;_bom=1" in html
    assert "_export=jsonl" in html and "_export=json" in html
    assert "cursor=abc&amp;_export" not in html


def test_session_page_offers_transcript_downloads(staff_client, export_store):
    middle = export_store["chain_ids"][1]
    html = staff_client.get(reverse("sessions:detail", args=[middle])).content.decode()
    assert f"/sessions/{middle}/export.md?show=compacted" in html
    assert f"/sessions/{middle}/export.json?show=compacted" in html
    chain_link = f"/sessions/{middle}/export.md?show=compacted&amp;chain=1"
    assert (chain_link in html) == (export_store["shape"] != "doc")


def test_transcript_urls_resolve():
    assert reverse("sessions:export_md", args=["a-b_c"]) == "/sessions/a-b_c/export.md"
    assert reverse("sessions:export_json", args=["a-b_c"]) == "/sessions/a-b_c/export.json"
    assert resolve("/sessions/x.y/export.md").url_name == "export_md"
    assert resolve("/sessions/export.md/").url_name == "detail"


# Transcripts ---------------------------------------------------------------------------------------
def visible_ids(path, session_id, shape, show=("compacted",)):
    where = "session_id = ?"
    if shape == "current":
        keep = ["active = 1"]
        if "compacted" in show:
            keep.append("(active = 0 AND compacted = 1)")
        if "rewound" in show:
            keep.append("(active = 0 AND compacted = 0)")
        where += f" AND ({' OR '.join(keep)})"
        if "hidden" not in show:
            where += " AND (display_kind IS NULL OR display_kind != 'hidden')"
    return [
        r[0] for r in sql(path, f"SELECT id FROM messages WHERE {where} ORDER BY id", [session_id])
    ]


def markdown_outline(text: str, *, outside: list[str] | None = None) -> list[str]:
    """Headings outside fenced blocks (CommonMark: a fence closes only with a run of the same
    character at least as long as the opening one). ``outside`` collects every line outside."""
    headings, fence = [], None
    for line in text.split("\n"):
        stripped = line.lstrip(" ")
        if fence is None:
            if stripped.startswith("```"):
                fence = len(stripped) - len(stripped.lstrip("`"))
            else:
                if line.startswith("#"):
                    headings.append(line)
                if outside is not None:
                    outside.append(line)
        elif stripped.startswith("`" * fence) and not stripped.strip("`"):
            fence = None
    assert fence is None, "a fence was left open"
    return headings


def test_markdown_transcript_holds_every_message_in_order(staff_client, export_store, small_chunks):
    sid = export_store["nasty_session_id"]
    response = staff_client.get(reverse("sessions:export_md", args=[sid]))
    assert response.status_code == 200
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    assert response["Content-Disposition"] == (
        f'attachment; filename="transcript-nasty-session-{today()}.md"'
    )
    text = body(response).decode()
    ids = visible_ids(export_store["path"], sid, export_store["shape"])
    positions = [text.index(f"\nmessage {i}") for i in ids]
    assert positions == sorted(positions)
    outside: list[str] = []
    headings = markdown_outline(text, outside=outside)
    assert headings[0] == '# Nasty, "content"'
    assert len([h for h in headings if h.startswith("### ")]) == len(ids)
    # Content survives verbatim inside fences longer than any backtick run in it.
    assert "`````text\nHere is code:\n```python" in text
    assert MEGABYTE in text
    assert "look ```\n[image]" in text  # multimodal: text parts, then [image]
    assert '"command": "echo ```; rm -rf /"' in text
    assert "<details><summary>Reasoning</summary>" in text
    assert "not valid JSON" in text
    # Hostile HTML is there verbatim, but only inside fences, where it is inert.
    assert "<script>alert(2)</script>" in text
    assert not [line for line in outside if "<script" in line or "<img" in line]
    if export_store["shape"] != "doc":  # named after the call it answers (tool_call_id)
        assert "### 10. tool result · `terminal`" in text


def test_markdown_escapes_titles_and_keeps_html_inert(staff_client, export_store):
    sid = export_store["session_ids"][5]  # "<script>alert('t')</script> & <b>b</b>"
    text = body(staff_client.get(reverse("sessions:export_md", args=[sid]))).decode()
    first_line = text.split("\n", 1)[0]
    assert first_line == r"# \<script\>alert('t')\</script\> \& \<b\>b\</b\>"


def test_json_transcript_has_the_session_and_every_message_with_all_fields(
    staff_client, export_store, small_chunks
):
    sid = export_store["nasty_session_id"]
    response = staff_client.get(reverse("sessions:export_json", args=[sid]))
    assert response["Content-Type"] == "application/json; charset=utf-8"
    data = json.loads(body(response))
    assert data["session"]["id"] == sid and data["session"]["title"] == 'Nasty, "content"'
    assert [s["id"] for s in data["sessions"]] == [sid]
    columns = [r[1] for r in sql(export_store["path"], "PRAGMA table_info(messages)")]
    stored = sql(
        export_store["path"],
        f"SELECT {', '.join(columns)} FROM messages WHERE session_id = ? ORDER BY id",
        [sid],
    )
    known = {f.column for f in Message._meta.concrete_fields}
    assert len(data["messages"]) == len(stored)
    for message, row in zip(data["messages"], stored, strict=True):
        for column, value in zip(columns, row, strict=True):
            if column in known:
                assert message[column] == value, column
        assert message["timestamp_iso"]


def test_transcript_visibility_follows_show_like_the_page(staff_client, export_store):
    sid = export_store["history_id"]
    shape = export_store["shape"]
    for show in (("compacted",), ("compacted", "rewound", "hidden"), ()):
        params = {"show": ",".join(show) or "live"}
        data = json.loads(
            body(staff_client.get(reverse("sessions:export_json", args=[sid]), params))
        )
        assert [m["id"] for m in data["messages"]] == visible_ids(
            export_store["path"], sid, shape, show
        )
    default = json.loads(body(staff_client.get(reverse("sessions:export_json", args=[sid]))))
    assert [m["id"] for m in default["messages"]] == visible_ids(export_store["path"], sid, shape)


def test_chain_option_exports_the_whole_compression_chain_in_order(
    staff_client, export_store, small_chunks
):
    root, middle, tip = export_store["chain_ids"]
    shape = export_store["shape"]
    expected_sessions = [root, middle, tip] if shape != "doc" else [middle]
    for start in (root, middle, tip) if shape != "doc" else (middle,):
        data = json.loads(
            body(staff_client.get(reverse("sessions:export_json", args=[start]), {"chain": "1"}))
        )
        assert data["export"]["chain"] is True
        assert data["session"]["id"] == start
        assert [s["id"] for s in data["sessions"]] == expected_sessions
        ids = [i for s in expected_sessions for i in visible_ids(export_store["path"], s, shape)]
        assert [m["id"] for m in data["messages"]] == ids
        assert {m["session_id"] for m in data["messages"]} == set(expected_sessions)
    response = staff_client.get(reverse("sessions:export_md", args=[middle]), {"chain": "1"})
    assert "-chain-" in response["Content-Disposition"]
    text = body(response).decode()
    if shape != "doc":
        parts = [h for h in markdown_outline(text) if h.startswith("## Part")]
        assert parts == [f"## Part {i} of 3: Chain part {i}" for i in (1, 2, 3)]
        assert text.index("step 1") < text.index("step 2") < text.index("step 3")
        assert "subagent work" not in text and "branch work" not in text


def test_unknown_session_transcript_is_404(staff_client, export_store):
    for name in ("sessions:export_md", "sessions:export_json"):
        assert staff_client.get(reverse(name, args=["no-such-session"])).status_code == 404


def test_exports_need_a_signed_in_user(client, export_store):
    response = client.get("/sessions/?_export=csv")
    assert response.status_code == 302
    response = client.get(reverse("sessions:export_md", args=["chain-root"]))
    assert response.status_code == 302


def test_nasty_fixture_exports_on_every_shape(staff_client, store):
    """The shared nasty store (XSS, CJK, megabyte output, malformed calls) exports cleanly."""
    rows = parse_csv(body(staff_client.get("/sessions/?_export=csv")))
    assert {r["id"] for r in rows} == set(store.session_ids)
    for sid in (store.megabyte_session_id, store.malformed_session_id, store.multimodal_session_id):
        text = body(staff_client.get(reverse("sessions:export_md", args=[sid]))).decode()
        markdown_outline(text)
        data = json.loads(body(staff_client.get(reverse("sessions:export_json", args=[sid]))))
        assert data["messages"]


# Roles and secrets -----------------------------------------------------------------------------
def test_exports_redact_secrets_like_the_transcript_page(staff_client, export_store, settings):
    sid = export_store["secret_session_id"]
    ids = [
        r[0]
        for r in sql(export_store["path"], "SELECT id FROM messages WHERE session_id = ?", [sid])
    ]
    downloads = [
        body(message_export("csv", ids=ids)),
        body(message_export("jsonl", ids=ids)),
        body(staff_client.get(reverse("sessions:export_md", args=[sid]))),
        body(staff_client.get(reverse("sessions:export_json", args=[sid]))),
    ]
    for data in downloads:
        text = data.decode()
        assert SECRET not in text
        assert "[redacted: openai key]" in text or "[redacted: bearer token]" in text
    json.loads(downloads[3])  # tool_calls JSON stays valid after redaction
    settings.HERMES_REDACT_SECRETS = False
    assert SECRET in body(message_export("csv", ids=ids)).decode()


def test_viewers_get_no_export_links_and_no_exports(client, django_user_model, export_store):
    viewer = django_user_model.objects.create_user(username="viewer", password="pw-viewer-123")
    client.force_login(viewer)
    html = client.get("/sessions/").content.decode()
    assert "export-links" not in html
    assert client.get("/sessions/?_export=csv").status_code == 403
    sid = export_store["chain_ids"][0]
    assert client.get(reverse("sessions:export_md", args=[sid])).status_code == 403
    assert client.get(reverse("sessions:export_json", args=[sid])).status_code == 403


def test_analysts_may_export(client, django_user_model, export_store):
    from django.contrib.auth.models import Group

    analyst = django_user_model.objects.create_user(username="analyst", password="pw-analyst-123")
    analyst.groups.add(Group.objects.get_or_create(name="analysts")[0])
    client.force_login(analyst)
    assert "export-links" in client.get("/sessions/").content.decode()
    assert client.get("/sessions/?_export=csv").status_code == 200
    sid = export_store["chain_ids"][0]
    assert client.get(reverse("sessions:export_md", args=[sid])).status_code == 200


# Speed without changing a byte -------------------------------------------------------------------
def _hostile_value(rng):
    pick = rng.random()
    if pick < 0.15:
        return None
    if pick < 0.3:
        return rng.randint(-(10**12), 10**12)
    if pick < 0.4:
        return rng.choice([rng.random() * 1e9, float("nan"), float("inf"), -0.0, 1e-300])
    if pick < 0.45:
        return rng.choice([True, False, b"by,tes", 3 + 4j])
    alphabet = ["a", ",", '"', "\n", "\r", " ", "\x00", "é", "🚀", "=", "'", "\t", "-", "@"]
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))


def _safe_cell(value):
    if isinstance(value, str) and value.startswith(csv_fast.FORMULA_STARTS):
        return "'" + value
    return value


@pytest.mark.parametrize("style", ["raw", "safe", "spreadsheet"])
def test_csv_lines_are_byte_for_byte_what_the_csv_module_writes(style):
    """The export writes CSV a column at a time; ``csv.writer`` is the reference."""
    defuse = {"raw": lambda v: v, "safe": _safe_cell, "spreadsheet": exports.neutralise_formula}
    rng = random.Random(11)
    for _ in range(3000):
        width = rng.randint(1, 5)
        rows = [[_hostile_value(rng) for _ in range(width)] for _ in range(rng.randint(1, 6))]
        reference = io.StringIO()
        writer = csv.writer(reference)
        for row in rows:
            writer.writerow([defuse[style](v) for v in row])
        lines = exports.csv_lines(rows, style=style)
        assert "".join(line + "\r\n" for line in lines) == reference.getvalue(), rows


def _hostile_text(rng) -> str:
    value = _hostile_value(rng)
    return value if isinstance(value, str) else ""


@pytest.mark.parametrize("style", ["raw", "safe", "spreadsheet"])
def test_long_text_columns_are_written_like_the_csv_module_too(style):
    """Columns of more than ``_SCANNED_COLUMN`` characters take the value-by-value path."""
    defuse = {"raw": lambda v: v, "safe": _safe_cell, "spreadsheet": exports.neutralise_formula}
    rng = random.Random(12)
    for _ in range(40):
        rows = [
            [
                rng.randint(0, 9),
                _hostile_text(rng) + "x" * rng.choice([0, 3000, 40_000]) + _hostile_text(rng),
                rng.choice([None, "=1+1", "plain", "-x", "a,b"]),
            ]
            for _ in range(rng.randint(1, 8))
        ]
        reference = io.StringIO()
        writer = csv.writer(reference)
        for row in rows:
            writer.writerow([defuse[style](v) for v in row])
        lines = exports.csv_lines(rows, style=style)
        assert "".join(line + "\r\n" for line in lines) == reference.getvalue()


def test_default_csv_defuses_formulas_and_raw_keeps_them(staff_client, tmp_path):
    path = tmp_path / "formula.db"
    with StateDB.create(path, "current") as db:
        db.session(
            "20260101_100000_aaaaaa", title='=HYPERLINK("http://x")', started_at=1_767_261_600
        )
        db.message("20260101_100000_aaaaaa", "user", "@SUM(1+1)")
        db.message("20260101_100000_aaaaaa", "user", "- a list item")
    use_store(path)

    def body(url):
        return b"".join(staff_client.get(url).streaming_content).decode("utf-8-sig")

    default = body("/sessions/?_export=csv") + body("/messages/?_export=csv")
    assert "'=HYPERLINK" in default and "'@SUM(1+1)" in default and "'- a list item" in default
    raw = body("/sessions/?_export=csv&_raw=1") + body("/messages/?_export=csv&_raw=1")
    assert "'=HYPERLINK" not in raw and ",=HYPERLINK" in raw.replace('"', "")
    assert "'@SUM" not in raw and "@SUM(1+1)" in raw


ZONES = [
    "UTC",
    "Europe/Paris",  # DST
    "Asia/Kolkata",  # half-hour offset
    "America/St_Johns",  # half-hour offset with DST
    "Australia/Lord_Howe",  # half-hour DST shift
    "Africa/Monrovia",  # -0:44:30 until 1972: offsets with seconds
    "Pacific/Kiritimati",  # +14:00, skipped a whole day in 1994
]


@pytest.mark.parametrize("zone_name", ZONES)
def test_iso_times_of_a_column_are_those_of_fromtimestamp(zone_name):
    zone = zoneinfo.ZoneInfo(zone_name)
    rng = random.Random(zone_name)
    values = [rng.uniform(-3e9, 6e10) for _ in range(5000)]
    # Around DST changes and whole seconds: fractions that round up into the next second.
    values += [
        base + delta
        for base in range(0, 2_000_000_000, 7_776_017)
        for delta in (0, 0.4999995, 0.9999994, 0.9999995, 0.9999996, -0.0000004, 3599.9999999)
    ]
    values += [None, "1700000000", "soon", 1, -1, 0, 1e20, -1e20, float("nan"), float("inf")]
    iso = isotime.iso_converter(zone)
    assert [iso(v) for v in values] == [timefmt.iso_in(v, zone) for v in values]


def test_exports_are_written_in_few_large_pieces(tmp_path, monkeypatch):
    """One write per chunk of rows (not one per row), and none past the flush size by more
    than one row."""
    db = StateDB.create(tmp_path / "many.db", "current")
    db.session("s", source="cli", title="Many", started_at=NASTY_NOW - DAY)
    for i in range(600):
        db.message("s", "user", f"message {i}, " + "x" * (i % 50), timestamp=NASTY_NOW - DAY + i)
    db.close()
    use_store(tmp_path / "many.db")
    monkeypatch.setattr(exports.chunks, "EXPORT_CHUNK_ROWS", 250)
    monkeypatch.setattr(exports.encoders, "FLUSH_BYTES", 8 * 1024)
    try:
        response = message_export(ids=list(range(1, 601)))
        pieces = list(response.streaming_content)
    finally:
        connections["hermes"].close()
    assert all(isinstance(p, bytes) and p for p in pieces)
    rows = parse_csv(b"".join(pieces))
    assert [r["content"] for r in rows] == [f"message {i}, " + "x" * (i % 50) for i in range(600)]
    # header, then 3 chunks of ~25-35 KB each cut into ~8 KB pieces
    assert 8 <= len(pieces) <= 20
    longest = max(len(line) for line in b"".join(pieces).split(b"\r\n")) + 2
    assert max(len(p) for p in pieces) < 8 * 1024 + longest


def test_memory_of_an_export_does_not_grow_with_its_size(tmp_path, monkeypatch):
    """Peak Python memory while streaming 1,000 rows and 8,000 rows is about the same: chunks
    are fetched, written and dropped one at a time."""
    db = StateDB.create(tmp_path / "big.db", "current")
    db.session("s", source="cli", title="Big", started_at=NASTY_NOW - DAY)
    line = 'a line of tool output, with a comma and a "quote"\n' * 20
    for i in range(8000):
        db.message("s", "tool" if i % 2 else "assistant", f"{i} {line}", timestamp=NASTY_NOW + i)
    db.close()
    use_store(tmp_path / "big.db")
    monkeypatch.setattr(exports.chunks, "EXPORT_CHUNK_ROWS", 500)

    def peak(count: int) -> tuple[int, int]:
        request = export_request(_export="csv")
        queryset = Message.objects.filter(id__lte=count)
        response = exports.export_messages(request, queryset, BY_ID)
        tracemalloc.start()
        try:
            size = sum(len(piece) for piece in response.streaming_content)
            return tracemalloc.get_traced_memory()[1], size
        finally:
            tracemalloc.stop()

    try:
        small, small_size = peak(1000)
        large, large_size = peak(8000)
    finally:
        connections["hermes"].close()
    assert large_size > 7 * small_size
    assert large < small * 1.3, (small, large)
