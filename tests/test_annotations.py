"""Stars, tags, notes and saved views: the team's layer in the app's database, joined to the
sessions of the state.db a page at a time.  The oracle of the list filters is direct SQL on
both database files."""

from __future__ import annotations

import csv
import io
import sqlite3
from urllib.parse import urlencode

import pytest
from django.db import connections
from django.urls import reverse

from accounts_app.models import AuditEvent
from annotations_app import crossdb
from annotations_app.models import AnnotatedSession, Note, SavedView, SessionTag, Star, Tag
from hermes_explorer.routers import HermesRouter
from tests.builders import StateDB
from tests.conftest import use_store
from tests.roles_helpers import make_user

pytestmark = [
    pytest.mark.django_db(databases=["default", "hermes"]),
    pytest.mark.appdb,
    pytest.mark.render_context,
]

START = 1_750_000_000


def sql(path, query, params=()):
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return conn.execute(query, params).fetchall()


def app_sql(query, params=()):
    with connections["default"].cursor() as cur:
        cur.execute(query, params)
        return cur.fetchall()


@pytest.fixture
def many_store(tmp_path):
    """300 sessions, pairs sharing a start time, four sources, some archived."""
    path = tmp_path / "many.db"
    db = StateDB.create(path, "current")
    sources = ["telegram", "cli", "cron", "discord"]
    for i in range(300):
        db.session(
            f"s{i:03d}",
            source=sources[i % 4],
            title=f"chat {i}",
            started_at=START + (i // 2) * 60,
            archived=1 if i % 50 == 7 else 0,
        )
    db.close()
    use_store(path)
    yield path
    connections["hermes"].close()


def client_of(client, role, name=None):
    user = make_user(role, username=name or f"u-{role}")
    client.force_login(user)
    return client, user


@pytest.fixture
def analyst(client):
    return client_of(client, "analyst")


def make_tag(name="incident", colour="red"):
    return Tag.objects.create(name=name, colour=colour, description=f"{name} sessions")


def table_ids(response) -> list[str]:
    return [row.record.id for row in response.context["table"].rows]


def all_pages(client, params: dict) -> list[str]:
    ids, cursor = [], None
    for _ in range(500):
        query = dict(params, **({"cursor": cursor} if cursor else {}))
        response = client.get("/sessions/?" + urlencode(query, doseq=True))
        assert response.status_code == 200
        ids += table_ids(response)
        page = response.context["page"]
        if not page or not page.next_cursor:
            return ids
        cursor = page.next_cursor
    raise AssertionError("pagination did not end")


def tag_sessions(client, tag, ids):
    response = client.post(
        reverse("annotations:bulk_tag"), {"tag": tag.pk, "session": ids, "next": "/sessions/"}
    )
    assert response.status_code == 302
    return response


# Where the data lives ------------------------------------------------------------------------
def test_annotation_models_live_in_the_app_database_never_the_state_db():
    from django.db import router

    for model in (Tag, AnnotatedSession, SessionTag, Star, Note, SavedView):
        assert router.db_for_read(model) == "default"
        assert router.db_for_write(model) == "default"
        assert HermesRouter().allow_migrate("hermes", "annotations_app") is False
        assert router.allow_migrate_model("default", model)
    assert "annotations_app_sessiontag" in connections["default"].introspection.table_names()


def test_annotations_survive_a_store_reload(analyst, many_store):
    client, _ = analyst
    tag = make_tag()
    tag_sessions(client, tag, ["s010", "s011"])
    connections["hermes"].close()
    use_store(many_store)  # the same file opened again
    assert all_pages(client, {"tag": "incident"}) == ["s011", "s010"]


def test_annotations_of_a_session_hermes_deleted_are_listed_not_lost(analyst, many_store, tmp_path):
    client, _ = analyst
    tag = make_tag()
    tag_sessions(client, tag, ["s010", "s020"])
    client.post(reverse("annotations:add_note", args=["s020"]), {"text": "the Tuesday incident"})
    # Hermes prunes s020: the store at the same place no longer has it.
    with sqlite3.connect(many_store) as conn:
        conn.execute("DELETE FROM sessions WHERE id = 's020'")
    connections["hermes"].close()
    response = client.get(reverse("annotations:orphans"))
    assert response.status_code == 200
    body = response.content.decode()
    assert "s020" in body and "the Tuesday incident" in body
    assert "session no longer in the store" in body
    assert "s010" not in body
    assert Note.objects.filter(target__session_id="s020").exists()


# Stars -----------------------------------------------------------------------------------------
def test_a_viewer_stars_a_session_and_only_they_see_their_star(client, many_store):
    client, viewer = client_of(client, "viewer")
    response = client.post(reverse("annotations:star", args=["s005"]))
    assert response.status_code == 302
    assert Star.objects.filter(user=viewer, session_id="s005").exists()
    assert AuditEvent.objects.filter(action="star", session_id="s005", user=viewer).exists()
    page = client.get("/sessions/s005/").content.decode()
    assert 'aria-pressed="true"' in page
    assert all_pages(client, {"starred": "1"}) == ["s005"]
    other, _ = client_of(client.__class__(), "viewer", "other")
    assert all_pages(other, {"starred": "1"}) == []
    client.post(reverse("annotations:star", args=["s005"]))
    assert not Star.objects.filter(user=viewer).exists()
    assert AuditEvent.objects.filter(action="unstar").count() == 1


def test_a_session_not_in_the_store_cannot_be_annotated(analyst, many_store):
    client, _ = analyst
    assert client.post(reverse("annotations:star", args=["nope"])).status_code == 404
    assert not AnnotatedSession.objects.exists()


# Roles -----------------------------------------------------------------------------------------
def test_a_viewer_reads_tags_and_notes_but_cannot_tag_or_write(client, many_store):
    analyst = make_user("analyst", username="ana")
    tag = make_tag()
    from annotations_app import services, targets

    class R:
        user = analyst
        META = {"REMOTE_ADDR": "127.0.0.1"}

    target = targets.target_for("s001")
    services.add_tag(R, [target], tag)
    services.add_note(R, target, "read me")
    client, _ = client_of(client, "viewer")
    page = client.get("/sessions/s001/").content.decode()
    assert "read me" in page and "incident" in page
    assert "Add tag" not in page and "Add note" not in page
    assert (
        client.post(reverse("annotations:add_tag", args=["s001"]), {"tag": tag.pk}).status_code
        == 403
    )
    assert (
        client.post(reverse("annotations:add_note", args=["s001"]), {"text": "x"}).status_code
        == 403
    )
    assert (
        client.post(
            reverse("annotations:bulk_tag"), {"tag": tag.pk, "session": ["s001"]}
        ).status_code
        == 403
    )
    note = Note.objects.get()
    assert client.post(reverse("annotations:delete_note", args=[note.pk])).status_code == 403
    assert Note.objects.count() == 1


def test_analysts_tag_and_write_notes_and_only_authors_edit_them(client, many_store):
    tag = make_tag()
    author, _ = client_of(client, "analyst", "author")
    assert (
        author.post(reverse("annotations:add_tag", args=["s002"]), {"tag": tag.pk}).status_code
        == 302
    )
    author.post(reverse("annotations:add_note", args=["s002"]), {"text": "first"})
    note = Note.objects.get()
    assert AuditEvent.objects.filter(action="tag", session_id="s002").exists()
    assert AuditEvent.objects.filter(action="note", session_id="s002").exists()
    assert (
        author.post(
            reverse("annotations:edit_note", args=[note.pk]), {"text": "second"}
        ).status_code
        == 302
    )
    note.refresh_from_db()
    assert note.text == "second"
    assert AuditEvent.objects.filter(action="note_edit").exists()
    other, _ = client_of(client.__class__(), "analyst", "someone-else")
    assert (
        other.post(reverse("annotations:edit_note", args=[note.pk]), {"text": "mine"}).status_code
        == 403
    )
    assert other.post(reverse("annotations:delete_note", args=[note.pk])).status_code == 403
    staff, _ = client_of(client.__class__(), "staff", "boss")
    assert (
        staff.post(reverse("annotations:edit_note", args=[note.pk]), {"text": "x"}).status_code
        == 403
    )
    assert staff.post(reverse("annotations:delete_note", args=[note.pk])).status_code == 302
    assert not Note.objects.exists()
    assert AnnotatedSession.objects.get(session_id="s002").notes_count == 0
    assert AuditEvent.objects.filter(action="note_delete", user__username="boss").exists()


def test_only_staff_manage_the_tag_vocabulary(client, many_store):
    analyst, _ = client_of(client, "analyst")
    assert (
        analyst.post(reverse("annotations:tags"), {"name": "x", "colour": "red"}).status_code == 403
    )
    assert analyst.get(reverse("annotations:tags")).status_code == 200
    staff, _ = client_of(client.__class__(), "staff", "boss")
    response = staff.post(reverse("annotations:tags"), {"name": "Incident", "colour": "red"})
    assert response.status_code == 302
    tag = Tag.objects.get()
    assert AuditEvent.objects.filter(action="tag_vocabulary").exists()
    response = staff.post(
        reverse("annotations:tag_edit", args=[tag.pk]), {"name": "Outage", "colour": "blue"}
    )
    assert response.status_code == 302
    assert Tag.objects.get().name == "Outage"
    assert staff.post(reverse("annotations:tag_delete", args=[tag.pk])).status_code == 302
    assert not Tag.objects.exists()


# Bad input ---------------------------------------------------------------------------------------
def test_duplicate_tag_names_differing_by_case_get_a_message(client, many_store):
    staff, _ = client_of(client, "staff")
    make_tag("Incident")
    response = staff.post(reverse("annotations:tags"), {"name": "iNCIDENT", "colour": "red"})
    assert response.status_code == 400
    assert "already exists" in response.content.decode()
    assert Tag.objects.count() == 1


def test_over_long_tag_names_and_notes_get_a_message(client, many_store):
    staff, _ = client_of(client, "staff")
    response = staff.post(reverse("annotations:tags"), {"name": "x" * 41, "colour": "red"})
    assert response.status_code == 400
    assert "at most 40 characters" in response.content.decode()
    response = staff.post(reverse("annotations:add_note", args=["s001"]), {"text": "y" * 5001})
    assert response.status_code == 400
    assert "at most 5,000 characters" in response.content.decode()
    response = staff.post(reverse("annotations:add_note", args=["s001"]), {"text": "   "})
    assert response.status_code == 400
    assert "cannot be empty" in response.content.decode()
    assert not Note.objects.exists()


def test_html_and_script_in_notes_are_shown_escaped(analyst, many_store):
    client, _ = analyst
    client.post(
        reverse("annotations:add_note", args=["s001"]),
        {"text": '<script>alert("x")</script><b>bold</b>'},
    )
    page = client.get("/sessions/s001/").content.decode()
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;b&gt;" in page


def test_bulk_tag_with_nothing_selected_or_a_missing_tag_says_so(analyst, many_store):
    client, _ = analyst
    tag = make_tag()
    response = client.post(reverse("annotations:bulk_tag"), {"tag": tag.pk}, follow=True)
    assert "Select at least one session" in response.content.decode()
    response = client.post(
        reverse("annotations:bulk_tag"), {"tag": 999, "session": ["s001"]}, follow=True
    )
    assert "does not exist" in response.content.decode()
    response = client.post(
        reverse("annotations:bulk_tag"), {"tag": tag.pk, "session": ["s001", "ghost"]}, follow=True
    )
    assert "1 selected session is not in the store" in response.content.decode()


@pytest.mark.parametrize(
    "url",
    [
        "https://evil.example/sessions/",
        "//evil.example/sessions/",
        "javascript:alert(1)",
        "/\\evil.example",
        "sessions/",
        "/admin/",
        "/no/such/page/",
    ],
)
def test_a_saved_view_pointing_outside_the_app_gets_a_message(analyst, many_store, url):
    client, _ = analyst
    response = client.post(reverse("annotations:views"), {"name": "bad", "url": url})
    assert response.status_code == 400
    assert b"form-errors" in response.content or b"field-error" in response.content
    assert not SavedView.objects.exists()


def test_saved_views_personal_and_shared_are_in_the_navigation(client, many_store):
    owner, _ = client_of(client, "viewer", "owner")
    url = "/sessions/?source=cli&sort=started_at"
    assert owner.post(reverse("annotations:views"), {"name": "Mine", "url": url}).status_code == 302
    response = owner.post(reverse("annotations:views"), {"name": "mine", "url": url})
    assert response.status_code == 400 and "already have a view" in response.content.decode()
    owner.post(
        reverse("annotations:views"), {"name": "Team", "url": "/insights/?days=7", "shared": "on"}
    )
    nav = owner.get("/sessions/").content.decode()
    assert 'href="/sessions/?source=cli&amp;sort=started_at">Mine' in nav
    other, _ = client_of(client.__class__(), "viewer", "other")
    nav = other.get("/sessions/").content.decode()
    assert ">Team</a>" in nav and ">Mine</a>" not in nav
    # Opening it restores exactly that view.
    response = owner.get(url)
    assert response.context["sort"] == "started_at"
    assert AuditEvent.objects.filter(action="view_save").count() == 2


# The list: filters across the two databases ----------------------------------------------------
def expected_ids(store_path, tagged: set[str], extra_where: str = "1") -> list[str]:
    rows = sql(
        store_path,
        "SELECT id FROM sessions WHERE COALESCE(archived, 0) = 0 AND COALESCE(hidden, 0) = 0 "
        f"AND COALESCE(auto_archived, 0) = 0 AND {extra_where} ORDER BY started_at DESC, id DESC",
    )
    return [r[0] for r in rows if r[0] in tagged]


def tagged_in_app_db(*names: str) -> set[str]:
    sets = [
        {
            r[0]
            for r in app_sql(
                "SELECT st.session_id FROM annotations_app_sessiontag st "
                "JOIN annotations_app_tag t ON t.id = st.tag_id WHERE lower(t.name) = lower(%s)",
                [name],
            )
        }
        for name in names
    ]
    return set.intersection(*sets)


@pytest.fixture
def tagged(analyst, many_store):
    client, _ = analyst
    incident, good = make_tag("incident"), make_tag("good-example", "green")
    tag_sessions(client, incident, [f"s{i:03d}" for i in range(0, 300, 3)])
    tag_sessions(client, good, [f"s{i:03d}" for i in range(0, 300, 2)])
    return client


def test_tag_filter_returns_exactly_what_sql_on_both_databases_returns(tagged, many_store):
    expected = expected_ids(many_store, tagged_in_app_db("incident"))
    assert len(expected) > 50  # more than one page
    assert all_pages(tagged, {"tag": "incident"}) == expected
    # Several tags: a session carries all of them; names match whatever their case.
    both = expected_ids(many_store, tagged_in_app_db("incident", "good-example"))
    assert all_pages(tagged, {"tag": ["INCIDENT", "good-example"]}) == both
    # With a state.db filter and the oldest-first and source sorts.
    cli = expected_ids(many_store, tagged_in_app_db("incident"), "source = 'cli'")
    assert all_pages(tagged, {"tag": "incident", "source": "cli"}) == cli
    oldest = all_pages(tagged, {"tag": "incident", "sort": "started_at"})
    assert oldest == sorted(expected, key=lambda s: (int(s[1:]) // 2, s))
    by_source = [
        r[0]
        for r in sql(
            many_store,
            "SELECT id FROM sessions WHERE COALESCE(archived,0)=0 ORDER BY source, id",
        )
        if r[0] in tagged_in_app_db("incident")
    ]
    assert all_pages(tagged, {"tag": "incident", "sort": "source"}) == by_source


def test_tag_filter_pages_back_and_forth(tagged, many_store):
    first = tagged.get("/sessions/?tag=incident")
    second = tagged.get("/sessions/?tag=incident&cursor=" + first.context["page"].next_cursor)
    back = tagged.get("/sessions/?tag=incident&cursor=" + second.context["page"].prev_cursor)
    assert table_ids(back) == table_ids(first)
    assert first.context["count"].value == len(tagged_in_app_db("incident"))


def test_a_walk_stops_after_its_bound_and_the_next_page_goes_on(tagged, many_store, monkeypatch):
    monkeypatch.setattr(crossdb, "MAX_WALK", 10)
    monkeypatch.setattr(crossdb, "FIRST_BATCH_PAGES", 0)  # batches of one row: many walks
    expected = expected_ids(many_store, tagged_in_app_db("incident"), "source = 'cron'")
    first = tagged.get("/sessions/?tag=incident&source=cron")
    assert any("Looked through" in n for n in first.context["notes"])
    assert all_pages(tagged, {"tag": "incident", "source": "cron"}) == expected


def test_the_page_query_never_carries_every_matching_id(tagged, many_store):
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connections["hermes"]) as queries:
        tagged.get("/sessions/?tag=good-example")
    widest = max(q["sql"].count("'s") + q["sql"].count("%s") for q in queries.captured_queries)
    assert widest <= crossdb.FIRST_BATCH_PAGES * 51 + 5


def test_starred_and_has_note_filters_and_unknown_tags(tagged, many_store):
    tagged.post(reverse("annotations:star", args=["s030"]))
    tagged.post(reverse("annotations:star", args=["s031"]))
    tagged.post(reverse("annotations:add_note", args=["s031"]), {"text": "look"})
    tagged.post(reverse("annotations:add_note", args=["s100"]), {"text": "look"})
    assert all_pages(tagged, {"starred": "1"}) == ["s031", "s030"]
    assert all_pages(tagged, {"has_note": "1"}) == ["s100", "s031"]
    assert all_pages(tagged, {"starred": "1", "has_note": "1"}) == ["s031"]
    assert all_pages(tagged, {"tag": "incident", "starred": "1"}) == ["s030"]
    response = tagged.get("/sessions/?tag=nothing-like-it")
    assert table_ids(response) == []
    assert any("No tag is named" in n for n in response.context["notes"])


def test_the_table_shows_tags_stars_notes_and_facet_counts(tagged, many_store):
    tagged.post(reverse("annotations:star", args=["s298"]))
    tagged.post(reverse("annotations:add_note", args=["s298"]), {"text": "n"})
    response = tagged.get("/sessions/")
    body = response.content.decode()
    assert 'aria-label="Starred"' in body and "✎ 1" in body
    assert 'name="session" value="s299" form="bulk-tag"' in body
    facets = dict((t.name, n) for t, n in response.context["tag_facets"])
    assert facets == {"good-example": 150, "incident": 100}


def test_viewers_get_no_selection_checkboxes(client, many_store):
    make_tag()
    viewer, _ = client_of(client, "viewer")
    body = viewer.get("/sessions/").content.decode()
    assert 'form="bulk-tag"' not in body and "Tag selected" not in body


# Exports ------------------------------------------------------------------------------------------
def test_session_exports_carry_tags_starred_and_notes_count(tagged, many_store):
    tagged.post(reverse("annotations:star", args=["s297"]))
    tagged.post(reverse("annotations:add_note", args=["s297"]), {"text": "n"})
    response = tagged.get("/sessions/?_export=csv&source=cli")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    by_id = {r["id"]: r for r in rows}
    assert by_id["s297"]["starred"] == "1" and by_id["s297"]["notes_count"] == "1"
    assert by_id["s297"]["tags"] == "incident"
    assert by_id["s293"]["tags"] == "" and by_id["s293"]["starred"] == "0"
    response = tagged.get("/sessions/?_export=csv&tag=incident")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [r["id"] for r in rows] == expected_ids(many_store, tagged_in_app_db("incident"))
    assert all("incident" in r["tags"] for r in rows)
    assert {r["id"]: r["tags"] for r in rows}["s294"] == "good-example, incident"


def test_session_exports_without_any_annotation_have_empty_columns(analyst, many_store):
    client, _ = analyst
    response = client.get("/sessions/?_export=jsonl&source=cli")
    first = b"".join(response.streaming_content).decode().splitlines()[0]
    assert '"tags": ""' in first or '"tags":""' in first


# Search hits and transcript exports ---------------------------------------------------------------
def test_transcript_exports_carry_the_annotations(tagged, many_store):
    tagged.post(reverse("annotations:star", args=["s003"]))
    tagged.post(reverse("annotations:add_note", args=["s003"]), {"text": "n"})
    body = b"".join(tagged.get("/sessions/s003/export.json").streaming_content).decode()
    import json

    data = json.loads(body)
    assert data["annotations"] == {
        "tags": "incident",
        "starred": True,
        "notes_count": 1,
        "scores": "",
    }
    md = b"".join(tagged.get("/sessions/s003/export.md").streaming_content).decode()
    assert "**tags:** incident · **starred:** yes · **notes\\_count:** 1 · **scores:** none" in md


def test_search_hits_show_their_session_tags(analyst, current_store):
    client, _ = analyst
    tag = make_tag("photo")
    tag_sessions(client, tag, [current_store.multimodal_session_id])
    response = client.get("/search/?q=keyboard")
    assert response.status_code == 200
    body = response.content.decode()
    assert 'class="badge tag tag-red"' in body


def test_viewers_cannot_export_annotations_either(client, many_store):
    viewer, _ = client_of(client, "viewer")
    assert viewer.get("/sessions/?_export=csv&tag=incident").status_code == 403
    assert viewer.get("/sessions/s001/export.json").status_code == 403


def test_the_session_page_costs_the_same_queries_with_1_or_20_notes(
    analyst, many_store, django_assert_max_num_queries
):
    from django.test.utils import CaptureQueriesContext

    client, _ = analyst
    make_tag()
    client.post(reverse("annotations:add_note", args=["s001"]), {"text": "one"})
    for n in range(20):
        client.post(reverse("annotations:add_note", args=["s002"]), {"text": f"note {n}"})
    counts = []
    for sid in ("s001", "s002"):
        with CaptureQueriesContext(connections["default"]) as queries:
            assert client.get(f"/sessions/{sid}/").status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1]
    assert client.get("/sessions/s002/").content.decode().count('class="note"') == 20


def test_the_tag_filtered_list_runs_a_bounded_number_of_queries(tagged, many_store):
    from django.test.utils import CaptureQueriesContext

    tagged.get("/sessions/?tag=incident")
    with CaptureQueriesContext(connections["hermes"]) as hermes:
        with CaptureQueriesContext(connections["default"]) as default:
            assert tagged.get("/sessions/?tag=incident").status_code == 200
    assert len(hermes) <= 4
    assert len(default) <= 14


def test_last_activity_sort_with_a_tag_filter_says_why_it_shows_newest_first(tagged, many_store):
    response = tagged.get("/sessions/?tag=incident&sort=-last_active")
    assert response.status_code == 200
    notes = response.context["notes"]
    assert any("cannot sort by it" in n for n in notes)
    assert not any(n.startswith("Unknown sort") for n in notes)


def test_save_this_view_fills_in_the_page_that_linked_to_it(analyst, many_store):
    client, _ = analyst
    here = "http://testserver/sessions/?source=cli&sort=source"
    form = client.get(reverse("annotations:views"), HTTP_REFERER=here).context["form"]
    assert form.initial["url"] == "/sessions/?source=cli&sort=source"
    elsewhere = client.get(reverse("annotations:views"), HTTP_REFERER="https://evil.example/x")
    assert elsewhere.context["form"].initial["url"] == ""
    # A page does not write its own query string into the navigation's link.
    assert (
        "probe-xyz"
        not in client.get("/sessions/?title=probe-xyz").content.decode().split("<main")[0]
    )


def test_every_annotation_action_has_a_name_in_the_audit_trail():
    from accounts_app.models import AuditEvent
    from annotations_app import services

    codes = {
        getattr(services, name)
        for name in ("STAR", "UNSTAR", "TAG", "UNTAG", "NOTE", "NOTE_EDIT", "NOTE_DELETE")
        + ("TAG_VOCABULARY", "VIEW_SAVE", "VIEW_DELETE")
    }
    named = dict(AuditEvent.ACTIONS)
    assert codes <= set(named)
    assert named["note_delete"] == "deleted a note"
    assert AuditEvent(action="tag").get_action_display() == "tagged a session"


# Every guarded view: the role it needs (the 403 page names what it needs), a missing row a 404.
ANNOTATING = [
    ("post", "annotations:add_tag", ["s001"]),
    ("post", "annotations:remove_tag", ["s001", 1]),
    ("post", "annotations:bulk_tag", []),
    ("post", "annotations:add_note", ["s001"]),
    ("post", "review:score", ["s001"]),
    ("get", "review:next", []),
    ("get", "review:session", ["s001"]),
]
MANAGING = [
    ("post", "annotations:add_new_tag", ["s001"]),
    ("get", "annotations:tag_edit", [1]),
    ("post", "annotations:tag_delete", [1]),
    ("post", "review:score_delete", [1]),
]


@pytest.mark.parametrize(
    ("role", "method", "name", "args"),
    [("viewer", *case) for case in ANNOTATING] + [("analyst", *case) for case in MANAGING],
)
def test_each_guarded_view_refuses_the_role_below_it(client, many_store, role, method, name, args):
    user, _ = client_of(client, role)
    response = getattr(user, method)(reverse(name, args=args))
    assert response.status_code == 403
    wanted = "tag sessions or write notes" if (method, name, args) in ANNOTATING else "manage"
    assert wanted in response.content.decode()


def test_a_missing_note_or_view_is_a_404_and_anothers_view_a_403(client, many_store):
    staff, _ = client_of(client, "staff", "boss")
    for name in ("annotations:edit_note", "annotations:delete_note", "annotations:view_delete"):
        assert staff.post(reverse(name, args=[999])).status_code == 404
    assert staff.get(reverse("annotations:delete_note", args=[999])).status_code == 405
    owner = make_user("analyst", username="owner")
    view = SavedView.objects.create(name="mine", url="/sessions/", owner=owner)
    analyst, _ = client_of(client.__class__(), "analyst", "other")
    response = analyst.post(reverse("annotations:view_delete", args=[view.pk]))
    assert response.status_code == 403 and SavedView.objects.filter(pk=view.pk).exists()
    assert staff.post(reverse("annotations:view_delete", args=[view.pk])).status_code == 302
