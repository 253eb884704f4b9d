"""The team's annotations with several profiles: each profile's own, wherever they are shown.

Two profiles of the test home hold a session of the same id (``SHARED_ID``): a tag given to one
must show on that profile's row, page, export and search hits only.
"""

from __future__ import annotations

import csv
import io

import pytest

from annotations_app import targets
from annotations_app.models import SessionTag, Tag
from hermes_explorer import stores
from hermes_explorer.stores import REGISTRY
from profiles_app.links import store_reverse
from sessions_app.links import TranscriptLinks
from tests.profile_home import PROFILE_DBS, SHARED_ID, build_home, serve_home

pytestmark = [pytest.mark.django_db(databases=PROFILE_DBS), pytest.mark.render_context]

RED = 'class="badge tag tag-red"'
BLUE = 'class="badge tag tag-blue"'


# Sessions per profile of the module's HERMES_HOME (the shared ``home`` fixture).
HOME_SESSIONS_PER_PROFILE = 4


@pytest.fixture
def tagged(home, staff_client):
    """``incident`` (red) on the support profile's SHARED_ID, ``fine`` (blue) on default's."""
    incident = Tag.objects.create(name="incident", colour="red")
    fine = Tag.objects.create(name="fine", colour="blue")
    for profile, tag in (("support", incident), ("default", fine)):
        url = f"/p/{profile}/annotations/sessions/{SHARED_ID}/tags"
        assert staff_client.post(url, {"tag": tag.pk}).status_code == 302
    return incident, fine


def table_rows(body: str) -> list[str]:
    tbody = body.split("<tbody", 1)[1].split("</tbody>", 1)[0]
    return tbody.split("<tr")[1:]


def row_of(body: str, profile: str, session_id: str) -> str:
    link = f'href="/p/{profile}/sessions/{session_id}/"'
    found = [row for row in table_rows(body) if link in row]
    assert len(found) == 1, (profile, session_id)
    return found[0]


def test_the_store_key_is_the_profile_name_with_several_stores(home):
    for store in stores.all_stores():
        with stores.using(store):
            assert targets.current_store() == store.name


def test_the_store_key_is_the_file_name_with_one_store(current_store):
    from hermes_explorer import store

    assert not stores.multi()
    assert targets.current_store() == store.name()


def test_annotations_are_keyed_by_profile(tagged, staff_client):
    keys = set(SessionTag.objects.values_list("store", "session_id", "tag__name"))
    assert keys == {("support", SHARED_ID, "incident"), ("default", SHARED_ID, "fine")}
    support = staff_client.get(f"/p/support/sessions/{SHARED_ID}/").content.decode()
    default = staff_client.get(f"/p/default/sessions/{SHARED_ID}/").content.decode()
    assert RED in support and BLUE not in support
    assert BLUE in default and RED not in default


def test_a_list_over_every_profile_shows_each_rows_own_tags(tagged, staff_client):
    response = staff_client.get("/sessions/?sort=started_at")
    assert response.status_code == 200
    body = response.content.decode()
    support, default = row_of(body, "support", SHARED_ID), row_of(body, "default", SHARED_ID)
    assert RED in support and BLUE not in support
    assert BLUE in default and RED not in default
    # The Profile column names each row's profile.
    assert ">support</td>" in support and ">default</td>" in default
    # The tag facets count the sessions of every profile of the list.
    assert [(t.name, n) for t, n in response.context["tag_facets"]] == [
        ("fine", 1),
        ("incident", 1),
    ]
    facets = staff_client.get("/sessions/?profile=support").context["tag_facets"]
    assert [(t.name, n) for t, n in facets] == [("fine", 0), ("incident", 1)]
    # Bulk tagging names sessions by id alone: left to a profile's own list.
    assert 'form="bulk-tag"' not in body
    assert 'form="bulk-tag"' in staff_client.get("/p/support/sessions/").content.decode()


def test_a_tag_filter_over_every_profile_finds_each_profiles_sessions(tagged, staff_client):
    incident, fine = tagged
    response = staff_client.get("/sessions/?tag=incident")
    rows = [(r.record.store_name, r.record.id) for r in response.context["table"].rows]
    assert rows == [("support", SHARED_ID)]
    response = staff_client.get("/sessions/?tag=fine&profile=support")
    assert list(response.context["table"].rows) == []
    response = staff_client.get(f"/p/default/sessions/?tag={fine.name}")
    assert [r.record.id for r in response.context["table"].rows] == [SHARED_ID]


def test_the_export_over_every_profile_has_the_annotation_columns(tagged, staff_client):
    response = staff_client.get("/sessions/?_export=csv")
    assert response.status_code == 200
    text = b"".join(response.streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0])[0] == "profile" and "tags" in rows[0]
    tags = {(r["profile"], r["id"]): r["tags"] for r in rows}
    assert tags[("support", SHARED_ID)] == "incident"
    assert tags[("default", SHARED_ID)] == "fine"
    assert tags[("coder", next(iter(k[1] for k in tags if k[0] == "coder")))] == ""
    filtered = staff_client.get("/sessions/?_export=csv&tag=incident")
    text = b"".join(filtered.streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["profile"], r["id"], r["tags"]) for r in rows] == [
        ("support", SHARED_ID, "incident")
    ]


def test_search_hits_over_every_profile_show_their_profile_and_own_tags(tagged, staff_client):
    response = staff_client.get("/search/?q=shared")
    assert response.status_code == 200
    body = response.content.decode()
    hits = body.split('<li class="hit')[1:]
    by_profile = {}
    for hit in hits:
        for profile in ("support", "default"):
            if f'title="Profile">{profile}</span>' in hit:
                by_profile[profile] = hit
    assert set(by_profile) == {"support", "default"}
    assert RED in by_profile["support"] and BLUE not in by_profile["support"]
    assert BLUE in by_profile["default"] and RED not in by_profile["default"]
    assert f'href="/p/support/sessions/{SHARED_ID}/messages/' in by_profile["support"]


@pytest.mark.parametrize("session_id", ["abc", "2026_x-1", "a b", "é", "a/b"])
def test_links_into_a_store_are_the_links_store_reverse_gives(home, session_id):
    from django.urls import NoReverseMatch

    links = TranscriptLinks()
    for store in [None, *stores.all_stores()]:
        try:
            expected = store_reverse("sessions:detail", [session_id], store)
        except NoReverseMatch:
            expected = None
        assert links.session(session_id, store) == expected
        try:
            expected = store_reverse("sessions:message", [session_id, 7], store)
        except NoReverseMatch:
            expected = None
        assert links.message(session_id, 7, store) == expected


def test_a_tag_filter_over_profiles_of_one_layout_finds_each_ones_sessions(
    settings, tmp_path, request, staff_client
):
    """Stores of the same layout share what the page builds once per layout, never each
    other's selection."""
    facts = build_home(
        tmp_path / ".hermes", per=3, profiles={"default": "current", "twin": "current"}
    )
    serve_home(settings, facts.home, request)
    try:
        tag = Tag.objects.create(name="both", colour="red")
        tagged = {"default": facts.sessions["default"][0][0], "twin": facts.sessions["twin"][2][0]}
        for profile, session_id in tagged.items():
            url = f"/p/{profile}/annotations/sessions/{session_id}/tags"
            assert staff_client.post(url, {"tag": tag.pk}).status_code == 302
        response = staff_client.get("/sessions/?tag=both")
        rows = {(r.record.store_name, r.record.id) for r in response.context["table"].rows}
        assert rows == set(tagged.items())
    finally:
        REGISTRY.rescan()


def test_a_tag_filter_over_profiles_says_when_a_profile_names_too_many(
    tagged, staff_client, monkeypatch, home
):
    from annotations_app import listing

    incident, _fine = tagged
    other = home.sessions["support"][0][0]
    url = f"/p/support/annotations/sessions/{other}/tags"
    assert staff_client.post(url, {"tag": incident.pk}).status_code == 302
    monkeypatch.setattr(listing, "MERGED_IDS_CAP", 1)
    response = staff_client.get("/sessions/?tag=incident")
    assert len(list(response.context["table"].rows)) == 1
    assert any("only the first 1 sessions of a profile" in n for n in response.context["notes"])
    # A profile's own list has no such limit.
    own = staff_client.get("/p/support/sessions/?tag=incident")
    assert len(list(own.context["table"].rows)) == 2
    assert not any("only the first" in n for n in own.context["notes"])
