"""Search in a real browser: the "/" key, hits, and landing on the hit inside its transcript
(the right page, scrolled to it, highlighted, and opened if it is a collapsed tool result)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import E2E_DBS, screenshot

pytestmark = pytest.mark.django_db(transaction=True, databases=E2E_DBS)


def test_slash_focuses_the_search_box_and_enter_searches(browse, facts):
    page = browse.page(role="analyst")
    page.goto("/sessions/")
    page.locator("h1").click()
    page.keyboard.press("/")
    search_box = page.get_by_role("searchbox", name="Search all messages")
    expect(search_box).to_be_focused()
    page.keyboard.type(facts.rare_word)
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(rf"/search/\?q={facts.rare_word}"))
    expect(page).to_have_title(f"Search: {facts.rare_word} · Hermes Explorer")
    expect(page.locator(".hit")).to_have_count(1)

    # In a text field "/" is just a character.
    page.goto("/sessions/")
    title_field = page.get_by_label("Title")
    title_field.click()
    page.keyboard.press("/")
    expect(title_field).to_have_value("/")
    expect(title_field).to_be_focused()


def test_a_hit_lands_on_its_message_in_the_transcript(browse, facts):
    page = browse.page(role="analyst")
    page.goto(f"/search/?q={facts.rare_word}")
    hit = page.locator(".hit").first
    expect(hit.locator(".snippet mark")).to_have_text(re.compile(facts.rare_word, re.I))
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    hit.hover()
    hit.get_by_role("button", name=f"Copy message id {facts.rare_message_id}").click()
    assert page.evaluate("navigator.clipboard.readText()") == str(facts.rare_message_id)
    hit.locator("a.hit-link").click()
    expect(page).to_have_url(
        re.compile(rf"/sessions/{facts.tool_session_id}/\?page=1\b.*#m{facts.rare_message_id}$")
    )
    target = page.locator(f"#m{facts.rare_message_id}")
    expect(target).to_have_class(re.compile(r"\btarget-hit\b"))
    expect(target).to_be_in_viewport()
    expect(page.locator(".target-hit")).to_have_count(1)


def test_a_hit_on_a_later_page_of_a_long_transcript(browse, facts):
    """Turn 200 of the 450-message session is far past the first transcript page."""
    page = browse.page(role="analyst")
    page.goto('/search/?q="turn 200"')
    hits = page.locator(".hit")
    expect(hits).to_have_count(2)
    hits.first.locator("a.hit-link").click()
    expect(page).to_have_url(re.compile(rf"/sessions/{facts.big_session_id}/\?page=(\d+)"))
    landed_page = int(re.search(r"[?&]page=(\d+)", page.url).group(1))
    assert landed_page > 1
    target = page.locator(".target-hit")
    expect(target).to_have_count(1)
    expect(target).to_contain_text("(turn 200)")
    expect(target).to_be_in_viewport()
    screenshot(page, "search-hit-landing-light-desktop", full_page=False)


def test_a_hit_in_a_tool_result_opens_the_collapsed_call(browse, facts):
    read_file = next(p for p in facts.tool_pairs if p.name == "read_file")
    page = browse.page(role="analyst")
    page.goto("/search/?q=rsync")
    page.locator(".hit a.hit-link").first.click()
    expect(page).to_have_url(re.compile(rf"#m{read_file.tool_message_id}$"))
    result = page.locator(f"#m{read_file.tool_message_id}")
    expect(result).to_have_class(re.compile(r"\btarget-hit\b"))
    expect(result).to_be_visible()
    expect(result).to_contain_text("rsync -a ~/src /mnt/backup")
    expect(page.locator("details.tool-call[open]")).to_have_count(1)
    screenshot(page, "search-hit-in-tool-result-light-desktop", full_page=False)


def test_a_viewer_cannot_search_or_list_messages(browse, facts):
    page = browse.page(role="viewer")
    browse.problems.allow(r"status of 403")
    for url in (
        "/messages/",
        f"/messages/?session_id={facts.tool_session_id}",
        "/search/?q=backup",
    ):
        response = page.goto(url)
        assert response.status == 403, url
        expect(page.locator("main")).to_contain_text("analyst")
    # And the header offers neither.
    page.goto("/sessions/")
    expect(
        page.get_by_role("navigation", name="Main").get_by_role("link", name="Messages")
    ).to_have_count(0)


def test_no_hit_says_what_to_try(browse, facts):
    page = browse.page(role="analyst")
    page.goto("/search/?q=xylophonequartz")
    expect(page.locator("main .empty")).to_contain_text("No message matches")
    expect(page.locator("main .empty")).to_contain_text("Substring")
