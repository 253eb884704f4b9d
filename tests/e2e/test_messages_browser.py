"""The message table in a real browser: filters in the URL, links into transcripts, copying
a message id."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import E2E_DBS

pytestmark = pytest.mark.django_db(transaction=True, databases=E2E_DBS)


def test_filter_messages_and_open_one_in_its_transcript(browse, facts):
    read_file = next(p for p in facts.tool_pairs if p.name == "read_file")
    page = browse.page(role="analyst")
    page.goto("/messages/")
    expect(page).to_have_title("Messages · Hermes Explorer")
    page.get_by_label("Role").select_option("tool")
    page.get_by_label("Tool name").fill("read_file")
    page.get_by_role("button", name="Filter", exact=True).click()
    expect(page).to_have_url(re.compile(r"role=tool"))
    expect(page).to_have_url(re.compile(r"tool_name=read_file"))
    rows = page.locator("table.data-table tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(f"#{read_file.tool_message_id}")
    expect(rows.first).to_contain_text("rsync")

    # Copy the id: the button says so and the clipboard has it.
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    rows.first.hover()
    copy = rows.first.get_by_role("button", name=f"Copy message id {read_file.tool_message_id}")
    copy.click()
    expect(copy).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == str(read_file.tool_message_id)

    # The session link leads to the transcript.
    rows.first.get_by_role("link", name="Tidy the backup scripts").click()
    expect(page).to_have_url(re.compile(rf"/sessions/{facts.tool_session_id}/"))


def test_messages_of_one_session_from_the_url(browse, facts):
    page = browse.page(role="analyst")
    page.goto(f"/messages/?session_id={facts.xss_session_id}&role=")
    expect(page.locator("table.data-table tbody tr")).to_have_count(4)
    # Hostile content is shown as text (a script would also be a console error here).
    expect(page.locator("main")).to_contain_text("<img src=x onerror=alert(1)>")


def test_no_matching_message_says_what_to_do(browse, facts):
    page = browse.page(role="analyst")
    page.goto("/messages/?tool_name=no-such-tool")
    expect(page.locator("table.data-table tbody")).to_contain_text("Loosen a filter or reset them")
    page.get_by_role("link", name="Reset").click()
    expect(page.locator("table.data-table tbody tr")).not_to_have_count(0)
