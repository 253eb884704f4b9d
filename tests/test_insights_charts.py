"""The SVG chart builders and the local-time SQL: escaping, accessible text, buckets, DST."""

from __future__ import annotations

import datetime as dt
import re
import sqlite3
from html.parser import HTMLParser

import pytest

from insights_app import charts
from insights_app.localtime import offset_segments

HOSTILE = '<script>alert("x")</script> & "quotes"'


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def parse(markup: str) -> _Collect:
    collected = _Collect()
    collected.feed(str(markup))
    return collected


def test_hbar_chart_escapes_names_and_links():
    svg = charts.hbar_chart(
        [charts.Bar(HOSTILE, 10, href='/x/?a=1&b="2"'), charts.Bar("plain", 5)],
        title=f"Tools {HOSTILE}",
        desc="desc",
    )
    assert "<script>" not in svg
    assert "&lt;script&gt;" in svg
    assert 'href="/x/?a=1&amp;b=&quot;2&quot;"' in svg
    parsed = parse(svg)
    assert ("script", {}) not in parsed.tags
    assert all("style" not in attrs for _tag, attrs in parsed.tags)
    assert all(not name.startswith("on") for _tag, attrs in parsed.tags for name in attrs)


def test_charts_carry_title_desc_and_labelled_links():
    svg = charts.hbar_chart(
        [charts.Bar("terminal", 7, href="/messages/?tool_name=terminal", note="58.3% of calls")],
        title="Top tools",
        desc="One tool.",
        unit="calls",
    )
    root = parse(svg).tags[0]
    assert root[0] == "svg"
    title_id, desc_id = root[1]["aria-labelledby"].split()
    assert f'<title id="{title_id}">Top tools</title>' in svg
    assert f'<desc id="{desc_id}">One tool.</desc>' in svg
    assert root[1]["role"] == "group"  # it holds links
    assert 'aria-label="terminal: 7 calls (58.3% of calls)"' in svg


def test_empty_chart_says_so():
    svg = charts.hbar_chart([], title="Tools", desc="none")
    assert "No data in this window" in svg
    assert 'role="img"' in svg


def test_column_chart_links_every_bucket_and_marks_the_peak():
    columns = [
        charts.Column("Mon Dec 01, 2025", "Dec 01", 3, "/sessions/?started_after=2025-12-01"),
        charts.Column("Tue Dec 02, 2025", "Dec 02", 0, "/sessions/?started_after=2025-12-02"),
        charts.Column("Wed Dec 03, 2025", "Dec 03", 12, None),
    ]
    svg = charts.column_chart(columns, title="Sessions per day", desc="3 days", unit="sessions")
    # Empty days stay clickable (an invisible target), days without a link are not links.
    assert svg.count("<a ") == 2
    assert 'aria-label="Tue Dec 02, 2025: 0 sessions"' in svg
    assert ">12</text>" in svg  # the axis names the peak
    assert svg.count('class="bar"') == 2  # zero draws no bar


def test_heatmap_levels_and_cell_titles():
    grid = [[0] * 24 for _ in range(7)]
    grid[1][10] = 8  # Tuesday 10:00, the peak
    grid[4][9] = 1
    svg = charts.heatmap(
        grid, title="Heat", desc="d", weekdays=["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    )
    assert svg.count("<rect") == 7 * 24
    assert "<title>Tue 10:00–10:59: 8 sessions</title>" in svg
    assert "<title>Fri 09:00–09:59: 1 session</title>" in svg
    assert len(re.findall(r'class="heat heat-5"', svg)) == 1
    assert len(re.findall(r'class="heat heat-1"', svg)) == 1  # 1/8 of the peak: the lightest
    assert len(re.findall(r'class="heat heat-0"', svg)) == 7 * 24 - 2


@pytest.mark.parametrize(
    ("value", "peak", "level"),
    [(0, 10, 0), (1, 10, 1), (2, 10, 1), (3, 10, 2), (10, 10, 5), (9, 10, 5), (5, 0, 0)],
)
def test_heat_level(value, peak, level):
    assert charts.heat_level(value, peak) == level


def test_buckets_fill_empty_days_and_sum_values():
    d = dt.date
    size, series = charts.buckets(
        [(d(2025, 12, 1), {"sessions": 2}), (d(2025, 12, 3), {"sessions": 5})],
        d(2025, 12, 1),
        d(2025, 12, 4),
    )
    assert size == "day"
    assert [(b.first.isoformat(), b.values.get("sessions", 0)) for b in series] == [
        ("2025-12-01", 2),
        ("2025-12-02", 0),
        ("2025-12-03", 5),
        ("2025-12-04", 0),
    ]


def test_buckets_grow_to_weeks_and_months_on_long_spans():
    d = dt.date
    size, series = charts.buckets(
        [(d(2025, 1, 1), {"n": 1}), (d(2025, 1, 5), {"n": 1}), (d(2025, 1, 6), {"n": 1})],
        d(2025, 1, 1),
        d(2025, 12, 31),
    )
    assert size == "week"
    # Weeks start on Monday; the first is cut to the window's first day (Wed Jan 1).
    assert (series[0].first, series[0].last, series[0].values["n"]) == (
        d(2025, 1, 1),
        d(2025, 1, 5),
        2,
    )
    assert (series[1].first, series[1].values["n"]) == (d(2025, 1, 6), 1)
    size, series = charts.buckets([], d(2020, 1, 15), d(2025, 12, 31))
    assert size == "month"
    assert (series[0].first, series[0].last) == (d(2020, 1, 15), d(2020, 1, 31))
    assert series[-1].label == "December 2025"
    assert len(series) == 72


def test_offset_segments_find_the_exact_dst_changes():
    segments = offset_segments("Europe/Berlin", 1_735_689_600, 1_767_225_599)  # all of 2025
    assert segments.first == 3600  # CET
    # 2025-03-30 01:00 UTC to CEST, 2025-10-26 01:00 UTC back to CET.
    assert segments.changes == ((1_743_296_400, 7200), (1_761_440_400, 3600))
    assert offset_segments("UTC", 0, 2_000_000_000).changes == ()


def test_local_sql_matches_the_zone_on_both_sides_of_a_change():
    segments = offset_segments("Europe/Berlin", 1_743_200_000, 1_743_400_000)
    conn = sqlite3.connect(":memory:")
    for epoch, expected in (
        (1_743_296_399, "2025-03-30 01:59:59"),  # last second of CET
        (1_743_296_400, "2025-03-30 03:00:00"),  # first second of CEST
    ):
        (local,) = conn.execute(
            f"SELECT datetime({segments.local_sql('?')}, 'unixepoch')", (epoch, epoch, epoch)
        ).fetchone()
        assert local == expected
