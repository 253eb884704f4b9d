"""Journeys through the session pages in a real browser: sign in, filter, sort, read a
transcript, download a CSV, and what a viewer may not see."""

from __future__ import annotations

import csv
import re
import sqlite3

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import E2E_DBS
from tests.roles_helpers import PASSWORD

pytestmark = pytest.mark.django_db(transaction=True, databases=E2E_DBS)


def rows_of(page):
    return page.locator("table.data-table tbody tr")


def test_sign_in_through_the_form_lands_where_you_were_going(browse):
    browse.user("analyst")
    page = browse.page(role=None)
    page.goto("/sessions/?source=cli")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next="))
    expect(page).to_have_title("Sign in · Hermes Explorer")

    page.get_by_label("Username").fill("e2e-analyst")
    page.get_by_label("Password").fill("not the password")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("enter a correct username and password")

    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(re.compile(r"/sessions/\?source=cli$"))
    expect(page.get_by_role("heading", name="Sessions", exact=True)).to_be_visible()
    expect(page.get_by_role("banner")).to_contain_text("e2e-analyst")

    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(re.compile(r"/accounts/login/"))


def test_filter_and_sort_sessions_through_the_url(browse, facts):
    page = browse.page()
    page.goto("/sessions/")
    expect(page).to_have_title("Sessions · Hermes Explorer")
    expect(rows_of(page)).to_have_count(len(facts.session_ids))

    # The filter form is a GET form: its state is the URL, so it can be shared.
    page.get_by_role("checkbox", name="telegram").check()
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"[?&]source=telegram"))
    telegram = [facts.xss_session_id, "20251231_190000_ab12cd", facts.old_session_id]
    expect(rows_of(page)).to_have_count(len(telegram))
    for i in range(len(telegram)):
        expect(rows_of(page).nth(i).locator(".badge.source")).to_have_text("telegram")
    expect(page.get_by_role("status")).to_contain_text("3 sessions")

    # Sorting is a header link that keeps the filters: oldest first, then back.
    page.get_by_role("columnheader").get_by_role("link", name=re.compile("Started")).click()
    expect(page).to_have_url(re.compile(r"sort=started_at"))
    expect(page).to_have_url(re.compile(r"source=telegram"))
    expect(rows_of(page).first).to_contain_text("Old times")
    page.get_by_role("columnheader").get_by_role("link", name=re.compile("Started")).click()
    expect(page).to_have_url(re.compile(r"sort=-started_at"))
    expect(rows_of(page).first).to_contain_text("What is in this photo?")

    # Hostile titles are text, never markup (a script tag would also be a console error).
    expect(page.get_by_role("link", name=re.compile(r"<script>alert"))).to_be_visible()

    page.get_by_role("link", name="Reset").click()
    expect(page).to_have_url(re.compile(r"/sessions/$"))
    expect(rows_of(page)).to_have_count(len(facts.session_ids))


def test_page_through_sessions_with_the_keyset_pager(browse, demo):
    conn = sqlite3.connect(f"file:{demo}?mode=ro", uri=True)
    try:
        ids = [
            r[0]
            for r in conn.execute(
                # Archived and hidden sessions are left out of the list by default.
                "SELECT id FROM sessions WHERE NOT (COALESCE(archived, 0) OR"
                " COALESCE(auto_archived, 0) OR COALESCE(hidden, 0))"
                " ORDER BY started_at DESC, id DESC"
            )
        ]
    finally:
        conn.close()
    page = browse.page()
    pager = page.get_by_role("navigation", name="Pages")

    def shows(expected: list[str]) -> None:
        # Wait for the new page (its first row), then compare every row with the database.
        first = rows_of(page).first.locator(f"a[href='/sessions/{expected[0]}/']")
        expect(first).to_be_visible()
        expect(rows_of(page)).to_have_count(len(expected))
        hrefs = (
            rows_of(page)
            .locator("a[href^='/sessions/']")
            .evaluate_all("links => links.map(a => a.getAttribute('href'))")
        )
        assert [href.split("/")[2] for href in hrefs] == expected

    pages = [ids[i : i + 50] for i in range(0, len(ids), 50)]
    assert len(pages) >= 3, "the demo store holds several pages of sessions"
    page.goto("/sessions/")
    shows(pages[0])
    for expected in pages[1:]:
        pager.get_by_role("link", name="Next").click()
        expect(page).to_have_url(re.compile(r"[?&]cursor="))
        shows(expected)
    expect(pager.get_by_role("link", name="Next")).to_have_count(0)
    pager.get_by_role("link", name="Previous").click()
    shows(pages[-2])
    pager.get_by_role("link", name="First page").click()
    shows(pages[0])
    expect(page).not_to_have_url(re.compile(r"cursor="))


def test_open_a_session_and_expand_a_tool_call(browse, facts):
    page = browse.page()
    page.goto("/sessions/")
    page.get_by_role("link", name="Tidy the backup scripts").click()
    expect(page).to_have_url(re.compile(rf"/sessions/{facts.tool_session_id}/$"))
    expect(page).to_have_title("Tidy the backup scripts · Hermes Explorer")
    expect(page.get_by_role("heading", level=1)).to_have_text("Tidy the backup scripts")
    # Absolute times on screen, their age on hover (and the start time shows both).
    expect(page.locator(".msg-head time").first).to_have_attribute("title", re.compile(r" ago$"))
    expect(page.locator(".meta-grid .age")).to_contain_text("ago")

    call = page.locator("details.tool-call").filter(
        has=page.locator("summary", has_text="read_file")
    )
    expect(call).to_have_count(1)
    result = call.locator(".tool-result")
    expect(result).to_be_hidden()
    call.locator("summary").click()
    expect(call).to_have_attribute("open", "")
    expect(result).to_be_visible()
    expect(result).to_contain_text("rsync -a ~/src /mnt/backup")
    expect(call.locator(".tool-args")).to_contain_text("scripts/backup.sh")

    # The copy button puts the id on the clipboard and says so.
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    copy = page.get_by_role("button", name="Copy session id")
    copy.click()
    expect(copy).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == facts.tool_session_id


def test_a_megabyte_tool_output_says_it_was_cut_and_links_the_full_text(browse, facts):
    page = browse.page()
    page.goto(f"/sessions/{facts.megabyte_session_id}/")
    call = page.locator("details.tool-call").first
    call.locator(":scope > summary").click()
    note = call.locator(".truncated-note")
    expect(note).to_be_visible()
    expect(note).to_contain_text("Cut to 20,000 characters")
    expect(note).to_contain_text(f"{facts.megabyte_bytes:,} characters")
    call.locator("details.more summary").click()
    expect(call.locator("details.more")).to_have_attribute("open", "")

    note.get_by_role("link", name=re.compile("open the full text")).click()
    expect(page).to_have_url(re.compile(rf"/messages/{facts.megabyte_message_id}\.txt$"))
    expect(page.locator("body")).to_contain_text(facts.megabyte_tail_word)


def test_a_capped_count_says_so(browse, facts, monkeypatch):
    """On a big file the count stops at a cap; the page must say it is not exact."""
    from sessions_app import selectors

    exact = selectors.capped_count
    monkeypatch.setattr(selectors, "capped_count", lambda qs, cap=5: exact(qs, cap=cap))
    page = browse.page()
    page.goto("/sessions/")
    count = page.get_by_role("status")
    expect(count).to_contain_text("more than 5 sessions")
    expect(count).to_contain_text("count capped for speed")


def test_download_the_session_csv_matches_the_database(browse, facts, tmp_path):
    page = browse.page()
    page.goto("/sessions/?source=telegram&source=cli")
    export = page.locator(".export-links")
    with page.expect_download() as download_info:
        export.get_by_role("link", name="CSV", exact=True).click()
    download = download_info.value
    assert download.suggested_filename.endswith(".csv")
    path = tmp_path / download.suggested_filename
    download.save_as(path)

    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    conn = sqlite3.connect(f"file:{facts.path}?mode=ro", uri=True)
    try:
        expected = conn.execute(
            "SELECT id, source, title, message_count FROM sessions"
            " WHERE source IN ('telegram', 'cli') ORDER BY started_at DESC, id DESC"
        ).fetchall()
    finally:
        conn.close()
    assert [row["id"] for row in rows] == [row[0] for row in expected]
    assert [row["source"] for row in rows] == [row[1] for row in expected]
    assert [row["title"] for row in rows] == [row[2] or "" for row in expected]
    assert [int(row["message_count"]) for row in rows] == [row[3] for row in expected]


def test_a_viewer_sees_metadata_but_no_content(browse, facts):
    page = browse.page(role="viewer")
    # The 403 pages below log "Failed to load resource … 403" in the console, as they should.
    browse.problems.allow(r"status of 403")
    page.goto(f"/sessions/{facts.tool_session_id}/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Tidy the backup scripts")
    expect(page.locator(".meta-grid")).to_contain_text("cli")
    expect(page.locator("main")).not_to_contain_text(facts.rare_word)
    expect(page.locator("details.tool-call")).to_have_count(0)
    expect(page.locator(".export-links")).to_have_count(0)

    page.goto("/sessions/?source=cli")
    expect(rows_of(page)).not_to_have_count(0)
    expect(page.locator(".export-links")).to_have_count(0)
    nav = page.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="Sessions")).to_have_attribute("aria-current", "page")
    expect(nav.get_by_role("link", name="SQL")).to_have_count(0)

    for url in (
        "/sessions/?source=cli&_export=csv",
        f"/sessions/{facts.tool_session_id}/export.md",
        f"/sessions/{facts.tool_session_id}/messages/{facts.rare_message_id}.txt",
    ):
        response = page.goto(url)
        assert response.status == 403, url
        expect(page.locator("main")).to_contain_text("analyst")
