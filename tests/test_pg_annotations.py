"""The team's layer on a PostgreSQL profile: stars, tags, notes, scores and saved views are
kept in the app's database under the profile's name, as for a file.

The PostgreSQL profile ``team`` is the nasty fixture's schema; the SQLite profile ``file`` is
the very file that schema was loaded from, so every session id is in both: what is given to a
session of one profile shows on that profile's lists, filters and exports only.
"""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.db import connections

from annotations_app.models import Note, SavedView, Score, SessionScore, SessionTag, Star, Tag
from hermes_explorer import stores
from hermes_explorer.stores import REGISTRY
from tests.hermes_pg import hermes_pg  # noqa: F401
from tests.profile_home import allow_new_aliases

pytestmark = pytest.mark.django_db(databases="__all__")


@pytest.fixture
def both(hermes_pg, settings, request):  # noqa: F811
    """``file`` and ``team``: one store, as a SQLite file and as a PostgreSQL schema."""
    allow_new_aliases(
        request.getfixturevalue("monkeypatch"), request.getfixturevalue("django_db_blocker")
    )
    facts = hermes_pg.stores["current"]
    team = f"{hermes_pg.reader_url}?schema={hermes_pg.schema('current')}"
    settings.HERMES_STORES, settings.HERMES_SINGLE_FILE = f"file={facts.path},team={team}", False
    REGISTRY.rescan()
    assert [s.postgres for s in stores.all_stores()] == [False, True]
    yield facts
    for one in stores.all_stores():
        connections[one.alias].close()
    REGISTRY.rescan()


def ids(response) -> list:
    """(profile, id) of each row (a profile's own list names no profile on its rows)."""
    assert response.status_code == 200, response.status_code
    own = re.match(r"/p/(\w+)/", response.request["PATH_INFO"])
    return [
        (getattr(r.record, "store_name", own and own[1]), r.record.id)
        for r in response.context["table"].rows
    ]


def export(response) -> str:
    assert response.status_code == 200, response.status_code
    return b"".join(response.streaming_content).decode()


@pytest.mark.render_context
def test_tags_stars_notes_and_scores_of_a_schemas_session_are_that_profiles(both, staff_client):
    sid = both.session_ids[0]
    incident = Tag.objects.create(name="incident", colour="red")
    quality = Score.objects.create(name="quality", values=["good", "bad"])
    team = f"/p/team/annotations/sessions/{sid}"
    assert staff_client.post(f"{team}/tags", {"tag": incident.pk}).status_code == 302
    assert staff_client.post(f"{team}/star").status_code == 302
    assert staff_client.post(f"{team}/notes", {"text": "look at this one"}).status_code == 302
    score = f"/p/team/review/sessions/{sid}/score"
    assert staff_client.post(score, {"score": quality.pk, "value": "bad"}).status_code == 302
    # Kept under the profile's name, in the app's database.
    for model in (SessionTag, Star, SessionScore):
        assert list(model.objects.values_list("store", "session_id")) == [("team", sid)], model
    assert list(Note.objects.values_list("target__store", "target__session_id")) == [("team", sid)]

    # Lists by tag, star, note and score: the schema's session, never the file's twin.
    for query in ("tag=incident", "starred=true", "has_note=true", "score=quality:bad"):
        assert ids(staff_client.get(f"/p/team/sessions/?{query}")) == [("team", sid)], query
        assert ids(staff_client.get(f"/p/file/sessions/?{query}")) == [], query
        assert ids(staff_client.get(f"/sessions/?{query}")) == [("team", sid)], query

    # The exports carry the annotations of their own profile's row.
    rows = list(csv.DictReader(io.StringIO(export(staff_client.get("/sessions/?_export=csv")))))
    tags = {(r["profile"], r["id"]): r["tags"] for r in rows}
    assert tags[("team", sid)] == "incident" and tags[("file", sid)] == ""
    data = json.loads(export(staff_client.get("/p/team/sessions/?tag=incident&_export=json")))
    assert [(r["id"], r["tags"], r["starred"]) for r in data] == [(sid, "incident", 1)]
    lines = export(staff_client.get("/p/team/sessions/?_export=dataset&tag=incident"))
    metadata = [json.loads(line)["metadata"] for line in lines.splitlines()]
    assert [(m["profile"], m["session_id"]) for m in metadata] == [("team", sid)]
    assert export(staff_client.get("/p/file/sessions/?_export=dataset&tag=incident")) == ""

    # Removing the tag on the schema's session leaves nothing tagged anywhere.
    remove = f"{team}/tags/{incident.pk}/remove"
    assert staff_client.post(remove).status_code == 302
    assert ids(staff_client.get("/sessions/?tag=incident")) == []


@pytest.mark.render_context
def test_a_same_id_session_of_a_file_keeps_its_own_tags_beside_a_schema(both, staff_client):
    sid = both.session_ids[0]
    red = Tag.objects.create(name="red-team", colour="red")
    blue = Tag.objects.create(name="blue-file", colour="blue")
    for profile, tag in (("team", red), ("file", blue)):
        url = f"/p/{profile}/annotations/sessions/{sid}/tags"
        assert staff_client.post(url, {"tag": tag.pk}).status_code == 302
    assert set(SessionTag.objects.values_list("store", "tag__name")) == {
        ("team", "red-team"),
        ("file", "blue-file"),
    }
    assert ids(staff_client.get("/sessions/?tag=red-team")) == [("team", sid)]
    assert ids(staff_client.get("/sessions/?tag=blue-file")) == [("file", sid)]
    # A bulk tag from the schema's list tags the schema's sessions only.
    others = both.session_ids[1:3]
    bulk = staff_client.post(
        "/p/team/annotations/bulk-tag",
        {"tag": red.pk, "session": others, "next": "/p/team/sessions/"},
    )
    assert bulk.status_code == 302
    assert sorted(ids(staff_client.get("/p/team/sessions/?tag=red-team"))) == sorted(
        ("team", s) for s in [sid, *others]
    )
    assert ids(staff_client.get("/p/file/sessions/?tag=red-team")) == []


@pytest.mark.render_context
def test_a_saved_view_by_tag_opens_the_schemas_tagged_session(both, staff_client):
    sid = both.session_ids[0]
    tag = Tag.objects.create(name="saved", colour="red")
    url = f"/p/team/annotations/sessions/{sid}/tags"
    assert staff_client.post(url, {"tag": tag.pk}).status_code == 302
    saved = staff_client.post(
        "/annotations/views/", {"name": "saved", "url": "/sessions/?tag=saved"}
    )
    assert saved.status_code == 302
    view = SavedView.objects.get()
    assert ids(staff_client.get(view.url)) == [("team", sid)]
