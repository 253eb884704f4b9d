"""Every figure equals its drill-down: each row of the JSON export links to a list that holds
exactly the rows its figure counts, on the current, legacy and doc shapes.

The session list's count is ``context["count"]``; the message list shows no total, so its
count is read from the same filter set the page built (``context["filter"].qs``).
"""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connections

from insights_app.drilldown import Drill
from insights_app.window import Window
from tests.conftest import use_store
from tests.test_insights import NOW, build_fixture

pytestmark = [pytest.mark.django_db(databases=["default", "hermes"]), pytest.mark.render_context]

WINDOWS = [
    "days=7",
    "days=30",
    "days=90",
    "days=all",
    "days=custom&start=2025-12-20&end=2025-12-30",
    "days=30&source=cli",
    "days=30&source=telegram",
    "days=90&model=claude-sonnet-4.5",
]


@pytest.fixture(params=["current", "legacy", "doc"])
def shaped_page(request, tmp_path, staff_client, monkeypatch):
    use_store(build_fixture(tmp_path / f"{request.param}.db", request.param))
    monkeypatch.setattr("insights_app.stats.current_time", lambda: NOW)
    yield staff_client
    connections["hermes"].close()


def listed(client, url: str) -> int:
    response = client.get(url)
    assert response.status_code == 200, url
    if url.startswith("/messages/"):
        return response.context["filter"].qs.count()
    count = response.context["count"]
    assert not count.capped, url
    return count.value


@pytest.mark.parametrize("query", WINDOWS)
def test_every_drilldown_lists_its_figure(shaped_page, query):
    data = shaped_page.get(f"/insights/?{query}&_export=json").json()
    checked = 0
    for row in data["models"]:
        assert listed(shaped_page, row["drilldown"]) == row["sessions"], (query, row["model"])
        checked += 1
    for row in data["platforms"]:
        assert listed(shaped_page, row["drilldown"]) == row["sessions"], (query, row["platform"])
        checked += 1
    for row in data["daily_by_start_day"]:
        assert listed(shaped_page, row["drilldown"]) == row["sessions"], (query, row["day"])
        checked += 1
    for row in data["tools"]:
        # The list holds the tool's result rows, the row's ``drilldown_count``; Hermes counts,
        # per session, the larger of its result rows and its calls, so the calls that were
        # never answered make up the rest of its count.
        assert listed(shaped_page, row["drilldown"]) == row["drilldown_count"], (query, row)
        assert row["drilldown_count"] + row["calls_without_result"] == row["count"], row
        assert row["calls_without_result"] >= 0, row
        checked += 1
    for row in data["skills"]["top_skills"]:
        # One skill call per assistant message in these fixtures: messages equal calls.
        assert listed(shaped_page, row["drilldown"]) == row["total_count"], (query, row["skill"])
        checked += 1
    if data["overview"]:
        total = listed(shaped_page, data["drilldown"])
        assert total == data["overview"]["total_sessions"], query
    assert checked or data["empty"]


def test_drilldown_bounds_are_the_window_to_the_second(shaped_page):
    data = shaped_page.get("/insights/?days=30&_export=json").json()
    url = data["platforms"][0]["drilldown"]
    assert f"started_from_epoch={NOW - 30 * 86400!r}" in url
    assert "flags=all" in url


@pytest.mark.parametrize(
    "window",
    [
        Window(days=30),
        Window(days=30, source="cli", model="claude-sonnet-4.5"),
        Window(days=None),
        Window(days=None, start_day=dt.date(2025, 12, 20), end_day=dt.date(2025, 12, 30)),
        Window(days=None, from_epoch=NOW - 86400 * 60, to_epoch=NOW - 86400 * 30, source="x&y"),
    ],
)
def test_a_day_links_what_a_range_of_that_day_links(window):
    # One day's link is built from the day's cached part of the query: the same URL, the
    # edge days clipped to the window's bounds, asked twice or after a day-and-model link.
    drill = Drill(window=window, now=NOW)
    first = dt.datetime.fromtimestamp(NOW - 86400 * 45, tz=dt.UTC).date()
    for offset in range(0, 50, 7):
        day = first + dt.timedelta(days=offset)
        drill.day_model(day, "gpt-5")
        assert drill.day(day) == drill.day(day) == Drill(window=window, now=NOW).days(day, day)
