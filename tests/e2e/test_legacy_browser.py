"""The old Datasette bookmarks, followed in a real browser, show Datasette's rows (the API's
engine) and lead on to the explorer's own pages."""

from __future__ import annotations

import re
import sqlite3

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import E2E_DBS, check_accessibility_basics

pytestmark = pytest.mark.django_db(transaction=True, databases=E2E_DBS)


def session_ids_in(facts, where: str, order: str) -> list[str]:
    conn = sqlite3.connect(f"file:{facts.path}?mode=ro", uri=True)
    try:
        return [row[0] for row in conn.execute(f"SELECT id FROM sessions {where} {order}")]
    finally:
        conn.close()


def listed_session_ids(page) -> list[str]:
    hrefs = page.locator("table.data-table tbody tr a[href^='/sessions/']").evaluate_all(
        "links => links.map(a => a.getAttribute('href'))"
    )
    ids = []
    for href in hrefs:
        session_id = href.split("/")[2]
        if session_id not in ids:
            ids.append(session_id)
    return ids


def test_the_telegram_bookmark_shows_its_rows_and_opens_the_session_table(browse, facts):
    page = browse.page(role="analyst")
    page.goto("/state/sessions?source=telegram&_sort_desc=started_at")
    expect(page).to_have_title("state/sessions (old address) · Hermes Explorer")
    expected = session_ids_in(facts, "WHERE source = 'telegram'", "ORDER BY started_at DESC")
    expect(page.locator("table.data-table tbody tr")).to_have_count(len(expected))
    assert listed_session_ids(page) == expected
    page.get_by_role("link", name="Open sessions in the explorer").click()
    expect(page).to_have_url(re.compile(r"/sessions/\?source=telegram"))
    expect(page.get_by_role("checkbox", name="telegram")).to_be_checked()


def test_an_ascending_bookmark_keeps_its_order(browse, facts):
    page = browse.page(role="analyst")
    page.goto("/state/sessions?source=telegram&_sort=started_at")
    expected = session_ids_in(facts, "WHERE source = 'telegram'", "ORDER BY started_at ASC")
    expect(page.locator("table.data-table tbody tr")).to_have_count(len(expected))
    assert listed_session_ids(page) == expected


def test_a_search_bookmark_shows_datasettes_rows_and_links_search(browse, facts):
    """The search page ranks its hits: the old URL shows Datasette's rows, with a link."""
    page = browse.page(role="analyst")
    page.goto(f"/state/messages?_search={facts.rare_word}")
    expect(page).to_have_url(re.compile(r"/state/messages\?"))
    expect(page.locator("table.data-table tbody tr")).to_have_count(1)
    page.get_by_role("link", name="Open messages in the explorer").click()
    expect(page).to_have_url(re.compile(rf"/search/\?.*q={facts.rare_word}"))
    expect(page.locator(".hit")).to_have_count(1)


def test_a_bookmark_the_explorer_has_no_filter_for_shows_the_rows_directly(browse, facts):
    """``end_reason__not`` is no filter of /sessions/: the old page answers with the rows."""
    page = browse.page(role="analyst")
    page.goto("/state/sessions?end_reason__not=idle&_sort=started_at")
    expect(page).to_have_url(re.compile(r"/state/sessions\?"))
    check_accessibility_basics(page, "state/sessions (old address) · Hermes Explorer")
    expected = session_ids_in(
        facts, "WHERE end_reason IS NOT NULL AND end_reason != 'idle'", "ORDER BY started_at, id"
    )
    expect(page.locator("table.data-table tbody tr")).to_have_count(len(expected))
    assert listed_session_ids(page) == expected
    page.get_by_role("link", name="Open sessions in the explorer").click()
    expect(page).to_have_url(re.compile(r"/sessions/"))
