"""Restricting users and groups to some profiles: nothing of another profile reaches them."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.test import Client

from tests.profile_home import PROFILE_DBS, SHARED_ID

pytestmark = [pytest.mark.django_db(databases=PROFILE_DBS), pytest.mark.render_context]

ALLOWED = {"coder", "cron"}
HIDDEN = {"default", "support"}


# Sessions per profile of the module's HERMES_HOME (the shared ``home`` fixture).
HOME_SESSIONS_PER_PROFILE = 6


@pytest.fixture
def alice(home, client):
    user = get_user_model().objects.create_user("alice", password="pw-alice-123")
    call_command("roles", "grant", "alice", "analyst")
    call_command("profiles", "restrict", "alice", "coder", "cron")
    client.force_login(user)
    return client


def ids_of(home, profiles) -> set[str]:
    return {sid for p in profiles for sid, _ in home.sessions[p]}


def test_lists_show_only_the_allowed_profiles(home, alice):
    response = alice.get("/sessions/")
    rows = response.context["page"].rows
    assert {row.store.name for row in rows} == ALLOWED
    assert response.context["count"].value == len(ids_of(home, ALLOWED))
    body = response.content.decode()
    for hidden in HIDDEN:
        assert f"/p/{hidden}/" not in body
        assert f"only{hidden}" not in body
        assert hidden not in [p.name for p in response.context["profiles"]]
    messages = alice.get("/messages/?size=1000")
    assert {row.store.name for row in messages.context["page"].rows} == ALLOWED


def test_a_hidden_profile_reads_as_one_that_does_not_exist(home, alice):
    for hidden in HIDDEN:
        assert alice.get(f"/p/{hidden}/sessions/").status_code == 404
        own = home.sessions[hidden][0][0]
        assert alice.get(f"/p/{hidden}/sessions/{own}/").status_code == 404
        assert alice.get(f"/sessions/{own}/").status_code == 404
        filtered = alice.get(f"/sessions/?profile={hidden}")
        assert filtered.context["page"].rows == []
        missing = alice.get("/sessions/?profile=nosuchprofile")
        assert filtered.context["notes"] == [
            n.replace("nosuchprofile", hidden) for n in missing.context["notes"]
        ]
    assert alice.get("/p/nosuchprofile/sessions/").status_code == 404
    # The id two hidden profiles share: no chooser, no hint.
    assert alice.get(f"/sessions/{SHARED_ID}/").status_code == 404


def test_search_finds_nothing_of_a_hidden_profile(home, alice):
    for hidden in HIDDEN:
        response = alice.get(f"/search/?q=only{hidden}")
        assert response.context["result"].hits == []
    response = alice.get("/search/?q=common&sort=newest")
    assert {hit.store.name for hit in response.context["result"].hits} <= ALLOWED
    assert response.context["result"].hits


def test_healthz_names_only_the_allowed_profiles(home, alice):
    listed = alice.get("/healthz").json()["stores"]
    assert {s["profile"] for s in listed} == ALLOWED


def test_the_old_datasette_urls_keep_the_default_profile_hidden(home, alice, staff_user):
    assert alice.get("/state/sessions.json").status_code == 404
    staff = Client()
    staff.force_login(staff_user)
    assert staff.get("/state/sessions.json").status_code == 200


def test_a_group_restriction_and_the_union_with_the_users_own(home, client):
    user = get_user_model().objects.create_user("bob", password="pw-bob-123")
    team = Group.objects.create(name="support-team")
    user.groups.add(team)
    call_command("roles", "grant", "bob", "analyst")
    call_command("profiles", "restrict", "--group", "support-team", "support")
    client.force_login(user)
    rows = client.get("/sessions/").context["page"].rows
    assert {row.store.name for row in rows} == {"support"}
    call_command("profiles", "restrict", "bob", "cron")
    rows = client.get("/sessions/").context["page"].rows
    assert {row.store.name for row in rows} == {"support", "cron"}


def test_unrestrict_gives_every_profile_back(home, alice):
    call_command("profiles", "unrestrict", "alice")
    rows = alice.get("/sessions/").context["page"].rows
    assert {row.store.name for row in rows} == ALLOWED | HIDDEN


def test_a_view_of_one_profile_is_saved_from_its_page_and_shown_to_who_may_see_it(home, alice):
    """"Save this view" on a ``/p/<profile>/`` page keeps that address; opening the view reads
    that profile.  A profile the user may not see (or that does not exist) cannot be named, and
    a view shared of it is not in their menu."""
    from annotations_app.models import SavedView

    page = "/p/coder/sessions/?sort=started_at"
    form = alice.get("/p/coder/annotations/views/", HTTP_REFERER=f"http://testserver{page}")
    assert form.context["form"].initial["url"] == page
    saved = alice.post(
        "/p/coder/annotations/views/", {"name": "coder's"}, HTTP_REFERER=f"http://testserver{page}"
    )
    assert saved.status_code == 302 and saved["Location"] == page
    assert SavedView.objects.get(name="coder's").url == page
    opened = alice.get(page)
    assert {row.id for row in opened.context["page"].rows} == ids_of(home, {"coder"})
    assert f'href="{page.replace("&", "&amp;")}">coder&#x27;s</a>' in opened.content.decode()
    for hidden in (*HIDDEN, "nosuchprofile"):
        refused = alice.post(
            "/annotations/views/", {"name": hidden, "url": f"/p/{hidden}/sessions/"}
        )
        assert refused.status_code == 400 and "No profile you may see" in refused.content.decode()
    boss = get_user_model().objects.create_superuser("boss", password="pw-boss-123")
    SavedView.objects.create(owner=boss, name="support's", url="/p/support/sessions/", shared=True)
    SavedView.objects.create(owner=boss, name="cron's", url="/p/cron/insights/", shared=True)
    menu = alice.get("/sessions/").content.decode()
    assert ">cron&#x27;s</a>" in menu and "support&#x27;s" not in menu
