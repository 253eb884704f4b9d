"""How many statements each list page sends to the state.db, pinned.

A page that starts issuing a query per row, or a second count, shows up here first.  Counts are
taken on a warm page (the facet lists and capped counts are cached per file signature), which
is what a person paging through a list gets; the first view of a file costs the cached ones
once more.
"""

from __future__ import annotations

import pytest
from django.db import connections
from django.test.utils import CaptureQueriesContext

pytestmark = pytest.mark.django_db(databases=["default", "hermes"])


def _count(client, url: str) -> int:
    assert client.get(url).status_code == 200  # warm the caches
    with CaptureQueriesContext(connections["hermes"]) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries)


PAGES = {
    "overview": "/",
    "sessions": "/sessions/",
    "sessions, one source": "/sessions/?source=telegram&sort=-started_at",
    "sessions by source": "/sessions/?sort=source",
    "sessions, filtered": "/sessions/?source=cli&min_cost=0&started_after=2020-01-01",
    "messages": "/messages/",
    "messages, role": "/messages/?role=user",
    "search, a word": "/search/?q={rare}",
    "search, common word": "/search/?q={common}",
    "old sessions table": "/state/sessions?message_count__gte=4",
    "old messages table": "/state/messages?id__gt=400&_size=5",
}
# Statements on a warm page: the overview's latest sessions and the two look-ups of what is
# running now (its figures, sessions per source among them, are cached per file signature); a list
# page's rows (its capped count is cached); search's index state (current files keep it in
# ``state_meta``), the newest id (where unindexed rows would start) and one batch of candidates
# newest first (matched and ranked again on their redacted text, in memory); the old tables'
# page (its count is cached).
EXPECTED = {
    "overview": 3,
    "sessions": 1,
    "sessions, one source": 1,
    "sessions by source": 1,
    "sessions, filtered": 1,
    "messages": 1,
    "messages, role": 1,
    "search, a word": 3,
    "search, common word": 3,
    "old sessions table": 1,
    "old messages table": 1,
}
WITHOUT_STATE_META = {"search, a word": 2, "search, common word": 2}


@pytest.mark.parametrize("page", list(PAGES))
def test_list_page_query_counts_are_pinned(staff_client, store, page):
    url = PAGES[page].format(rare=store.rare_word, common=store.common_word)
    expected = EXPECTED[page]
    if store.shape != "current":
        expected = WITHOUT_STATE_META.get(page, expected)
    assert _count(staff_client, url) == expected


@pytest.mark.render_context
def test_a_later_keyset_page_costs_what_the_first_does(staff_client, store):
    url = "/messages/?size=5"
    for _ in range(3):  # three pages in
        cursor = staff_client.get(url).context["page"].next_cursor
        assert cursor
        url = f"/messages/?size=5&cursor={cursor}"
    assert _count(staff_client, url) == 1


def test_a_session_page_query_count_is_pinned(staff_client, store):
    url = f"/sessions/{store.big_session_id}/"
    # The session, the transcript page (its count is cached), every recorded field; then, on
    # files that record them, the usage rows and the lineage up and down.
    counts = {"current": 6, "legacy": 6, "doc": 3}
    assert _count(staff_client, url) == counts[store.shape]


@pytest.mark.render_context
def test_a_transcript_is_counted_once_while_the_file_is_unchanged(staff_client, tmp_path):
    import sqlite3

    from tests.builders import StateDB
    from tests.conftest import use_store

    path = tmp_path / "transcript-count.db"
    db = StateDB.create(path, "current")
    db.session("s1", source="cli", title="Counted")
    for n in range(3):
        db.message("s1", "user", f"message {n}")
    db.close()
    use_store(path)

    def counts_and_total() -> tuple[int, int]:
        with CaptureQueriesContext(connections["hermes"]) as queries:
            response = staff_client.get("/sessions/s1/")
        assert response.status_code == 200
        counted = sum("COUNT(*)" in q["sql"].upper() for q in queries)
        return counted, response.context["transcript"].total

    assert counts_and_total() == (1, 3)
    assert counts_and_total() == (0, 3)
    with sqlite3.connect(path) as conn:  # Hermes appends a message: the signature changes
        conn.execute(
            "INSERT INTO messages (session_id, role, content, timestamp) "
            "VALUES ('s1', 'assistant', 'one more', 2.0)"
        )
    assert counts_and_total() == (1, 4)
