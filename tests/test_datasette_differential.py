"""The old API against the real Datasette 0.65, URL by URL, on stores of two layouts.

Each layout's store (``tests/diff_store.py``) is served by Datasette (a subprocess, see
``tests/datasette_server.py``) and by the explorer (the test client, signed in as staff); a
broad corpus of old URLs (``tests/diff_corpus.py``) runs against both and each pair of answers
is classified.  The tests require at least 95% of the corpus to match exactly; every other URL
must be one of the documented differences (the order of tied rows on a sorted first page, or a
JSON 400 where Datasette answered a 500).  ``next_url`` loops must return every row exactly
once, and Datasette's own ``_next`` tokens must resume at the same row.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from urllib.parse import urlsplit

import pytest
from django.db import connections

from legacy_app.api.tokens import key_path
from tests import datasette_server
from tests.conftest import use_store
from tests.diff_corpus import Answer, compare, corpus, same_value
from tests.diff_store import build_diff_store

pytestmark = [
    pytest.mark.django_db(databases=["default", "hermes"]),
    pytest.mark.skipif(not datasette_server.available(), reason="Datasette is not installed"),
]

LAYOUTS = ("legacy", "current")
TARGET = 0.95
OUR_HOST = "http://testserver"
# Tables and sorts whose next_url loops are followed to the end.
LOOPS = [
    ("sessions", ""),
    ("sessions", "_sort=source"),
    ("sessions", "_sort_desc=started_at"),
    ("sessions", "_sort=title"),
    ("sessions", "_sort_desc=estimated_cost_usd"),
    ("sessions", "_sort=message_count&source__not=cron"),
    ("messages", ""),
    ("messages", "_sort=role"),
    ("messages", "_sort_desc=timestamp"),
    ("messages", "_sort=token_count"),
    ("messages", "_sort_desc=session_id"),
    ("messages", "_search=deploy"),
    ("session_model_usage", ""),
    ("session_model_usage", "_sort_desc=estimated_cost_usd"),
    ("schema_version", ""),
]


@pytest.fixture(scope="module")
def layouts(tmp_path_factory):
    """{layout: (facts, path, Datasette server)} — both servers run for the module."""
    out = {}
    try:
        for layout in LAYOUTS:
            base = tmp_path_factory.mktemp(f"diff-{layout}")
            path = base / "state.db"
            facts = build_diff_store(path, layout)
            with sqlite3.connect(path) as conn:
                row = conn.execute(
                    "select session_id, model, billing_provider, billing_base_url, billing_mode,"
                    " task from session_model_usage order by 1, 2, 3, 4, 5, 6 limit 1"
                ).fetchone()
            facts["usage_key"] = key_path(list(row))
            server = datasette_server.DatasetteServer(path, base)
            server.start()
            out[layout] = (facts, path, server)
        yield out
    finally:
        for _facts, _path, server in out.values():
            server.stop()


def ours(client, url: str) -> Answer:
    response = client.get(url)
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return Answer(response.status_code, response.get("Content-Type", ""), body)


def theirs(server, url: str) -> Answer:
    status, content_type, body, _headers = server.get(url)
    return Answer(status, content_type, body)


def run_corpus(client, layout, facts, path, server):
    use_store(path)
    results = []
    for url in corpus(facts, layout):
        category, detail = compare(
            url, ours(client, url), theirs(server, url), (server.base, OUR_HOST)
        )
        results.append((url, category, detail))
    return results


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_corpus_answers_like_datasette(layout, layouts, staff_user, capsys):
    import base64

    from django.test import Client

    # Signed in the way scripts are (Basic), so that ?sql= URLs run as they did for scripts.
    basic = base64.b64encode(b"staff:pw-staff-123").decode()
    script = Client(headers={"Authorization": f"Basic {basic}"})
    facts, path, server = layouts[layout]
    results = run_corpus(script, layout, facts, path, server)
    counts = Counter(category for _u, category, _d in results)
    rate = counts["match"] / len(results)
    with capsys.disabled():
        print(
            f"\n[{layout}] Datasette {datasette_server.datasette_version()}: {len(results)} URLs, "
            f"{counts['match']} match ({rate:.1%}), {counts['ties']} tie order, "
            f"{counts['error-400']} JSON 400 for a Datasette 500, "
            f"{counts['defused']} CSV with formula cells defused, {counts['mismatch']} mismatch"
        )
        for url, category, detail in results:
            if category != "match":
                print(f"  {category:9s} {url}  {detail}")
    assert not [r for r in results if r[1] == "mismatch"]
    for url, category, _detail in results:
        if category == "ties":
            assert not _datasette_loop_is_sound(server, url), url
    assert rate >= TARGET
    connections["hermes"].close()


def _datasette_loop_is_sound(server, url: str) -> bool:
    """Whether Datasette's own next_url loop from ``url`` returns every row exactly once."""
    parts = urlsplit(url)
    query = "&".join(p for p in parts.query.split("&") if not p.startswith("_next="))
    first = parts.path.replace(".csv", ".json") + "?" + query

    def get(u):
        answer = theirs(server, u)
        return answer.status, answer.json

    rows, _statuses = _loop(get, first)
    unique = {json.dumps(r) for r in rows}
    status, data = get(first.replace("?", "?_size=0&", 1))
    return len(unique) == len(rows) == data["filtered_table_rows_count"]


def _loop(get, first_url: str, *, limit: int = 200) -> tuple[list, list]:
    """Rows and statuses of a next_url loop, from ``first_url`` to the end."""
    rows, statuses, url = [], [], first_url
    for _ in range(limit):
        status, data = get(url)
        statuses.append(status)
        if status != 200:
            break
        rows += data["rows"]
        if not data.get("next_url"):
            break
        parts = urlsplit(data["next_url"])
        url = parts.path + "?" + parts.query
    return rows, statuses


def _sort_column(query: str) -> str | None:
    for part in query.split("&"):
        name, _, value = part.partition("=")
        if name in ("_sort", "_sort_desc"):
            return value
    return None


def _redacted(rows: list) -> list:
    from redaction import redact

    return [[redact(v) for v in r] for r in rows]


def _expected(path, table: str, query: str) -> list:
    """Every row of the table in Datasette's order, from SQLite directly."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        key = [
            r[1]
            for r in sorted(conn.execute(f"pragma table_info({table})"), key=lambda r: r[5])
            if r[5]
        ]
        key = key or ["rowid"]
        select = "rowid, *" if key == ["rowid"] else "*"
        where, order = "", ", ".join(key)
        for part in filter(None, query.split("&")):
            name, _, value = part.partition("=")
            if name == "_sort":
                order = f"{value}, " + order
            elif name == "_sort_desc":
                order = f"{value} desc, " + order
            elif name == "source__not":
                where = f" where source != '{value}'"
            elif name == "_search":
                where = (
                    " where rowid in (select rowid from messages_fts where messages_fts match"
                    f" '\"{value}\"')"
                )
        return [
            list(r) for r in conn.execute(f"select {select} from {table}{where} order by {order}")
        ]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_next_url_loops_return_every_row_once(layout, layouts, staff_client):
    facts, path, server = layouts[layout]
    use_store(path)

    def get_ours(url):
        answer = ours(staff_client, url)
        return answer.status, answer.json

    def get_theirs(url):
        answer = theirs(server, url)
        return answer.status, answer.json

    for table, query in LOOPS:
        first = f"/state/{table}.json?_size=7" + (f"&{query}" if query else "")
        mine, statuses = _loop(get_ours, first)
        assert set(statuses) == {200}, first
        expected = _expected(path, table, query)
        # Every row once, in the order of the sort (ties on a first page keep SQLite's order,
        # as Datasette's did).
        assert len(mine) == len(expected), first
        assert sorted(map(json.dumps, mine)) == sorted(map(json.dumps, _redacted(expected))), first
        sort = _sort_column(query)
        if sort is None:
            assert same_value(mine, expected), first
        else:
            columns = ours(staff_client, first).json["columns"]
            at = columns.index(sort)
            assert [r[at] for r in mine] == [r[at] for r in expected], first
        datasette, _ = _loop(get_theirs, first)
        unique = {json.dumps(r) for r in datasette}
        if len(unique) == len(datasette) == len(expected):
            # Datasette's own loop was sound here: then it is the same as ours.
            assert same_value(mine, datasette), first
    connections["hermes"].close()


@pytest.mark.parametrize("layout", LAYOUTS)
def test_datasette_tokens_resume_at_the_same_row(layout, layouts, staff_client):
    """From each of Datasette's own tokens, the explorer's next page is Datasette's — except
    where Datasette's loop for that sort repeats or skips rows (see ``tests/diff_corpus.py``):
    there the explorer's page repeats none of the first page's rows."""
    facts, path, server = layouts[layout]
    use_store(path)
    same = repeated = 0
    for table, query in LOOPS:
        url = f"/state/{table}.json?_size=5" + (f"&{query}" if query else "")
        seen: set = set()
        first_page: set = set()
        for _ in range(4):
            data = theirs(server, url).json
            if data is None or not data.get("next_url"):
                break
            if not seen:
                first_page = {json.dumps(r) for r in _redacted(data["rows"])}
            seen |= {json.dumps(r) for r in data["rows"]}
            parts = urlsplit(data["next_url"])
            url = parts.path + "?" + parts.query
            mine = ours(staff_client, url).json["rows"]
            datasettes = theirs(server, url).json["rows"]
            if same_value(mine, datasettes):
                same += 1
                continue
            # Datasette's loop repeats or skips rows here; the explorer's page repeats none of
            # the rows Datasette's first page gave.
            assert not _datasette_loop_is_sound(server, url), url
            assert not {json.dumps(r) for r in mine} & first_page, url
            repeated += 1
    assert same >= 20 and repeated <= same // 4
    connections["hermes"].close()
