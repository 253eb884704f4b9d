"""The old API against the real Datasette 0.65, URL by URL, on stores of two layouts.

Each layout's store (``tests/diff_store.py``) is served by Datasette (a subprocess, see
``tests/datasette_server.py``) and by the explorer (the test client, signed in as staff); a
broad corpus of old URLs (``tests/diff_corpus.py``) runs against both and each pair of answers
is classified.  The tests require at least 95% of the corpus to match exactly; every other URL
must be one of the documented differences (a JSON 400 where Datasette answered a 500, a CSV
formula cell defused).  Sorted walks on every sortable column of every table, both ways, are
followed page by page through Datasette's own ``next_url``: at every page the explorer, given
Datasette's token, answers Datasette's rows, ``next`` and ``next_url``.
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
from tests.diff_corpus import Answer, compare, corpus
from tests.diff_store import build_diff_store

pytestmark = [
    pytest.mark.django_db(databases=["default", "hermes"]),
    pytest.mark.skipif(not datasette_server.available(), reason="Datasette is not installed"),
]

LAYOUTS = ("legacy", "current")
TARGET = 0.95
OUR_HOST = "http://testserver"
# Page sizes of the sorted walks: a few pages per table, so that every walk crosses page
# boundaries inside groups of tied (and NULL) sort values.
WALK_SIZES = {
    "sessions": 16,
    "messages": 200,
    "session_model_usage": 10,
    "session_daily_usage": 6,
    "state_meta": 2,
    "system_prompts": 1,
    "schema_version": 1,
}
# Walks with filters, a search, a column choice or no sort: (table, query, page size).
MORE_WALKS = [
    ("sessions", "", 7),
    ("sessions", "_sort=message_count&source__not=cron", 7),
    ("sessions", "_sort_desc=source&user_id__notblank=1", 5),
    ("sessions", "_sort=title&title__notnull=1", 5),
    ("sessions", "_sort_desc=estimated_cost_usd&_col=title", 6),
    ("messages", "", 100),
    ("messages", "_sort=role&role__in=tool,user", 25),
    ("messages", "_sort_desc=token_count&_nocol=content", 60),
    ("messages", "_search=deploy&_sort=role", 5),
    ("messages", "_search=deploy&_sort_desc=session_id", 4),
    ("session_model_usage", "", 7),
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
            f"{counts['match']} match ({rate:.1%}), "
            f"{counts['error-400']} JSON 400 for a Datasette 500, "
            f"{counts['defused']} CSV with formula cells defused, {counts['mismatch']} mismatch"
        )
        for url, category, detail in results:
            if category != "match":
                print(f"  {category:9s} {url}  {detail}")
    assert not [r for r in results if r[1] == "mismatch"]
    assert rate >= TARGET
    connections["hermes"].close()


def walks(path) -> list[tuple[str, bool]]:
    """The first URLs of the walks, each with whether it reads every row of its table: every
    sortable column of every table, both ways, and ``MORE_WALKS``."""
    urls = []
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        for table, size in WALK_SIZES.items():
            info = list(conn.execute(f"pragma table_info({table})"))
            if not info:
                continue  # not in this layout
            columns = [r[1] for r in info] + ([] if any(r[5] for r in info) else ["rowid"])
            for column in columns:
                for sort in ("_sort", "_sort_desc"):
                    urls.append((f"/state/{table}.json?_size={size}&{sort}={column}", True))
    urls += [(f"/state/{t}.json?_size={size}&{q}", False) for t, q, size in MORE_WALKS]
    return urls


def walk(client, server, first_url: str, *, limit: int = 60) -> tuple[list, list[str]]:
    """Datasette's walk from ``first_url``, following its ``next_url``; at every page the
    explorer is asked the same URL (so Datasette's own token) and must answer the same.
    Returns Datasette's rows and the differences found (``url: detail``)."""
    rows, differences, url = [], [], first_url
    for _ in range(limit):
        mine, datasettes = ours(client, url), theirs(server, url)
        category, detail = compare(url, mine, datasettes, (server.base, OUR_HOST))
        if category != "match" or datasettes.status != 200:
            differences.append(f"{url}: {category} {detail}")
            break
        data = datasettes.json
        rows += data["rows"]
        if not data.get("next_url"):
            break
        parts = urlsplit(data["next_url"])
        url = parts.path + "?" + parts.query
    return rows, differences


@pytest.mark.parametrize("layout", LAYOUTS)
def test_sorted_walks_give_datasettes_rows_page_by_page(layout, layouts, staff_client, capsys):
    """Every page of every walk — its rows, in their order, its ``next`` token and
    ``next_url`` — is Datasette's, whether the walk sorts ascending or descending, on a column
    of ties or of NULLs, on a text, compound or integer key.  Datasette's sorted first page
    orders ties as SQLite finds them and its later pages by key, so its walk can repeat or
    skip tied rows at the first page's end; the explorer's walk is the same, row for row."""
    facts, path, server = layouts[layout]
    use_store(path)
    urls = walks(path)
    differences, uneven = [], []
    for url, whole in urls:
        rows, found = walk(staff_client, server, url)
        differences += found
        if not whole:
            continue
        table = urlsplit(url).path.split("/")[-1].removesuffix(".json")
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            (total,) = conn.execute(f"select count(*) from {table}").fetchone()
        if len({json.dumps(r) for r in rows}) != total or len(rows) != total:
            uneven.append(url)
    with capsys.disabled():
        print(
            f"\n[{layout}] {len(urls)} walks, {len(differences)} differ from Datasette's; "
            f"{len(uneven)} where Datasette's own walk repeats or skips tied rows"
        )
        for line in differences:
            print("  " + line)
    assert not differences
    assert len(urls) > 100
    connections["hermes"].close()
