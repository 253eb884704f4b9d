"""The main journeys once in French (a browser whose language is French): sign in, the
sessions, a transcript, search, insights, a spreadsheet download; the language switch; and
the layout on a phone with the longer French words."""

from __future__ import annotations

import csv
import re
import sqlite3

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import DESKTOP, E2E_DBS, PHONE, screenshot
from tests.roles_helpers import PASSWORD

pytestmark = pytest.mark.django_db(transaction=True, databases=E2E_DBS)

SUFFIX = " · Hermes Explorer"
FRENCH = {"locale": "fr-FR", "extra_http_headers": {"Accept-Language": "fr-FR,fr;q=0.9"}}
PAGE_WIDTH_JS = "() => document.documentElement.scrollWidth"


def a_session(demo_path) -> tuple[str, str]:
    conn = sqlite3.connect(f"file:{demo_path}?mode=ro", uri=True)
    try:
        return conn.execute(
            "SELECT id, title FROM sessions WHERE tool_call_count > 2 AND title IS NOT NULL"
            " AND message_count BETWEEN 10 AND 40 ORDER BY started_at DESC LIMIT 1"
        ).fetchone()
    finally:
        conn.close()


def test_sign_in_and_the_main_journeys_in_french(browse, demo, tmp_path):
    browse.user("analyst")
    page = browse.page(role=None, **FRENCH)
    page.goto("/sessions/")
    expect(page).to_have_title("Se connecter" + SUFFIX)
    page.get_by_label("Nom d’utilisateur").fill("e2e-analyst")
    page.get_by_label("Mot de passe").fill("pas le mot de passe")
    page.get_by_role("button", name="Se connecter").click()
    expect(page.get_by_role("alert")).to_contain_text("Saisissez un nom d’utilisateur")
    page.get_by_label("Mot de passe").fill(PASSWORD)
    page.get_by_role("button", name="Se connecter").click()

    # Sessions: French headers, French dates and numbers.
    expect(page).to_have_url(re.compile(r"/sessions/$"))
    expect(page.get_by_role("heading", name="Sessions", exact=True)).to_be_visible()
    table = page.locator("table.sessions-table")
    expect(table.locator("thead")).to_contain_text("Début")
    expect(table.locator("thead")).to_contain_text("Coût")
    expect(table.locator("tbody time").first).to_have_text(
        re.compile(r"^\d{2}/\d{2}/\d{4} \d{2}:\d{2}$")
    )
    expect(table.locator("tbody .age").first).to_contain_text("il y a")

    # A transcript.
    session_id, title = a_session(demo)
    page.goto(f"/sessions/{session_id}/")
    expect(page.get_by_role("heading", name="Transcription")).to_be_visible()
    expect(page.locator(".meta-grid")).to_contain_text("Jetons")
    page.locator("details.tool-call summary").first.click()
    expect(page.locator("details.tool-call h4").first).to_have_text("Arguments")

    # Search.
    page.get_by_role("searchbox", name="Rechercher dans tous les messages").fill("backup")
    page.keyboard.press("Enter")
    expect(page).to_have_title("Recherche : backup" + SUFFIX)
    expect(page.locator("ol.hits li").first).to_be_visible()

    # Insights: French words, weekday names in the heatmap.
    page.goto("/insights/?days=all")
    expect(page.get_by_role("heading", name="Analyses", exact=True)).to_be_visible()
    expect(page.locator("#activity-h")).to_have_text("Activité")
    expect(page.locator(".chart-heatmap svg")).to_contain_text("lun")

    # A spreadsheet download: semicolons and decimal commas.
    page.goto("/sessions/")
    with page.expect_download() as download_info:
        page.locator(".export-links").get_by_role("link", name="CSV pour Excel").first.click()
    path = tmp_path / download_info.value.suggested_filename
    download_info.value.save_as(path)
    with open(path, newline="", encoding="utf-8-sig") as handle:
        rows = list(csv.reader(handle, delimiter=";"))
    assert "started_at" in rows[0] and len(rows) > 1
    assert all(len(row) == len(rows[0]) for row in rows)

    page.get_by_role("button", name="Se déconnecter").click()
    expect(page).to_have_url(re.compile(r"/accounts/login/"))


def test_the_language_switch_is_remembered(browse, demo):
    page = browse.page(role="analyst", locale="en-US")
    page.goto("/sessions/")
    expect(page.get_by_role("heading", name="Sessions", exact=True)).to_be_visible()
    expect(page.get_by_role("button", name="Sign out")).to_be_visible()
    page.locator(".language-switch button[value=fr]").click()
    expect(page).to_have_url(re.compile(r"/sessions/$"))
    expect(page.get_by_role("button", name="Se déconnecter")).to_be_visible()
    page.goto("/insights/")
    expect(page.get_by_role("heading", name="Analyses", exact=True)).to_be_visible()
    page.locator(".language-switch button[value=en]").click()
    expect(page.get_by_role("heading", name="Insights", exact=True)).to_be_visible()


@pytest.mark.parametrize("device", ["phone", "desktop"])
def test_french_pages_fit_a_phone(browse, demo, device):
    viewport = PHONE if device == "phone" else DESKTOP
    options = {"viewport": viewport, **FRENCH}
    if device == "phone":
        options.update(is_mobile=True, has_touch=True, device_scale_factor=2)
    page = browse.page(role="staff", **options)
    session_id, _title = a_session(demo)
    urls = {
        "overview": "/",
        "sessions": "/sessions/",
        "session": f"/sessions/{session_id}/",
        "search": "/search/?q=backup",
        "messages": "/messages/",
        "insights": "/insights/",
        "failures": "/failures/",
        "live": "/live/",
        "tokens": "/accounts/tokens/",
        "sql": "/sql/?query=stats-per-channel",
    }
    for name, url in urls.items():
        response = page.goto(url)
        assert response.status == 200, f"{url}: {response.status}"
        assert page.locator("html").get_attribute("lang") == "fr"
        overflow = page.evaluate(PAGE_WIDTH_JS) - viewport["width"]
        assert overflow <= 0, f"{url} is {overflow}px wider than a {device} screen in French"
        screenshot(page, f"fr-{name}-{device}")
