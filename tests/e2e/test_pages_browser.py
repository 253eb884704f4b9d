"""The main pages in light and dark, on a desktop and a phone: screenshots, layout,
contrast, landmarks, labels, titles and keyboard use.

Screenshots go to ``test-artifacts/screenshots/<page>-<scheme>-<device>.png`` (gitignored):
look at them after a change of layout.  The page tour runs on the demo store, which looks
like a real install.
"""

from __future__ import annotations

import re
import sqlite3

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import (
    DESKTOP,
    E2E_DBS,
    PHONE,
    check_accessibility_basics,
    check_contrast,
    check_focus_visible,
    contrast_ratio,
    parse_rgb,
    relative_luminance,
    screenshot,
)

pytestmark = pytest.mark.django_db(transaction=True, databases=E2E_DBS)

SUFFIX = " · Hermes Explorer"


def tour(demo_path) -> list[tuple[str, str, str | re.Pattern]]:
    """(name, URL, expected title) of every main page, with ids from the demo store."""
    conn = sqlite3.connect(f"file:{demo_path}?mode=ro", uri=True)
    try:
        session_id, title = conn.execute(
            "SELECT id, title FROM sessions WHERE tool_call_count > 2 AND title IS NOT NULL"
            " AND message_count BETWEEN 10 AND 40 ORDER BY started_at DESC LIMIT 1"
        ).fetchone()
    finally:
        conn.close()
    return [
        ("overview", "/", "Overview" + SUFFIX),
        ("sessions", "/sessions/", "Sessions" + SUFFIX),
        ("session", f"/sessions/{session_id}/", title + SUFFIX),
        ("search", "/search/?q=backup", "Search: backup" + SUFFIX),
        ("messages", "/messages/", "Messages" + SUFFIX),
        ("insights", "/insights/", "Insights" + SUFFIX),
        ("sql", "/sql/?query=stats-per-channel", "Statistics per channel · SQL console" + SUFFIX),
    ]


# Compared with the viewport asked for: a phone browser widens its layout viewport to fit
# content that overflows, so window.innerWidth would hide the problem.
PAGE_WIDTH_JS = "() => document.documentElement.scrollWidth"


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_main_pages_render_cleanly_in_both_themes_and_on_a_phone(browse, demo, scheme, device):
    viewport = DESKTOP if device == "desktop" else PHONE
    options = {"viewport": viewport, "color_scheme": scheme}
    if device == "phone":
        options.update(is_mobile=True, has_touch=True, device_scale_factor=2)
    page = browse.page(role="staff", **options)
    for name, url, title in tour(demo):
        response = page.goto(url)
        assert response.status == 200, f"{url}: {response.status}"
        expect(page).to_have_title(title)
        # The page itself never scrolls sideways: wide tables scroll inside their box.
        overflow = page.evaluate(PAGE_WIDTH_JS) - viewport["width"]
        assert overflow <= 0, f"{url} is {overflow}px wider than a {device} screen"
        check_contrast(page)
        if (scheme, device) == ("light", "desktop"):
            check_accessibility_basics(page, title)
        screenshot(page, f"{name}-{scheme}-{device}")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_sign_in_and_error_pages_say_where_you_are(browse, facts, scheme):
    page = browse.page(role=None, color_scheme=scheme)
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    check_accessibility_basics(page, "Sign in" + SUFFIX, nav=False)
    expect(page.locator("body")).not_to_contain_text(facts.path)  # nothing about the server
    check_contrast(page)
    # The user name has focus on arrival; Tab goes on to the password and the button.
    expect(page.get_by_label("Username")).to_be_focused()
    check_focus_visible(page, presses=2)
    screenshot(page, f"sign-in-{scheme}-desktop")

    page = browse.page(role="analyst", color_scheme=scheme)
    browse.problems.allow(r"status of 404")
    response = page.goto("/sessions/no-such-session/")
    assert response.status == 404
    check_accessibility_basics(page, "Not found" + SUFFIX)
    expect(page.locator("main")).to_contain_text("No session with this id")
    screenshot(page, f"not-found-{scheme}-desktop")


def test_keyboard_focus_is_visible_and_skip_link_comes_first(browse, demo):
    page = browse.page(role="analyst")
    page.goto("/sessions/")
    check_focus_visible(page, presses=6)

    # The skip link is the first stop, shows itself, and moves focus to the content.
    page.goto("/sessions/")
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to content")
    expect(skip).to_be_focused()
    expect(skip).to_be_in_viewport()
    page.keyboard.press("Enter")
    expect(page.locator("main")).to_be_focused()


def test_filters_fold_behind_a_button_on_a_phone(browse, facts):
    page = browse.page(role="analyst", viewport=PHONE, is_mobile=True, has_touch=True)
    page.goto("/sessions/?source=cli")
    toggle = page.get_by_role("button", name="Filters (1 on)")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(page.get_by_role("checkbox", name="telegram")).to_be_hidden()
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    page.get_by_role("checkbox", name="telegram").check()
    page.get_by_role("button", name="Filter", exact=True).click()
    expect(page).to_have_url(re.compile(r"source=cli&source=telegram|source=telegram&source=cli"))
    expect(page.get_by_role("button", name="Filters (2 on)")).to_be_visible()

    # The search form keeps its box in view and folds the other options.
    page.goto("/search/?q=backup&source=cli")
    expect(page.get_by_label("Search", exact=True)).to_be_visible()
    expect(page.get_by_role("checkbox", name="telegram")).to_be_hidden()
    more = page.get_by_role("button", name="More options (1 on)")
    more.click()
    expect(more).to_have_attribute("aria-expanded", "true")
    expect(page.get_by_role("checkbox", name="telegram")).to_be_visible()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_text_and_links_have_enough_contrast_on_every_surface(browse, facts, scheme):
    """The text/background and link colours of the main surfaces, per theme (WCAG AA)."""
    page = browse.page(role="analyst", color_scheme=scheme)
    page.goto(f"/sessions/{facts.tool_session_id}/")
    ratios = check_contrast(page)
    assert ratios["text"] >= 7, ratios  # body text aims for AAA
    # The theme follows the system: a dark page in dark mode, a light one otherwise.
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    luminance = relative_luminance(parse_rgb(background))
    assert luminance < 0.05 if scheme == "dark" else luminance > 0.8, (scheme, background)
    # Muted text, badges and the message bubbles are where contrast usually slips.
    pairs = page.evaluate(
        """() => {
          const out = [];
          const bgOf = (el) => {
            for (let n = el; n; n = n.parentElement) {
              const c = getComputedStyle(n).backgroundColor;
              if (c && c !== 'rgba(0, 0, 0, 0)' && c !== 'transparent') return c;
            }
            return getComputedStyle(document.body).backgroundColor;
          };
          for (const sel of ['.muted', '.age', '.badge.source', '.msg.role-user .body',
                             '.msg.role-tool .body', '.site-footer', '.store-banner',
                             '.crumbs a', '.tool-badge', 'button', '.msg-head .permalink']) {
            const el = document.querySelector(sel);
            if (el) out.push([sel, getComputedStyle(el).color, bgOf(el)]);
          }
          return out;
        }"""
    )
    low = [
        (sel, round(contrast_ratio(parse_rgb(fg), parse_rgb(bg)), 2), fg, bg)
        for sel, fg, bg in pairs
        if contrast_ratio(parse_rgb(fg), parse_rgb(bg)) < 4.5
    ]
    assert len(pairs) >= 8
    assert not low, low
