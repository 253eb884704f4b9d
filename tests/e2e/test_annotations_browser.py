"""A journey through the team's annotations in a real browser: star a session, tag it, filter
the table by the tag, save that view and open it from the navigation."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotations_app.models import SavedView, Tag
from tests.e2e.conftest import E2E_DBS, check_accessibility_basics

pytestmark = pytest.mark.django_db(transaction=True, databases=E2E_DBS)


def test_star_tag_filter_and_save_the_view(browse, facts):
    Tag.objects.create(name="incident", colour="red", description="Things that broke")
    page = browse.page("analyst")
    session_id = facts.xss_session_id
    page.goto(f"/sessions/{session_id}/")

    star = page.get_by_role("button", name="Star")
    expect(star).to_have_attribute("aria-pressed", "false")
    star.click()
    expect(page.get_by_role("button", name="Star")).to_have_attribute("aria-pressed", "true")

    page.get_by_label("Tag", exact=True).select_option(label="incident")
    page.get_by_role("button", name="Add tag").click()
    expect(page.locator("#annotations .tags")).to_contain_text("incident")

    page.get_by_text("Write a note").click()  # the note form is folded until used
    page.get_by_label("Note", exact=True).fill("<b>not bold</b> the Tuesday incident")
    page.get_by_role("button", name="Add note").click()
    expect(page.locator(".note-text")).to_have_text("<b>not bold</b> the Tuesday incident")
    check_accessibility_basics(page, re.compile("Hermes Explorer"))

    # Filter the table by the tag from the sidebar form.
    page.goto("/sessions/")
    page.get_by_role("checkbox", name=re.compile(r"^incident")).check()
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"[?&]tag=incident"))
    rows = page.locator("table.data-table tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("incident")
    expect(rows.first.get_by_label("Starred")).to_be_visible()
    filtered_url = page.url

    # Save it from the navigation, shared with the team.
    page.locator(".nav-views summary").click()
    page.get_by_role("link", name="Save this view…").click()
    page.get_by_label("View name").fill("Incidents")
    page.get_by_label("Share with the team").check()
    page.get_by_role("button", name="Save view").click()
    expect(page.get_by_role("listitem").filter(has_text="Incidents").first).to_be_visible()
    view = SavedView.objects.get()
    assert view.shared and "tag=incident" in view.url

    # Opening it restores exactly that view.
    page.goto("/")
    page.locator(".nav-views summary").click()
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Incidents").click()
    expect(page).to_have_url(filtered_url)
    expect(page.locator("table.data-table tbody tr")).to_have_count(1)


def test_bulk_tag_a_selection_without_javascript(browse, facts):
    Tag.objects.create(name="good-example", colour="green")
    context = browse.context("analyst", java_script_enabled=False)
    page = context.new_page()
    page.goto("/sessions/?source=telegram")
    rows = page.locator("table.data-table tbody tr")
    expect(rows).to_have_count(3)
    for i in range(2):
        rows.nth(i).get_by_role("checkbox").check()
    page.get_by_label("Tag the selected sessions with").select_option(label="good-example")
    page.get_by_role("button", name="Tag selected").click()
    expect(page.locator(".flash")).to_contain_text("Tagged 2 sessions")
    page.goto("/sessions/?tag=good-example")
    expect(page.locator("table.data-table tbody tr")).to_have_count(2)


def test_save_a_view_in_one_step_and_tag_with_a_new_tag(browse, facts):
    """On the page itself: name the view and save it; on a session, staff make a tag while
    tagging."""
    page = browse.page("staff")
    page.goto("/sessions/?source=telegram")
    page.get_by_label("Save this view as").fill("Telegram")
    page.get_by_role("button", name="Save view").click()
    expect(page).to_have_url(re.compile(r"/sessions/\?source=telegram"))
    expect(page.locator(".flash")).to_contain_text("View “Telegram” saved.")
    assert SavedView.objects.get().url == "/sessions/?source=telegram"

    page.goto(f"/sessions/{facts.xss_session_id}/")
    page.get_by_label("New tag").fill("needs-review")
    page.get_by_role("button", name="Create and add").click()
    expect(page.locator("#annotations .tags")).to_contain_text("needs-review")
    assert Tag.objects.get().name == "needs-review"
