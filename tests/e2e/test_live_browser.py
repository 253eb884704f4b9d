"""Live and failures in a real browser: the live table refreshes itself, a followed session
grows as a writer appends to it, and a failure leads to its place in the transcript."""

from __future__ import annotations

import re
import sqlite3
import time

import pytest
from django.core.cache import cache, caches
from playwright.sync_api import expect

from tests.conftest import use_store
from tests.e2e.conftest import E2E_DBS
from tests.test_failures import build_failures
from tests.test_live import build_live

pytestmark = pytest.mark.django_db(transaction=True, databases=E2E_DBS)


def _append(path, session_id: str, content: str, *, new_session: bool = False) -> None:
    conn = sqlite3.connect(path, timeout=5)
    now = time.time()
    if new_session:
        conn.execute(
            "INSERT INTO sessions (id, source, started_at, message_count, last_activity_at) "
            "VALUES (?, 'discord', ?, 0, ?)",
            (session_id, now, now),
        )
    conn.execute(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, 'assistant', ?, ?)",
        (session_id, content, now),
    )
    conn.execute(
        "UPDATE sessions SET last_activity_at = ?, message_count = message_count + 1 WHERE id = ?",
        (now, session_id),
    )
    conn.commit()
    conn.close()


@pytest.fixture
def live_path(tmp_path):
    cache.clear()
    caches["failures"].clear()
    path = tmp_path / "live.db"
    build_live(path, "current")
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.close()
    use_store(path)
    return path


def test_live_table_refreshes_and_a_followed_session_grows(browse, live_path):
    page = browse.page(role="analyst")
    page.goto("/live/")
    expect(page.locator("#live-table tr[data-session='run-1']")).to_be_visible()
    _append(live_path, "run-late", "a new session appears", new_session=True)
    expect(page.locator("#live-table tr[data-session='run-late']")).to_be_visible(timeout=9_000)

    page.goto("/sessions/run-1/")
    toggle = page.get_by_role("button", name="Follow")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    toggle.click()
    expect(page.locator("#follow-toggle")).to_have_attribute("aria-pressed", "true")
    _append(live_path, "run-1", "followed words arrive")
    expect(page.locator("ol.transcript").get_by_text("followed words arrive")).to_be_visible(
        timeout=8_000
    )


def _failures_store(tmp_path) -> dict:
    cache.clear()
    caches["failures"].clear()
    facts = build_failures(tmp_path / "failures.db", "current")
    use_store(facts["path"])
    return facts


def test_a_failure_leads_into_its_transcript(browse, tmp_path):
    facts = _failures_store(tmp_path)
    page = browse.page(role="analyst")
    page.goto("/failures/?days=30")
    expect(page.locator("svg.chart-svg").first).to_be_visible()
    link = page.locator(f"a[href$='/messages/{facts['exit1']}/']")
    link.click()
    expect(page).to_have_url(re.compile(rf"/sessions/s-b/\?.*#m{facts['exit1']}$"))
    expect(page.locator(f"#m{facts['exit1']}")).to_be_attached()


def test_a_failed_session_leads_from_the_list_to_its_page(browse, tmp_path):
    _failures_store(tmp_path)
    page = browse.page(role="viewer")
    page.goto("/failures/")
    # A count leads to the rows behind it: the failed sessions of source cli.
    page.locator("#fg-source").locator("xpath=..").get_by_role("link", name="cli").click()
    expect(page).to_have_url(re.compile(r"/failures/\?days=30&source=cli$"))
    failed = page.locator("section[aria-labelledby='f-sessions'] tbody tr")
    expect(failed).to_have_count(1)
    failed.get_by_role("link").first.click()
    expect(page).to_have_url(re.compile(r"/sessions/s-b/$"))
    expect(page.get_by_role("heading", level=1)).to_be_visible()
