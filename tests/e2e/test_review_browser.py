"""A review journey in a real browser: define a score, score sessions through a review queue
made from a session list, and download that list as a chat-format dataset."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest
from playwright.sync_api import expect

from annotations_app.models import SessionScore
from tests.e2e.conftest import E2E_DBS, check_accessibility_basics
from tests.e2e.test_axe_browser import serious

pytestmark = pytest.mark.django_db(transaction=True, databases=E2E_DBS)


def test_define_a_score_review_two_sessions_and_download_the_dataset(browse, facts, tmp_path):
    from axe_playwright_python.sync_playwright import Axe

    page = browse.page("staff")
    page.goto("/review/scores/")
    page.get_by_label("Name").fill("quality")
    page.get_by_label("Values").fill("good, bad")
    page.get_by_role("button", name="Create score").click()
    expect(page.locator(".scores-table")).to_contain_text("quality")
    assert not serious(Axe().run(page))

    conn = sqlite3.connect(f"file:{facts.path}?mode=ro", uri=True)
    try:
        order = [
            r[0]
            for r in conn.execute(
                "SELECT id FROM sessions WHERE source = 'telegram' AND COALESCE(archived, 0) = 0 "
                "AND COALESCE(hidden, 0) = 0 AND COALESCE(auto_archived, 0) = 0 "
                "ORDER BY started_at DESC, id DESC"
            )
        ]
    finally:
        conn.close()
    assert len(order) >= 2

    page.goto("/sessions/?source=telegram")
    page.get_by_role("button", name="Review these").click()
    expect(page).to_have_url(re.compile(rf"/review/sessions/{re.escape(order[0])}/\?source="))
    expect(page.locator(".review-position")).to_have_text(f"1 of {len(order)}")
    group = page.get_by_role("group", name="quality")
    group.get_by_role("button", name="good").click()
    expect(
        page.get_by_role("group", name="quality").get_by_role("button", name="good")
    ).to_have_attribute("aria-pressed", "true")
    check_accessibility_basics(page, re.compile("Hermes Explorer"))
    assert not serious(Axe().run(page))

    page.get_by_role("link", name="Next to review").click()
    expect(page.locator(".review-position")).to_have_text(f"2 of {len(order)}")
    page.get_by_role("group", name="quality").get_by_role("button", name="bad").click()
    expect(
        page.get_by_role("group", name="quality").get_by_role("button", name="bad")
    ).to_have_attribute("aria-pressed", "true")
    scored = dict(SessionScore.objects.values_list("session_id", "value"))
    assert scored == {order[0]: "good", order[1]: "bad"}

    page.get_by_role("link", name="Back to the list").click()
    expect(page).to_have_url(re.compile(r"/sessions/\?source=telegram$"))
    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download as dataset").click()
    download = download_info.value
    assert download.suggested_filename.endswith(".jsonl")
    path = tmp_path / download.suggested_filename
    download.save_as(path)
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r["metadata"]["session_id"] for r in records] == order
    assert records[0]["metadata"]["scores"] == {"quality": {"good": 1}}
    assert records[1]["metadata"]["scores"] == {"quality": {"bad": 1}}
    assert all(
        m["role"] in {"system", "user", "assistant", "tool"} for r in records for m in r["messages"]
    )
