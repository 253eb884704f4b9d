"""Insights and people read from a PostgreSQL schema give the figures of the SQLite file the
schema was loaded from (the differential rule), on the three nasty layouts and a demo store.

The same URL is asked of ``/p/file/…`` (the SQLite file) and ``/p/team/…`` (its schema), and
the JSON exports compared; a number PostgreSQL keeps as a double (a start time, a duration)
compares equal to the integer SQLite stored.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3

import psycopg
import pytest
from django.core.cache import caches
from django.core.management import call_command

from hermes_explorer import stores
from insights_app import summary_store
from tests.hermes_pg import hermes_pg as hermes_pg_server  # noqa: F401
from tests.test_home import AGES
from tests.test_pg_door import at, serve  # noqa: F401

pytestmark = pytest.mark.django_db(databases="__all__")

SHAPES = ("current", "legacy", "doc")
# What differs between two reads of the same figures: when they were computed.
VOLATILE = {
    "generated_at",
    "elapsed",
    "computed_at",
    "elapsed_seconds",
    "now",
    "started_at_min",
    "since",
    "until",
    "started_at_max_exclusive",
    "profile",
}


@pytest.fixture
def pg(hermes_pg_server):  # noqa: F811
    return hermes_pg_server


@pytest.fixture(autouse=True)
def no_fallback(caplog):
    """Figures equal because a stored path failed and a slower one stood in would prove
    nothing: no test here may log that the summaries or the failure counts were not used."""
    yield
    for warning in ("summaries not used", "failure counts not kept"):
        assert warning not in caplog.text


def exported(client, profile: str, url: str):
    page = client.get(f"/p/{profile}{url}")
    assert page.status_code == 200, (profile, url, page.status_code)
    body = b"".join(page.streaming_content) if page.streaming else page.content
    # The links name their profile; the rest must be the same.
    return _without_volatile(json.loads(body.decode().replace(f"/p/{profile}/", "/p/X/")))


def _without_volatile(value):
    """``value`` without its volatile keys, its floats rounded (a sum of doubles taken in
    another order may differ in its last binary digits)."""
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, dict):
        return {k: _without_volatile(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_without_volatile(v) for v in value]
    return value


def assert_same(client, url: str, untimed: bool = False) -> dict:
    """``untimed``: the file has no ``tool_call_id`` nor ``session_model_usage`` (the doc
    layout), so it cannot time calls (``None``) and reads models from sessions; the schema has
    the column, all NULL, and the table, empty: it times none (0), and its models are the
    same."""
    file, team = exported(client, "file", url), exported(client, "team", url)
    if untimed:
        assert file["tool_latency"] is None and team["tool_latency"] == []
        team["tool_latency"] = None
        assert team["models_from"] == "session_model_usage"
        team["models_from"] = file["models_from"]
        for tool in team["tools"]:
            assert tool["calls"] == 0
            tool["calls"] = None
    if isinstance(file, dict):
        for key in file:
            assert team.get(key) == file[key], key
    assert team == file
    return team


INSIGHTS = [
    "/insights/?days=all&_export=json",
    "/insights/?start=2025-11-01&end=2025-12-31&_export=json",
    "/insights/?days=all&source=cli&_export=json",
]


@pytest.mark.parametrize("shape", SHAPES)
def test_insights_figures_from_a_schema_are_the_files(pg, serve, client, staff_user, shape):  # noqa: F811
    serve(file=pg.stores[shape].path, team=at(pg.reader_url, pg.schema(shape)))
    client.force_login(staff_user)
    for url in INSIGHTS:
        report = assert_same(client, url, untimed=shape == "doc")
    report = assert_same(client, INSIGHTS[0], untimed=shape == "doc")
    assert report["overview"]["total_sessions"] == len(pg.stores[shape].session_ids)


def without_links(value):
    """``value`` without its links (a "last N days" window's links carry its clock)."""
    if isinstance(value, dict):
        return {k: without_links(v) for k, v in value.items() if k not in ("url", "drilldown")}
    if isinstance(value, list):
        return [without_links(v) for v in value]
    return value


@pytest.mark.parametrize("days", [7, 30, 90, 365])
def test_every_preset_window_in_a_zone_with_summer_time(
    pg,
    serve,  # noqa: F811
    client,
    staff_user,
    settings,
    days,
):
    settings.TIME_ZONE = "America/New_York"
    serve(file=pg.stores["current"].path, team=at(pg.reader_url, pg.schema("current")))
    client.force_login(staff_user)
    url = f"/insights/?days={days}&_export=json"
    file, team = exported(client, "file", url), exported(client, "team", url)
    assert without_links(team) == without_links(file)
    url = "/insights/?days=all&_export=json"
    file, team = exported(client, "file", url), exported(client, "team", url)
    assert team == file


@pytest.mark.parametrize("shape", SHAPES)
def test_people_from_a_schema_are_the_files(pg, serve, client, staff_user, shape):  # noqa: F811
    serve(file=pg.stores[shape].path, team=at(pg.reader_url, pg.schema(shape)))
    client.force_login(staff_user)
    for url in ("/people/?days=all&_export=json", "/people/?start=2025-12-01&_export=json"):
        assert_same(client, url)


@pytest.mark.parametrize("shape", ("current", "legacy"))
def test_failures_from_a_schema_are_the_files(pg, serve, client, staff_user, shape):  # noqa: F811
    serve(file=pg.stores[shape].path, team=at(pg.reader_url, pg.schema(shape)))
    client.force_login(staff_user)
    report = assert_same(client, "/failures/?days=366&_export=json")
    # The nasty stores fail nowhere: their calls, paired with their results, are counted.
    assert report["tool_calls"] and report["sessions"]


def test_a_demo_store_gives_the_same_insights_and_people(
    pg,
    serve,  # noqa: F811
    client,
    staff_user,
    tmp_path,  # noqa: F811
):
    path = tmp_path / "demo.db"
    call_command("make_demo_db", str(path), sessions=120, messages=3000)
    pg.load(path, "hermes_demo")
    serve(file=str(path), team=at(pg.reader_url, "hermes_demo"))
    client.force_login(staff_user)
    report = assert_same(client, "/insights/?days=all&_export=json")
    assert report["overview"]["total_sessions"] > 0 and report["tools"]
    assert_same(client, "/insights/?start=2020-01-01&end=2030-12-31&source=cli&_export=json")
    assert_same(client, "/people/?days=all&_export=json")
    assert_same(client, "/failures/?days=30&_export=json")


# --- failures and the home page: a store of the last days (``tests/test_home.py``) ----------


@pytest.fixture
def recent(pg, serve, tmp_path):  # noqa: F811
    """``layout -> (file, schema)``: a store of recent sessions and failures in each layout,
    as a file and loaded into a schema; the caches emptied."""
    from django.core.cache import caches

    from tests.test_home import build_home

    for alias in ("default", "failures", "reports"):
        caches[alias].clear()
    found = {}
    for layout in SHAPES:
        path = tmp_path / f"{layout}.db"
        build_home(path, layout)
        pg.load(path, f"hermes_recent_{layout}")
        found[layout] = (str(path), at(pg.reader_url, f"hermes_recent_{layout}"))
    return found


FAILURES = [
    "/failures/?days=30&_export=json",
    "/failures/?days=366&_export=json",
    "/failures/?days=30&kind=tool_error&_export=json",
    "/failures/?days=30&tool=terminal&_export=json",
]


def csv_rows(client, profile: str, url: str) -> list[dict]:
    page = client.get(f"/p/{profile}{url}")
    assert page.status_code == 200
    text = b"".join(page.streaming_content).decode().replace(f"/p/{profile}/", "/p/X/")
    return [{**row, "profile": None} for row in csv.DictReader(io.StringIO(text))]


def home_figures(client, profile: str | None) -> tuple[dict, list]:
    page = client.get(f"/p/{profile}/" if profile else "/")
    assert page.status_code == 200
    figures = page.context["figures"]
    table = {
        (row["metric"], cell["period"].key): cell["value"]
        for row in figures["table"]
        for cell in row["cells"]
    }
    costliest = [(c["session_id"], c["cost"]) for c in figures["costliest"]]
    return table, costliest


# The doc layout has no ``tool_call_id``: there every tool row is a call.  Its schema has the
# column, NULL in every row, so by the same definition no tool row answers a call there.
@pytest.mark.parametrize("layout", ("current", "legacy"))
@pytest.mark.render_context
def test_failures_and_home_from_a_schema_are_the_files(recent, serve, client, staff_user, layout):  # noqa: F811
    file, schema = recent[layout]
    serve(file=file, team=schema)
    client.force_login(staff_user)
    for url in FAILURES:
        report = assert_same(client, url)
    assert report["failures"] and report["by_kind"].get("tool_error")
    rows = "/failures/?days=30&_export=csv&rows=1"
    assert csv_rows(client, "team", rows) == csv_rows(client, "file", rows)
    assert home_figures(client, "team") == home_figures(client, "file")


@pytest.mark.render_context
def test_all_profiles_with_a_schema_and_a_file_are_the_sum(recent, serve, client, staff_user):  # noqa: F811
    serve(file=recent["current"][0], team=recent["legacy"][1])
    client.force_login(staff_user)
    for url in ("/failures/?days=30&_export=json", "/insights/?days=all&_export=json"):
        merged = client.get(url).json()
        alone = [client.get(f"/p/{p}{url}").json() for p in ("file", "team")]
        if "overview" in merged:
            merged, alone = merged["overview"], [a["overview"] for a in alone]
            keys = ("total_sessions", "total_messages", "total_tokens", "estimated_cost")
        else:
            keys = ("failures", "tool_calls", "sessions", "failed_sessions")
        assert alone[0][keys[0]] and alone[1][keys[0]]
        for key in keys:
            assert merged[key] == pytest.approx(alone[0][key] + alone[1][key]), (url, key)
    merged, file, team = (home_figures(client, p)[0] for p in (None, "file", "team"))
    assert merged == {k: pytest.approx(file[k] + team[k]) for k in merged}
    assert merged[("sessions", "today")] > file[("sessions", "today")] > 0


def test_the_warm_commands_store_a_schemas_summaries_and_failure_counts(
    recent,
    serve,  # noqa: F811
    client,
    staff_user,
):
    from insights_app.models import StoredSummary
    from live_app.models import FailureBlock

    served = serve(file=recent["current"][0], team=recent["current"][1])
    out, err = io.StringIO(), io.StringIO()
    call_command("insights_warm", stdout=out, stderr=err)
    assert err.getvalue() == "" and "Failure counts of team ready" in out.getvalue()
    keys = {}
    for name, one in served.items():
        with stores.using(one):
            keys[name] = summary_store.store_key()
    summarised = {n: StoredSummary.objects.filter(store_key=k).count() for n, k in keys.items()}
    assert summarised["team"] == summarised["file"] > len(AGES) - 1
    assert FailureBlock.objects.filter(store_key=keys["team"]).exists()
    # The pages read what was stored, and still give the file's figures.
    client.force_login(staff_user)
    assert_same(client, "/insights/?days=all&_export=json")
    assert_same(client, "/failures/?days=30&_export=json")


@pytest.mark.parametrize("layout", ("current", "legacy"))
def test_every_form_of_a_failed_tool_result_is_read_from_a_schema(
    pg,
    serve,  # noqa: F811
    client,
    staff_user,
    tmp_path,
    layout,
):
    """The rule's PostgreSQL text finds what its SQLite text finds: ``Error…``, a JSON
    ``"error"`` or ``"success": false`` at the head, an ``"error"`` or non-zero
    ``"exit_code"`` at the tail (of a result too long to hold them at its head)."""
    from django.core.cache import caches

    from tests.test_failures import build_failures

    for alias in ("default", "failures", "reports"):
        caches[alias].clear()
    path = tmp_path / "failures.db"
    facts = build_failures(path, layout)
    pg.load(path, f"hermes_failures_{layout}")
    serve(file=str(path), team=at(pg.reader_url, f"hermes_failures_{layout}"))
    client.force_login(staff_user)
    for url in ("/failures/?days=30&_export=json", "/failures/?days=366&_export=json"):
        report = assert_same(client, url)
    assert report["by_kind"]["tool_error"] == 6 and report["tool_calls"] == 11
    listed = {row["message_id"] for row in report["list"]["failing_messages"]}
    assert facts["exit1"] in listed


def test_rows_appended_to_a_schema_refresh_its_stored_summaries(
    pg,
    serve,  # noqa: F811
    client,
    staff_user,
    tmp_path,
):
    path = tmp_path / "grow.db"
    path.write_bytes(open(pg.stores["current"].path, "rb").read())
    pg.load(path, "hermes_grow")
    serve(file=str(path), team=at(pg.reader_url, "hermes_grow"))
    client.force_login(staff_user)
    url = "/insights/?days=all&_export=json"
    before = assert_same(client, url)
    sid = pg.stores["current"].session_ids[0]
    row = (sid, "tool", "Error: late", "terminal", 1767225600.0)
    columns = "session_id, role, content, tool_name, timestamp"
    with sqlite3.connect(path) as conn:
        conn.execute(f"INSERT INTO messages ({columns}) VALUES (?, ?, ?, ?, ?)", row)
    with psycopg.connect(pg.url) as conn:
        conn.execute(
            f"INSERT INTO hermes_grow.messages ({columns}) VALUES (%s, %s, %s, %s, %s)", row
        )
        conn.execute("UPDATE hermes_grow.state_change_revision SET revision = revision + 1")
    # The reports kept aside (a recent report stands in while a new one is computed), not
    # the stored summaries: those must notice the new row by themselves.
    for alias in ("default", "reports"):
        caches[alias].clear()
    after = assert_same(client, url)
    assert after["overview"]["tool_messages"] == before["overview"]["tool_messages"] + 1
