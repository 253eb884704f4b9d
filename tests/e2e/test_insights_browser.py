"""Insights in a real browser: the charts are inline SVG with accessible names, the window
form is a GET form, and a chart leads to the sessions behind it."""

from __future__ import annotations

import re
import sqlite3
import time

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import E2E_DBS

pytestmark = pytest.mark.django_db(transaction=True, databases=E2E_DBS)


def sessions_since(facts, days: int, source: str | None = None) -> int:
    conn = sqlite3.connect(f"file:{facts.path}?mode=ro", uri=True)
    try:
        sql = "SELECT count(*) FROM sessions WHERE started_at >= ?"
        params: list = [time.time() - days * 86_400]
        if source:
            sql += " AND source = ?"
            params.append(source)
        return conn.execute(sql, params).fetchone()[0]
    finally:
        conn.close()


def sessions_card(page):
    return page.locator(".insights-cards .card").filter(has_text="Sessions").first


def test_insights_charts_render_with_accessible_names(browse, facts):
    page = browse.page(role="analyst")
    page.goto("/insights/?days=30")
    expect(page).to_have_title("Insights · Hermes Explorer")
    expect(sessions_card(page).locator(".card-value")).to_have_text(str(sessions_since(facts, 30)))

    charts = page.locator("svg.chart-svg")
    expect(charts.first).to_be_visible()
    count = charts.count()
    assert count >= 5, f"only {count} charts"
    for i in range(count):
        chart = charts.nth(i)
        expect(chart).to_have_attribute("role", re.compile(r"^(img|group)$"))
        expect(chart).to_have_accessible_name(re.compile(r"\w"))
        box = chart.bounding_box()
        assert box and box["width"] > 100 and box["height"] > 20, box
    # The bars are drawn (not an empty frame), and each one says what it is.
    bars = page.locator("svg.chart-svg rect")
    assert bars.count() > 10
    expect(page.locator("svg.chart-svg a[aria-label]").first).to_have_attribute(
        "aria-label", re.compile(r"\w")
    )


def test_insights_window_form_and_a_bar_leads_to_its_sessions(browse, facts):
    page = browse.page(role="analyst")
    page.goto("/insights/")
    page.get_by_label("Source").select_option("telegram")
    page.get_by_role("button", name="Show").click()
    expect(page).to_have_url(re.compile(r"source=telegram"))
    expect(page.locator(".page-head")).to_contain_text("telegram")
    expect(sessions_card(page).locator(".card-value")).to_have_text(
        str(sessions_since(facts, 30, "telegram"))
    )

    # A platform bar is a link to the session table filtered the same way.
    platforms = page.locator("section[aria-labelledby='platforms-h']")
    platforms.locator("svg.chart-svg a").first.click()
    expect(page).to_have_url(re.compile(r"/sessions/\?.*source=telegram"))
    expect(page.locator("table.data-table tbody tr .badge.source").first).to_have_text("telegram")


def test_a_viewer_sees_insights_without_export_links(browse, facts):
    page = browse.page(role="viewer")
    page.goto("/insights/")
    expect(page.locator("svg.chart-svg").first).to_be_visible()
    expect(page.locator(".export-links")).to_have_count(0)
