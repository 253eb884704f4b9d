"""The session timeline and the people page in a real browser: reached by their links, the
chart has an accessible name, every message has its row, a user leads to their sessions."""

from __future__ import annotations

import re
import sqlite3

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import E2E_DBS
from tests.e2e.test_axe_browser import serious

pytestmark = pytest.mark.django_db(transaction=True, databases=E2E_DBS)


def _one(path, sql):
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchone()
    finally:
        conn.close()


def test_timeline_from_the_session_page(browse, demo):
    from axe_playwright_python.sync_playwright import Axe

    # A session with tool results answering calls, and nothing archived or hidden.
    session_id, count = _one(
        demo,
        "SELECT session_id, COUNT(*) FROM messages GROUP BY session_id"
        " HAVING SUM(tool_call_id IS NOT NULL) > 1 AND MIN(active) = 1"
        " AND SUM(COALESCE(display_kind, '') = 'hidden') = 0 ORDER BY COUNT(*) LIMIT 1",
    )
    page = browse.page(role="analyst")
    page.goto(f"/sessions/{session_id}/")
    page.get_by_role("link", name="Timeline: where the time went").click()
    expect(page).to_have_url(re.compile(rf"/sessions/{session_id}/timeline/$"))
    expect(page.get_by_role("heading", name="Where the time went")).to_be_visible()
    chart = page.locator(".timeline-chart svg")
    expect(chart).to_have_accessible_name(
        re.compile(r"^Where the time went Model .* tools .* user ")
    )
    assert chart.locator("rect").count() >= 2
    expect(page.locator(".timeline-steps tbody tr")).to_have_count(count)
    expect(page.locator(".timeline-tools tbody tr").first).to_be_visible()
    assert not serious(Axe().run(page))
    # A message number leads into the transcript at that message.
    page.locator(".timeline-steps tbody tr a").first.click()
    expect(page).to_have_url(re.compile(rf"/sessions/{session_id}/\?page=1.*#m\d+$"))


def test_people_page_leads_to_a_users_sessions(browse, demo):
    (user, n) = _one(
        demo,
        "SELECT user_id, COUNT(*) FROM sessions WHERE user_id <> '' GROUP BY user_id"
        " ORDER BY MAX(started_at) DESC LIMIT 1",
    )
    page = browse.page(role="viewer")
    page.goto("/")
    page.get_by_role("link", name="People").click()
    page.get_by_label("Window", exact=True).select_option("365")
    page.get_by_role("button", name="Show").click()
    expect(page.locator("table.people")).to_be_visible()
    row = page.locator("table.people tbody tr").first
    expect(row).to_contain_text(user)
    # Sorting by a header link keeps the window.
    page.get_by_role("link", name="Sessions", exact=True).last.click()
    expect(page).to_have_url(re.compile(r"days=365.*sort=sessions|sort=sessions.*days=365"))
    page.get_by_role("link", name=user, exact=True).first.click()
    expect(page).to_have_url(re.compile(r"/sessions/\?user_id="))
    assert page.locator("table tbody tr").count() >= 1
