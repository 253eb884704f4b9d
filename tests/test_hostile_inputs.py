"""Hostile input in every parameter of every URL: never a 5xx, never reflected unescaped, and the
state.db's bytes never change.

Each URL template below is requested once per hostile value (well over a hundred values).
URLs whose view is not built yet are skipped with the reason, so the table covers them by
itself when they land.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from urllib.parse import quote

import pytest
from django.db import connections
from django.test import Client
from django.urls import Resolver404, resolve

from tests.conftest import use_store

pytestmark = pytest.mark.django_db(databases=["default", "hermes"])

SQL_INJECTION = [
    "' OR 1=1 --",
    "' OR '1'='1",
    '" OR ""="',
    "'; DROP TABLE sessions; --",
    "1; DELETE FROM messages",
    "') UNION SELECT sql, 1, 2 FROM sqlite_master --",
    "%' UNION SELECT name FROM sqlite_master WHERE '%'='",
    "1 AND (SELECT count(*) FROM messages) > 0",
    "x' AND load_extension('/tmp/x')--",
    "admin'--",
    "1' ORDER BY 99--",
    "'; ATTACH DATABASE '/tmp/evil.db' AS evil; --",
    "' || (SELECT group_concat(sql) FROM sqlite_master) || '",
    "\\'; PRAGMA writable_schema=1; --",
    "1/**/OR/**/1=1",
    "' AND randomblob(1000000000) --",
]
FTS_SYNTAX = [
    '"',
    '"unclosed phrase',
    "NEAR(a b",
    "a NEAR/3 b",
    "*",
    "foo*",
    "-foo",
    "a AND",
    "OR",
    "NOT",
    "(((",
    ")))",
    "content:foo",
    "tool_name:terminal OR content:x",
    "^foo",
    "{content tool_name}: x",
    "a + b",
    "a OR OR b",
    '""',
    "'",
    "messages_fts MATCH 'x'",
    "rank:1",
    "NEAR",
    'a"b"c',
]
NUMBERS = [
    "9" * 100,
    "1e309",
    "-1e309",
    "inf",
    "-inf",
    "NaN",
    "9223372036854775808",
    "-9223372036854775809",
    "0x7fffffff",
    "1e-400",
    "99999999999999999999.99",
    "-1",
    "-0",
    "-999999999",
    "-1.5",
    "0",
    "00000000001",
    "1_000",
    "١٢٣",  # Arabic-Indic digits
    "2026-13-45",
    "0000-00-00",
    "9999-12-31",
    "-2026-01-01",
]
UNICODE = [
    "東京 🚀",
    "مرحبا بالعالم",
    "שלום",
    "\u202egnp.exe",  # right-to-left override
    "a\u200bb",  # zero-width space
    "e\u0301",  # combining accent
    "👩‍💻👨‍👩‍👧‍👦🇯🇵",
    "\ufeffbom",
    "İstanbul",
    "ß" * 50,
    "\x01\x02\x03",
    "\x1b[31mred\x1b[0m",
    "tab\there",
    "line\r\nbreak",
    "\x7f",
    "\u2028\u2029",
    "Ω≈ç√∫",
    "𝕳𝖊𝖗𝖒𝖊𝖘",
]
PATHS = [
    "../../etc/passwd",
    "..%2F..%2Fetc%2Fpasswd",
    "%2e%2e%2f%2e%2e%2f",
    "/etc/passwd",
    "C:\\Windows\\win.ini",
    "....//....//",
    "%252e%252e%252f",
    "file:///etc/passwd",
    "\\\\server\\share",
    "state.db",
    "..",
    ".",
    "~root",
    "20251230_101500_a1b2c3/../..",
]
PERCENT = ["%", "%%", "%zz", "%C0%AE", "%E2%80%AE", "%ff", "%u0041", "%"]
XSS = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "javascript:alert(1)",
    "<svg/onload=alert(1)>",
    "'-alert(1)-'",
    "{{7*7}}",
    "{% debug %}",
    "${7*7}",
    "<iframe src=//evil.example>",
    "</textarea><script>alert(2)</script>",
    "<a href='javascript:alert(3)'>x</a>",
    '" autofocus onfocus="alert(4)',
]
MISC = ["", " ", "null", "None", "true", "[]", "{}", "?", "&", "=", "#", "+", ";", "a" * 5000]

HOSTILE = SQL_INJECTION + FTS_SYNTAX + NUMBERS + UNICODE + PATHS + PERCENT + XSS + MISC
assert len(HOSTILE) >= 100

# {v}: the hostile value, URL-quoted; {sid}, {mid}: a real session and message.
URLS = [
    "/?q={v}",
    "/sessions/?source={v}",
    "/sessions/?model={v}",
    "/sessions/?started_after={v}&started_before={v}",
    "/sessions/?title={v}",
    "/sessions/?user_id={v}",
    "/sessions/?end_reason={v}&cost_status={v}",
    "/sessions/?min_cost={v}&max_cost={v}&min_messages={v}",
    "/sessions/?has_parent={v}",
    "/sessions/?sort={v}",
    "/sessions/?cursor={v}",
    "/sessions/?source={v}&_export=csv",
    "/sessions/?_export={v}",
    "/sessions/{v}/",
    "/sessions/{sid}/?page={v}&show={v}",
    "/sessions/{sid}/messages/{v}/",
    "/sessions/{sid}/messages/{mid}.txt?x={v}",
    "/sessions/{sid}/export.md?show={v}",
    "/sessions/{v}/export.json",
    "/messages/?q={v}",
    "/messages/?session_id={v}&role={v}",
    "/messages/?tool_name={v}&source={v}",
    "/messages/?date_from={v}&date_to={v}",
    "/messages/?cursor={v}&sort={v}&size={v}",
    "/messages/?session_id={v}&_export=jsonl",
    "/search/?q={v}",
    "/search/?q={v}&mode=advanced",
    "/search/?q={v}&mode=substring",
    "/search/?q=backup&mode={v}&sort={v}&page={v}&before={v}",
    "/search/?q=backup&session_id={v}&role={v}&source={v}",
    "/insights/?days={v}",
    "/insights/?days=30&source={v}",
    "/state/sessions?source={v}",
    "/state/sessions?_sort_desc={v}&_sort={v}",
    "/state/messages?_search={v}",
    "/state/messages?session_id={v}&role={v}",
    "/state/messages.csv?session_id={v}",
    "/state/sessions.json?_size={v}",
    "/state/{v}",
    "/state?sql={v}",
    "/sql/?sql={v}",
    "/sql/?query={v}",
    "/sql/?query=search-messages&keyword={v}",
    "/sql/?sql=SELECT+:p+AS+p&p={v}",
    "/sql/?query=search-messages-fts&query_text={v}",
]


def fingerprint(path) -> tuple[str, int]:
    path = Path(path)
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


@pytest.fixture(scope="module")
def fingerprints_before(nasty_stores):
    """The fixture files' bytes and mtime before this module browsed them."""
    return {shape: fingerprint(facts.path) for shape, facts in nasty_stores.items()}


def _route_exists(path: str) -> bool:
    try:
        resolve(path)
    except Resolver404:
        return False
    return True


@pytest.mark.parametrize("template", URLS)
def test_no_hostile_value_gives_a_server_error(
    template, current_store, staff_user, fingerprints_before, settings
):
    # A short SQL-console deadline keeps hostile runaway queries cheap here.
    settings.HERMES_SQL_TIMEOUT = 0.5
    probe = template.format(
        v="1", sid=current_store.tool_session_id, mid=current_store.rare_message_id
    )
    if not _route_exists(probe.split("?")[0]):
        pytest.skip(f"{probe.split('?')[0]} is not built yet")
    client = Client()
    client.force_login(staff_user)
    failures = []
    for value in HOSTILE:
        url = template.format(
            v=quote(value, safe=""),
            sid=current_store.tool_session_id,
            mid=current_store.rare_message_id,
        )
        response = client.get(url)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        if response.status_code >= 500:
            failures.append((url, response.status_code))
            continue
        if "<" in value and response.get("Content-Type", "").startswith("text/html"):
            if value.encode() in body:
                failures.append((url, "reflected unescaped"))
    assert failures == []


@pytest.mark.parametrize("shape", ["doc", "legacy"])
def test_older_shapes_survive_the_nastiest_values_too(shape, nasty_stores, staff_user):
    facts = nasty_stores[shape]
    use_store(facts.path)
    client = Client()
    client.force_login(staff_user)
    templates = [
        "/sessions/?source={v}&sort={v}",
        "/sessions/{v}/",
        "/messages/?q={v}",
        "/search/?q={v}",
    ]
    values = SQL_INJECTION + FTS_SYNTAX + XSS + NUMBERS[:8]
    for template in templates:
        if not _route_exists(template.format(v="x").split("?")[0]):
            continue
        for value in values:
            response = client.get(template.format(v=quote(value, safe="")))
            assert response.status_code < 500, (shape, template, value)
    connections["hermes"].close()


def test_hostile_post_bodies_on_the_console_are_refused_cleanly(current_store, staff_user):
    client = Client()
    client.force_login(staff_user)
    for value in SQL_INJECTION + XSS + MISC:
        response = client.post("/sql/saved/new", {"name": value, "slug": value, "sql": value})
        assert response.status_code in (302, 400), value


def test_hostile_statements_and_parameters_posted_to_the_console_never_give_a_500(
    current_store, staff_user, settings
):
    """A GET only fills the console's form in; the statement runs on POST, so post them."""
    settings.HERMES_SQL_TIMEOUT = 0.5
    client = Client()
    client.force_login(staff_user)
    for value in HOSTILE:
        for data in ({"sql": value}, {"sql": "SELECT :p AS p", "p": value}):
            response = client.post("/sql/", data)
            assert response.status_code in (200, 400), (data, response.status_code)
            if "<" in value:
                assert value.encode() not in response.content, data


def test_the_state_db_files_are_unchanged_after_all_of_this(nasty_stores, fingerprints_before):
    """Runs last in this module: every request above left the fixture files as they were."""
    connections["hermes"].close()
    after = {shape: fingerprint(facts.path) for shape, facts in nasty_stores.items()}
    assert after == fingerprints_before
