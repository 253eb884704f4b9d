"""Search over every profile: hits merged newest first, relevance interleaved, filtered."""

from __future__ import annotations

import pytest

from tests.profile_home import PROFILE_DBS
from tests.test_profile_lists import direct

pytestmark = [pytest.mark.django_db(databases=PROFILE_DBS), pytest.mark.render_context]


# Sessions per profile of the module's HERMES_HOME (the shared ``home`` fixture).
HOME_SESSIONS_PER_PROFILE = 12


def hits_of(response) -> list[tuple[str, int]]:
    return [(hit.store.name, hit.id) for hit in response.context["result"].hits]


def test_newest_first_merges_every_profile_by_time(home, staff_client):
    rows = direct(home, "SELECT id, timestamp FROM messages WHERE content LIKE '%common%'")
    expected = [(p, i) for p, i, _ts in sorted(rows, key=lambda r: (-r[2], r[0], -r[1]))]
    url = "/search/?q=common&sort=newest"
    seen, response = [], staff_client.get(url)
    while True:
        seen += hits_of(response)
        following = response.context["result"].next_pos
        if not following:
            break
        response = staff_client.get(f"{url}&pos={following}")
    assert seen == expected
    assert len(seen) > 20


def test_a_profile_word_is_found_in_that_profile_only_and_links_into_it(home, staff_client):
    response = staff_client.get("/search/?q=onlycoder")
    hits = response.context["result"].hits
    assert hits and {hit.store.name for hit in hits} == {"coder"}
    body = response.content.decode()
    assert f"/p/coder/sessions/{hits[0].session_id}/messages/{hits[0].id}/" in body
    followed = staff_client.get(hits[0].url, follow=True)
    assert followed.status_code == 200
    assert "onlycoder" in followed.content.decode()


def test_best_match_interleaves_the_profiles_rank_by_rank(home, staff_client):
    response = staff_client.get("/search/?q=common")
    result = response.context["result"]
    if result.sort != "rank":
        pytest.skip("a store could not rank: newest first for all")
    names = [hit.store.name for hit in result.hits]
    # Four profiles share a page of 20: five each, round-robin.
    assert len(names) == 20
    assert all(names.count(p) == 5 for p in set(names)) and len(set(names)) == 4
    assert len(set(names[:4])) == 4
    assert result.next_page == 2
    second = staff_client.get("/search/?q=common&page=2").context["result"].hits
    assert not {(h.store.name, h.id) for h in second} & {(h.store.name, h.id) for h in result.hits}


def test_the_profile_filter_narrows_the_search(home, staff_client):
    response = staff_client.get("/search/?q=common&profile=cron&profile=support&sort=newest")
    assert {name for name, _ in hits_of(response)} == {"cron", "support"}
    inside = staff_client.get("/p/cron/search/?q=common")
    assert inside.context["merged_profiles"] is None
    assert all(hit.store is None for hit in inside.context["result"].hits)
