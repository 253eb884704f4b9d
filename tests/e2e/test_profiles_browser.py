"""Several profiles in a real browser: switch profiles, search all of them, follow a hit from
one profile into its transcript."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from hermes_explorer.stores import REGISTRY
from tests.e2e.conftest import screenshot
from tests.profile_home import PROFILE_DBS, build_home, serve_home

pytestmark = pytest.mark.django_db(transaction=True, databases=PROFILE_DBS)


@pytest.fixture
def home(settings, tmp_path, request):
    facts = build_home(tmp_path / "home", per=5)
    serve_home(settings, facts.home, request)
    yield facts
    REGISTRY.rescan()


def test_switch_profiles_and_follow_a_hit_into_its_transcript(home, browse):
    page = browse.page(role="analyst")
    page.goto("/sessions/")
    switcher = page.get_by_role("navigation", name="Profiles")
    expect(switcher.get_by_role("link", name="All profiles")).to_have_attribute(
        "aria-current", "page"
    )
    total = sum(len(made) for made in home.sessions.values())
    expect(page.locator("table.sessions-table tbody tr")).to_have_count(total)
    screenshot(page, "profiles-all-sessions")

    switcher.get_by_role("link", name="coder").click()
    expect(page).to_have_url(re.compile(r"/p/coder/sessions/$"))
    expect(page.locator("table.sessions-table tbody tr")).to_have_count(len(home.sessions["coder"]))
    # Inside a profile, the search box searches that profile: support's word is not there.
    search_box = page.get_by_role("searchbox", name="Search all messages")
    search_box.fill("onlysupport")
    search_box.press("Enter")
    expect(page).to_have_url(re.compile(r"/p/coder/search/\?q=onlysupport"))
    expect(page.locator(".hit")).to_have_count(0)

    # Back to every profile, the same search finds it in support.
    page.get_by_role("navigation", name="Profiles").get_by_role("link", name="All profiles").click()
    expect(page).to_have_url(re.compile(r"/search/\?q=onlysupport"))
    hits = page.locator(".hit")
    # One hit per support session but the one it shares with another profile.
    expect(hits).to_have_count(len(home.sessions["support"]) - 1)
    expect(hits.first.locator(".badge.profile")).to_have_text("support")
    hits.first.locator("a.hit-link").click()
    expect(page).to_have_url(re.compile(r"/p/support/sessions/[^/]+/\?page=1\b.*#m\d+$"))
    target = page.locator(".target-hit")
    expect(target).to_have_count(1)
    expect(target).to_contain_text("onlysupport")
    expect(
        page.get_by_role("navigation", name="Profiles").get_by_role("link", name="support")
    ).to_have_attribute("aria-current", "page")


def test_save_a_view_on_a_profiles_page_and_open_it_again(home, browse):
    """ "Save this view" on a profile's list keeps the profile: the saved view, opened from the
    menu on another page, shows that profile's sessions only."""
    from annotations_app.models import SavedView

    page = browse.page(role="analyst")
    page.goto("/p/coder/sessions/?sort=started_at")
    page.get_by_label("Save this view as").fill("Coder by start")
    page.get_by_role("button", name="Save view").click()
    expect(page.locator(".flash")).to_contain_text("View “Coder by start” saved.")
    expect(page).to_have_url(re.compile(r"/p/coder/sessions/\?sort=started_at$"))
    assert SavedView.objects.get().url == "/p/coder/sessions/?sort=started_at"

    page.goto("/p/support/sessions/")
    page.locator(".nav-views summary").click()
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Coder by start").click()
    expect(page).to_have_url(re.compile(r"/p/coder/sessions/\?sort=started_at$"))
    expect(page.locator("table.sessions-table tbody tr")).to_have_count(len(home.sessions["coder"]))
