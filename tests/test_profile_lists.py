"""Session and message lists over every profile: merged order and paging, the filter."""

from __future__ import annotations

import re
import sqlite3

import pytest

from tests.profile_home import PROFILE_DBS, PROFILES, build_home, serve_home

pytestmark = [pytest.mark.django_db(databases=PROFILE_DBS), pytest.mark.render_context]


# Sessions per profile of the module's HERMES_HOME (the shared ``home`` fixture).
HOME_SESSIONS_PER_PROFILE = 30


def direct(home, sql: str, profiles=None) -> list[tuple]:
    """``(profile, *row)`` of ``sql`` in every profile's file, read by plain sqlite3."""
    found = []
    for profile in profiles or PROFILES:
        conn = sqlite3.connect(f"file:{home.path(profile)}?mode=ro", uri=True)
        found += [(profile, *row) for row in conn.execute(sql)]
        conn.close()
    return found


def with_cursor(url: str, cursor: str) -> str:
    return url + ("&" if "?" in url else "?") + "cursor=" + cursor


def walk(client, url: str, *, backwards: bool = False) -> tuple[list[list], list]:
    """Every page of ``url`` following Next; then (optionally) back with Previous."""
    pages, responses = [], []
    response = client.get(url)
    while True:
        assert response.status_code == 200
        responses.append(response)
        page = response.context["page"]
        pages.append([(row.store.name, row.id) for row in page.rows])
        if not page.next_cursor:
            break
        response = client.get(with_cursor(url, page.next_cursor))
    if backwards:
        back = []
        page = responses[-1].context["page"]
        while page.prev_cursor:
            response = client.get(with_cursor(url, page.prev_cursor))
            page = response.context["page"]
            back.append([(row.store.name, row.id) for row in page.rows])
        return pages, back
    return pages, responses


def test_the_session_list_merges_every_profile_newest_first(home, staff_client):
    expected = sorted(
        direct(home, "SELECT id, started_at FROM sessions"),
        key=lambda r: (-r[2], _desc(r[1]), r[0]),
    )
    pages, back = walk(staff_client, "/sessions/", backwards=True)
    assert [len(p) for p in pages] == [50, 50, len(expected) - 100]
    assert [row for page in pages for row in page] == [(p, sid) for p, sid, _ in expected]
    # Previous walks the same pages back.
    assert back == pages[:-1][::-1]


def test_the_oldest_first_order_merges_too(home, staff_client):
    expected = sorted(
        direct(home, "SELECT id, started_at FROM sessions"), key=lambda r: (r[2], r[1], r[0])
    )
    pages, _ = walk(staff_client, "/sessions/?sort=started_at")
    assert [row for page in pages for row in page] == [(p, sid) for p, sid, _ in expected]


def _desc(text: str) -> tuple:
    return tuple(-ord(c) for c in text)


def test_the_session_list_names_the_profile_and_links_into_it(home, staff_client):
    response = staff_client.get("/sessions/")
    body = response.content.decode()
    assert "Profile" in body
    for profile in PROFILES:
        assert re.search(rf"<td[^>]*>{profile}</td>", body), profile
    for profile, made in home.sessions.items():
        newest = max(made, key=lambda m: m[1])[0]
        assert f'href="/p/{profile}/sessions/{newest}/"' in body
    total = sum(len(m) for m in home.sessions.values())
    count = response.context["count"]
    assert count.value == total and not count.capped


def test_the_profile_filter_takes_several_values(home, staff_client):
    for url in ("/sessions/?profile=coder&profile=cron", "/sessions/?profile=coder,cron"):
        pages, responses = walk(staff_client, url)
        rows = [row for page in pages for row in page]
        assert {p for p, _ in rows} == {"coder", "cron"}
        assert len(rows) == len(home.sessions["coder"]) + len(home.sessions["cron"])
    response = staff_client.get("/sessions/?profile=nobody")
    assert "No profile named" in response.content.decode()
    assert response.context["page"].rows == []


def test_a_profile_page_is_the_single_store_list(home, staff_client):
    response = staff_client.get("/p/support/sessions/")
    assert response.context["merged_profiles"] is None
    ids = [row.id for row in response.context["page"].rows]
    assert set(ids) <= {sid for sid, _ in home.sessions["support"]}
    assert ">Profile<" not in response.content.decode()


def test_the_message_list_merges_every_profile_by_id(home, staff_client):
    expected = sorted(direct(home, "SELECT id FROM messages"), key=lambda r: (-r[1], r[0]))
    pages, back = walk(staff_client, "/messages/?size=37", backwards=True)
    assert [row for page in pages for row in page] == [(p, i) for p, i in expected]
    assert all(len(page) == 37 for page in pages[:-1])
    assert back == pages[:-1][::-1]
    body = staff_client.get("/messages/?size=5").content.decode()
    assert "/p/" in body and "/messages/" in body


def test_a_broken_store_is_named_and_the_others_are_listed(settings, tmp_path, request, client):
    from django.contrib.auth import get_user_model

    facts = build_home(tmp_path / "home", per=3, profiles={"default": "current", "ok": "v20"})
    bad = facts.home / "profiles" / "zbroken" / "state.db"
    bad.parent.mkdir(parents=True)
    bad.write_text("not a database " * 50)
    serve_home(settings, facts.home, request)
    user = get_user_model().objects.create_user("viewer", password="pw-viewer-123")
    client.force_login(user)
    response = client.get("/sessions/")
    assert response.status_code == 200
    body = response.content.decode()
    assert "Profile zbroken is unavailable" in body
    assert {row.store.name for row in response.context["page"].rows} == {"default", "ok"}


def test_rows_of_every_layout_render_in_the_merged_table(settings, tmp_path, request, staff_client):
    layouts = {"default": "doc", "legacy": "legacy", "newest": "current", "oldest": "v1"}
    facts = build_home(tmp_path / "home", per=4, profiles=layouts)
    serve_home(settings, facts.home, request)
    for url in ("/sessions/", "/messages/"):
        response = staff_client.get(url)
        body = response.content.decode()
        rows = response.context["page"].rows
        assert {row.store.name for row in rows} == set(layouts)
        assert body.count('<tr class="') == len(rows), url


def test_the_lists_work_when_the_default_profile_is_broken(settings, tmp_path, request, client):
    from django.contrib.auth import get_user_model

    facts = build_home(tmp_path / "home", per=3, profiles={"ok": "v20", "fine": "current"})
    (facts.home / "state.db").write_text("not a database " * 50)
    serve_home(settings, facts.home, request)
    user = get_user_model().objects.create_user("viewer2", password="pw-viewer-123")
    client.force_login(user)
    response = client.get("/sessions/")
    assert response.status_code == 200
    assert {row.store.name for row in response.context["page"].rows} == {"ok", "fine"}
    assert "Profile default is unavailable" in response.content.decode()
    assert client.get("/p/default/sessions/").status_code == 503


@pytest.mark.parametrize(
    "cursor",
    [
        "garbage",
        "eyJrIjoiLXN0YXJ0ZWRfYXQiLCJkIjoibiIsInMiOnsiZGVmYXVsdCI6W1tudWxsLG51bGxdLGZhbHNlXX19",
        "eyJrIjoiLXN0YXJ0ZWRfYXQiLCJkIjoibiIsInMiOlsxXX0",
        "eyJrIjoiLXN0YXJ0ZWRfYXQiLCJkIjoicCIsInMiOnsiY29kZXIiOjB9fQ",
    ],
)
def test_a_damaged_merged_cursor_gives_the_first_page_or_an_honest_one(home, staff_client, cursor):
    response = staff_client.get(f"/sessions/?cursor={cursor}")
    assert response.status_code == 200
    response = staff_client.get(f"/search/?q=common&pos={cursor}")
    assert response.status_code == 200


def test_a_store_that_breaks_after_its_keys_were_read_is_named(home, staff_client, monkeypatch):
    """The page's rows are read after the keys: a store failing then is left out with a note,
    the others are shown."""
    from hermes_explorer import store
    from sessions_app import listing

    real = listing.KeysetTableView.rows_queryset

    def rows_queryset(self):
        qs = real(self)
        if store.path() == str(home.path("support")):
            return qs.extra(where=["no_such_column = 1"])
        return qs

    monkeypatch.setattr(listing.KeysetTableView, "rows_queryset", rows_queryset)
    response = staff_client.get("/sessions/")
    assert response.status_code == 200
    assert "Profile support is unavailable" in response.content.decode()
    names = {row.store.name for row in response.context["page"].rows}
    assert "support" not in names and {"default", "coder", "cron"} <= names
