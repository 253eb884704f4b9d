"""The SQL console in a real browser: run a query, and see plainly when rows were cut or the
query ran out of time."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import E2E_DBS

pytestmark = pytest.mark.django_db(transaction=True, databases=E2E_DBS)

COUNT = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n{limit}) SELECT {what} FROM n"
)


def run(page, sql: str) -> None:
    page.get_by_label("SQL", exact=True).fill(sql)
    page.get_by_role("button", name="Run").click()


def test_staff_run_a_query_and_see_cut_and_timed_out_results(browse, facts):
    page = browse.page(role="staff")
    # A query that fails answers 400, which the console logs; the page says why.
    browse.problems.allow(r"status of 400")
    page.goto("/sql/")
    expect(page).to_have_title("SQL console · Hermes Explorer")

    run(page, "SELECT id, source FROM sessions WHERE source = 'telegram' ORDER BY started_at DESC")
    # Run is a POST; the result offers a link that fills the form in again.
    expect(page.get_by_role("link", name="Link to this query")).to_have_attribute(
        "href", re.compile(r"^/sql/\?sql=SELECT")
    )
    table = page.locator("table.sql-table")
    expect(table.locator("tbody tr")).to_have_count(3)
    expect(table.locator("tbody tr").first).to_contain_text("telegram")
    expect(page.locator(".sql-results [role=status]")).to_contain_text("3 rows")

    run(page, COUNT.format(limit=" WHERE i < 1500", what="i"))
    note = page.locator(".sql-results .truncated")
    expect(note).to_be_visible()
    expect(note).to_contain_text("only the first 1,000 rows")
    expect(table.locator("tbody tr")).to_have_count(1000)

    run(page, COUNT.format(limit="", what="count(*)"))
    error = page.get_by_role("alert")
    expect(error).to_be_visible()
    expect(error).to_contain_text(re.compile(r"time|long|limit", re.I))
    expect(page.locator("table.sql-table")).to_have_count(0)


def test_an_analyst_has_no_console(browse, facts):
    page = browse.page(role="analyst")
    browse.problems.allow(r"status of 403")
    page.goto("/sessions/")
    nav = page.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link", name="SQL")).to_have_count(0)
    response = page.goto("/sql/")
    assert response.status == 403
    expect(page).to_have_title("Not allowed for your role · Hermes Explorer")
