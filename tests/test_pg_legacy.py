"""The old Datasette API and the SQL console on a profile kept in a PostgreSQL schema.

The differential rule: a URL on ``/p/team/…`` (the schema) answers the same rows and figures
as on ``/p/file/…`` (the SQLite file the schema was loaded from).
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest

from legacy_app.api.operators import OPERATORS
from tests.hermes_pg import hermes_pg as hermes_pg_server  # noqa: F401
from tests.test_pg_door import at, serve  # noqa: F401

pytestmark = pytest.mark.django_db(databases="__all__")


@pytest.fixture
def pg(hermes_pg_server):  # noqa: F811
    return hermes_pg_server


@pytest.fixture(params=["current", "legacy", "doc"])
def both(request, pg, serve, client, staff_user):  # noqa: F811
    shape = request.param
    serve(file=pg.stores[shape].path, team=at(pg.reader_url, pg.schema(shape)))
    client.force_login(staff_user)
    return client


def body(response) -> bytes:
    if response.streaming:
        return b"".join(response.streaming_content)
    return response.content


def answer(response):
    """What a response says, without what differs by nature (timings, the server's host)."""
    text = body(response)
    if "json" not in response["Content-Type"]:
        return response.status_code, text.replace(b"/p/team/", b"/p/file/")
    data = json.loads(text.replace(b"/p/team/", b"/p/file/"))
    if isinstance(data, dict):
        # The schema's catalog names no foreign keys; each server words its errors its way.
        for key in ("query_ms", "query", "expandable_columns", "error"):
            data.pop(key, None)
    return response.status_code, data


def explain(a, b) -> str:
    """Where two answers differ first."""
    if a[0] != b[0] or not isinstance(a[1], dict) or not isinstance(b[1], dict):
        return f"{a[0]} {str(a[1])[-300:]} != {b[0]} {str(b[1])[-300:]}"
    for key in a[1]:
        if a[1][key] != b[1].get(key):
            if key == "rows":
                for x, y in zip(a[1]["rows"], b[1]["rows"], strict=False):
                    if x != y:
                        return f"row {x} != {y}"
                return f"{len(a[1]['rows'])} rows != {len(b[1]['rows'])}"
            return f"{key}: {str(a[1][key])[:300]} != {str(b[1].get(key))[:300]}"
    return "?"


def probe(client, url):
    a = client.get("/p/file" + url)
    b = client.get("/p/team" + url)
    return answer(a), answer(b)


def common_columns(client, table: str) -> list[str]:
    """The columns ``table`` has on both sides (Hermes's PostgreSQL layout has its own)."""
    sides = [
        json.loads(client.get(f"/p/{side}/state/{table}.json?_size=0").content)["columns"]
        for side in ("file", "team")
    ]
    return [c for c in sides[0] if c in sides[1]]


def same(client, table: str, query: str = "") -> dict:
    """The JSON of ``/state/<table>.json?<query>`` on the file and on the schema, asserted
    equal on the columns both have; returns the file's."""
    cols = "&".join(f"_col={c}" for c in common_columns(client, table))
    url = f"/state/{table}.json?{cols}&{query}"
    a, b = probe(client, url)
    assert a == b, (url, explain(a, b))
    assert a[0] in (200, 400), url
    return a[1]


# Columns of each type, with values that match some rows, none, and the other type.
COLUMNS = {
    "sessions": {
        "title": ["Migration plan, part 1", "migration%", "*plan*", "a", "2"],
        "source": ["cli", "CLI", "t?l*", "[ct]*", "3"],
        "message_count": ["2", "2.0", "3", "abc", "1e1"],
        "started_at": ["1763769600", "1763769600.0", "1.7e9", "x"],
        "estimated_cost_usd": ["0.000625", "1.125", "0"],
        "model_config": ['{"a": 1}', "1"],
    },
    "messages": {
        "role": ["user", "ASSISTANT", "tool", "u%"],
        "content": ["%alert%", "*HTML*", "hello", "Posted"],
        "token_count": ["13", "12.5", "abc"],
        "tool_calls": ["terminal", "web_search", "x"],
        "timestamp": ["1767052810", "1767052810.0"],
        "active": ["1", "0", "yes"],
    },
}


@pytest.mark.parametrize("op", sorted(OPERATORS))
def test_every_operator_on_every_column_type_gives_the_files_rows(both, op):
    for table, columns in COLUMNS.items():
        common = common_columns(both, table)
        for column, values in columns.items():
            if column not in common:
                continue
            if OPERATORS[op].no_argument:
                values = ["1"]
            for value in values:
                if op in ("in", "notin"):
                    value = f'["{value}", 2, null]' if value != "abc" else f"{value},3"
                if op == "date":
                    value = "2025-11-22"
                same(both, table, urlencode({f"{column}__{op}": value}))
