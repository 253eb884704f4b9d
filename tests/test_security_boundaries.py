"""Secrets stay secret at every boundary a reader can probe: one test (or more) each.

Signed-out visitors learn nothing of stores, profiles or titles; a NOT term cannot test hidden
text; restricted staff stay restricted in the admin; the old API's search is bounded; metadata is
redacted; staff reads are audited; bad integers, methods and forwarded addresses are refused.
"""

from __future__ import annotations

import pytest
from django.core.management import call_command

from annotations_app.models import AnnotatedSession
from hermes_explorer.stores import REGISTRY
from tests.profile_home import SHARED_ID, serve_home
from tests.roles_helpers import client_for, make_user

pytestmark = pytest.mark.django_db(databases="__all__")


# The anonymous door ---------------------------------------------------------------


def test_signed_out_old_session_urls_name_no_profile_and_no_title(home, client):
    # Held by two profiles: the chooser page (300) used to list both with their titles.
    response = client.get(f"/sessions/{SHARED_ID}/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")
    assert "shared in" not in response.content.decode()
    # Held by one: the redirect used to name its profile.
    sid = home.sessions["coder"][1][0]
    response = client.get(f"/sessions/{sid}/")
    assert response.status_code == 302
    assert "/p/coder/" not in response["Location"]
    assert response["Location"].startswith("/accounts/login/")
    # Held by none: the same answer as a real one.
    assert client.get("/sessions/nope/")["Location"].startswith("/accounts/login/")


def test_signed_out_profile_urls_do_not_tell_real_profiles_from_others(client, home):
    real = client.get("/p/coder/sessions/")
    other = client.get("/p/nobody/sessions/")
    assert real.status_code == other.status_code == 302
    assert real["Location"].startswith("/accounts/login/")
    assert other["Location"].startswith("/accounts/login/")
    assert client.get("/p/coder/").status_code == 302


def test_signed_out_every_store_page_goes_to_the_sign_in(client, home):
    for url in (
        "/",
        "/sessions/",
        "/messages/",
        "/search/?q=common",
        "/insights/",
        "/live/",
        "/failures/",
        "/annotations/orphans/",
        "/state",
        "/state/sessions",
    ):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/accounts/login/"), url
    assert client.get("/accounts/login/").status_code == 200


def test_the_chooser_shows_only_visible_profiles_with_redacted_titles(home, client):
    user = make_user("viewer", "alice")
    call_command("profiles", "restrict", "alice", "default", "coder")
    client.force_login(user)
    # SHARED_ID is in default and support; alice sees default only: a redirect there.
    response = client.get(f"/sessions/{SHARED_ID}/")
    assert response.status_code == 302
    assert response["Location"] == f"/p/default/sessions/{SHARED_ID}/"
    client.logout()
    # Signed out, alice learns nothing of support's copy.
    assert "support" not in client.get(f"/sessions/{SHARED_ID}/").get("Location", "")


def test_the_chooser_redacts_titles(tmp_path, settings, request):
    from tests.builders import StateDB

    home = tmp_path / "home"
    secret = "sk-proj-" + "A1b2C3d4" * 6
    for path in (home / "state.db", home / "profiles" / "other" / "state.db"):
        path.parent.mkdir(parents=True, exist_ok=True)
        with StateDB.create(path, "current") as db:
            db.session("twin", title=f"deploy with {secret}")
            db.message("twin", "user", "hello")
    serve_home(settings, home, request)
    try:
        page = client_for("analyst").get("/sessions/twin/")
        assert page.status_code == 300
        body = page.content.decode()
        assert "/p/other/sessions/twin/" in body
        assert secret not in body and "redacted" in body
    finally:
        REGISTRY.rescan()


def test_orphans_keep_no_raw_title(current_store):
    from annotations_app.targets import targets_for
    from sessions_app.models import Session

    secret = "ghp_" + "Z9y8X7w6" * 5
    sid = Session.objects.values_list("id", flat=True).first()
    anchor = targets_for([sid])[sid]
    # A copy written by an earlier release (raw) is shown redacted all the same.
    AnnotatedSession.objects.filter(pk=anchor.pk).update(
        title=f"token {secret}", session_id="gone-session"
    )
    page = client_for("viewer").get("/annotations/orphans/")
    assert page.status_code == 200
    body = page.content.decode()
    assert "gone-session" in body
    assert secret not in body


def test_new_anchor_copies_are_redacted(tmp_path, settings):
    from annotations_app.targets import targets_for
    from tests.builders import StateDB
    from tests.conftest import use_store

    secret = "ghp_" + "Q1w2E3r4" * 5
    path = tmp_path / "state.db"
    with StateDB.create(path, "current") as db:
        db.session("s1", title=f"token {secret}")
    use_store(path)
    anchor = targets_for(["s1"])["s1"]
    assert secret not in anchor.title and "redacted" in anchor.title


# The health check says only "up" to anyone -----------------------------------------


def test_healthz_says_only_up_to_a_remote_visitor(home, client):
    remote = client.get("/healthz", REMOTE_ADDR="192.0.2.7")
    assert remote.status_code == 200
    body = remote.json()
    assert set(body) == {"status", "stores_readable", "elapsed_ms"}
    assert body == {**body, "status": "ok", "stores_readable": True}
    # Behind a proxy the socket is local but the visitor is not.
    proxied = client.get("/healthz", HTTP_X_FORWARDED_FOR="192.0.2.7")
    assert "stores" not in proxied.json()
    # A monitor on this host, and staff, get the details.
    local = client.get("/healthz").json()
    assert {s["profile"] for s in local["stores"]} == set(home.sessions)
    staff = client_for("staff").get("/healthz", REMOTE_ADDR="192.0.2.7").json()
    assert "journal_mode" in staff["stores"][0]


def test_healthz_lists_only_the_profiles_a_restricted_user_sees(home, client):
    user = make_user("viewer", "bob")
    call_command("profiles", "restrict", "bob", "coder")
    client.force_login(user)
    local = client.get("/healthz").json()
    assert [s["profile"] for s in local["stores"]] == ["coder"]


# NOT in full-text search is no oracle on redacted text ----------------------------

HIDDEN = "Zq7Vx2Lm9Pw4Rt8Ky3Nb6Hc1Jd5Fg0Ws2Ea9Tu"  # 38 characters after "ghp_"


@pytest.fixture(params=["current", "v10", "v5"])
def secret_store(request, tmp_path):
    from tests.builders import StateDB
    from tests.conftest import use_store

    path = tmp_path / f"{request.param}.db"
    with StateDB.create(path, request.param) as db:
        db.session("s1", title="deploy")
        db.message("s1", "user", "anchor deploy with the token")
        db.message("s1", "tool", f"anchor export GITHUB_TOKEN=ghp_{HIDDEN} done")
        db.message("s1", "assistant", "anchor visibleword here")
        db.refresh_counters()
    use_store(path)
    yield request.param


def _answers(client, url_for):
    """Each prefix of the hidden token's answer, as ids or the page's hit list."""
    answers = {}
    for n in range(3, 12):
        prefix = HIDDEN[:n]
        answers[prefix] = url_for(client, prefix)
    answers["qqq"] = url_for(client, "qqq")
    return answers


def _search_page_ids(client, prefix):
    import re

    page = client.get("/search/", {"q": f"anchor NOT {prefix}*", "mode": "advanced"})
    assert page.status_code == 200
    return sorted(re.findall(r"copy-id\">#(\d+)", page.content.decode()))


def _api_ids(client, prefix):
    response = client.get(
        "/state/messages.json",
        {"_search": f"anchor NOT {prefix}*", "_searchmode": "raw", "_shape": "array"},
    )
    assert response.status_code == 200, response.content
    return sorted(row["id"] for row in response.json())


@pytest.mark.parametrize("role", ["analyst", "staff"])
def test_not_cannot_spell_out_a_hidden_token_on_the_search_page(secret_store, role):
    answers = _answers(client_for(role), _search_page_ids)
    assert len(set(map(tuple, answers.values()))) == 1, answers
    # The message holding the token is found: its NOT term matches nothing the reader sees.
    assert len(answers["qqq"]) == 3


def test_not_cannot_spell_out_a_hidden_token_through_the_old_api(secret_store):
    answers = _answers(client_for("analyst"), _api_ids)
    assert len(set(map(tuple, answers.values()))) == 1, answers
    assert len(answers["qqq"]) == 3


def test_not_still_excludes_what_the_reader_can_read(secret_store):
    analyst = client_for("analyst")
    assert len(_search_page_ids(analyst, "visiblewo")) == 2
    assert len(_api_ids(analyst, "visiblewo")) == 2
    # Grouped, with a column filter, after a phrase: the same rule.
    page = analyst.get(
        "/search/", {"q": f'(anchor OR deploy) NOT "{HIDDEN[:6]}"*', "mode": "advanced"}
    )
    assert page.status_code == 200
    assert (
        "NOT needs"
        in analyst.get("/search/", {"q": "NOT anchor", "mode": "advanced"}).content.decode()
    )
    bad = analyst.get("/state/messages.json", {"_search": "NOT anchor", "_searchmode": "raw"})
    assert bad.status_code == 400


def test_staff_raw_api_search_keeps_sqlites_not(secret_store):
    staff = client_for("staff")
    # Staff can reveal: the API runs their query as given (what Datasette did).
    assert len(_api_ids(staff, HIDDEN[:8])) == 2
    assert len(_api_ids(staff, "qqq")) == 3


# Restricted staff stay restricted in the admin ----------------------------------


@pytest.fixture
def restricted_staff(home, client):
    from profiles_app.models import ProfileRestriction

    alice = make_user("staff", "alice")
    call_command("profiles", "restrict", "alice", "coder")
    client.force_login(alice)
    return client, ProfileRestriction.objects.get(user=alice)


def test_restricted_staff_cannot_see_or_remove_their_own_restriction(restricted_staff):
    from profiles_app.models import ProfileRestriction

    client, own = restricted_staff
    listing = client.get("/admin/profiles_app/profilerestriction/")
    assert listing.status_code == 200
    assert f"/{own.pk}/change/" not in listing.content.decode()
    client.post(f"/admin/profiles_app/profilerestriction/{own.pk}/delete/", {"post": "yes"})
    assert ProfileRestriction.objects.filter(pk=own.pk).exists()
    assert client.get("/p/support/sessions/").status_code == 404


def test_staff_restrict_viewers_and_analysts_only(restricted_staff, django_user_model):
    from profiles_app.models import ProfileRestriction

    client, _own = restricted_staff
    boss = django_user_model.objects.create_superuser("boss", password="pw-boss-123456")
    colleague = make_user("staff", "carol")
    viewer = make_user("viewer", "dave")
    for target in (boss, colleague):
        client.post(
            "/admin/profiles_app/profilerestriction/add/",
            {"user": target.pk, "profiles": "nothing"},
        )
        assert not ProfileRestriction.objects.filter(user=target).exists()
    client.post(
        "/admin/profiles_app/profilerestriction/add/", {"user": viewer.pk, "profiles": "coder"}
    )
    assert ProfileRestriction.objects.get(user=viewer).profiles == "coder"


def test_the_admin_shows_restricted_staff_nothing_of_a_hidden_profile(restricted_staff):
    from accounts_app.models import AuditEvent
    from annotations_app.models import AnnotatedSession, Note, SavedView

    client, _own = restricted_staff
    hidden = AnnotatedSession.objects.create(store="support", session_id="s-hidden")
    shown = AnnotatedSession.objects.create(store="coder", session_id="s-shown")
    Note.objects.create(target=hidden, author_name="x", text="hidden-note-text")
    Note.objects.create(target=shown, author_name="x", text="shown-note-text")
    other = make_user("analyst", "erin")
    SavedView.objects.create(name="erins-private", url="/sessions/", owner=other)
    SavedView.objects.create(name="erins-shared", url="/sessions/", owner=other, shared=True)
    SavedView.objects.create(
        name="hidden-shared", url="/p/support/sessions/", owner=other, shared=True
    )
    AuditEvent.objects.create(username="erin", action="reveal", profile="support", session_id="s-h")
    AuditEvent.objects.create(username="erin", action="reveal", profile="coder", session_id="s-c")
    notes = client.get("/admin/annotations_app/note/").content.decode()
    assert "s-shown" in notes and "s-hidden" not in notes
    views = client.get("/admin/annotations_app/savedview/").content.decode()
    assert "erins-shared" in views
    assert "erins-private" not in views and "hidden-shared" not in views
    audit = client.get("/admin/accounts_app/auditevent/").content.decode()
    assert "s-c" in audit and "s-h" not in audit


def test_audit_events_keep_the_profile(home):
    from accounts_app.models import AuditEvent

    staff = client_for("staff")
    sid = home.sessions["coder"][0][0]
    page = staff.get(f"/p/coder/sessions/{sid}/").content.decode()
    import re

    mid = re.search(rf"/p/coder/sessions/{sid}/messages/(\d+)/", page)
    mid = mid.group(1) if mid else "1"
    assert staff.post(f"/p/coder/sessions/{sid}/messages/{mid}/reveal").status_code == 200
    event = AuditEvent.objects.get(action="reveal")
    assert event.profile == "coder" and event.session_id == sid


# Out-of-range integers are a 400, never a 500 ---------------------------------------

BIG = "99999999999999999999"


def test_out_of_range_integers_are_refused_not_a_500(current_store):
    from hermes_explorer import store

    staff = client_for("staff")
    tables = [r[0] for r in store.rows("SELECT name FROM sqlite_master WHERE type='table'")]
    for table in tables:
        for op in ("gt", "gte", "lt", "lte", "exact", "not", "in", "notin"):
            url = f"/state/{table}.json?rowid__{op}={BIG}"
            response = staff.get(url)
            assert response.status_code < 500, url
        assert staff.get(f"/state/{table}?rowid__gt={BIG}").status_code < 500, table
        assert staff.get(f"/state/{table}.json?_next={BIG}").status_code < 500, table
        assert staff.get(f"/state/{table}.csv?rowid__gt={BIG}").status_code < 500, table
    assert staff.get(f"/state/messages.json?id__gt={BIG}").status_code == 400
    for url in (
        f"/sessions/?min_messages={BIG}",
        f"/sessions/?page={BIG}",
        f"/sessions/?cursor={BIG}",
        f"/messages/?before={BIG}",
        f"/messages/?session_id=x&after={BIG}",
        f"/messages/?id={BIG}",
        f"/search/?q=hello&before={BIG}",
        f"/search/?q=hello&page={BIG}",
        f"/sessions/x/messages/{BIG}/",
        f"/sessions/x/?after={BIG}",
        f"/insights/?days={BIG}",
        f"/failures/?days={BIG}",
        f"/live/?since={BIG}",
    ):
        assert staff.get(url).status_code < 500, url


# Only GET, HEAD, POST and OPTIONS; no SQL on a browser's GET ---------------------


def test_only_get_head_post_and_options_are_answered(current_store):
    staff = client_for("staff")
    for url in ("/accounts/tokens/", "/sessions/", "/healthz", "/accounts/login/"):
        assert staff.generic("TRACE", url).status_code == 405, url
        assert staff.generic("PUT", url).status_code == 405, url
        assert staff.generic("DELETE", url).status_code == 405, url
    assert staff.get("/accounts/tokens/").status_code == 200


def test_state_sql_runs_for_a_script_not_for_a_browser_get(current_store):
    from accounts_app.models import AuditEvent
    from tests.roles_helpers import script_client_for

    browser = client_for("staff")
    refused = browser.get("/state.json", {"sql": "select count(*) from sessions"})
    assert refused.status_code == 403 and "Authorization" in refused.json()["error"]
    assert not AuditEvent.objects.filter(action=AuditEvent.SQL).exists()
    script = script_client_for("staff")
    assert script.get("/state.json", {"sql": "select count(*) from sessions"}).status_code == 200


# A local process at the proxy's address cannot rotate X-Forwarded-For forever ------


def test_rotating_forwarded_for_from_the_proxy_address_ends_in_a_lockout(current_store, settings):
    from django.test import Client

    settings.HERMES_TRUST_FORWARDED_FOR = True
    make_user("analyst", username="ivy")
    client = Client()

    def attempt(password, n):
        return client.post(
            "/accounts/login/",
            {"username": "ivy", "password": password},
            REMOTE_ADDR="127.0.0.1",
            HTTP_X_FORWARDED_FOR=f"192.0.2.{n}",
        )

    for n in range(settings.HERMES_LOGIN_USER_FAILURE_LIMIT):
        assert attempt("wrong", n).status_code == 200
    from tests.roles_helpers import PASSWORD

    assert attempt(PASSWORD, 250).status_code == 429
    # A direct client (not the proxy) is judged by its own address as before.
    direct = Client().post(
        "/accounts/login/", {"username": "ivy", "password": PASSWORD}, REMOTE_ADDR="198.51.100.3"
    )
    assert direct.status_code == 302


# Staff reads of secret text through the old API's comparisons are audited ----------


def test_staff_comparisons_on_secret_columns_are_audited(current_store):
    from accounts_app.models import AuditEvent

    staff = client_for("staff")
    for url in (
        "/state/messages.json?content__gte=sk-a",
        "/state/messages.json?_sort=content",
        "/state/messages.json?_facet=content",
        "/state/sessions.json?system_prompt__contains=key",
        "/state/messages?content__contains=sk-",
    ):
        before = AuditEvent.objects.filter(action=AuditEvent.FILTER).count()
        assert staff.get(url).status_code in (200, 400), url
        events = AuditEvent.objects.filter(action=AuditEvent.FILTER)
        assert events.count() == before + 1, url
        assert events.first().username == "user-staff"
    # Asking only whether a column is empty, or filtering other columns, reads no secret.
    before = AuditEvent.objects.count()
    staff.get("/state/messages.json?content__notblank=1&role=user")
    assert AuditEvent.objects.count() == before
    # Roles that cannot reveal are refused instead (nothing read, nothing audited).
    analyst = client_for("analyst")
    assert analyst.get("/state/messages.json?content__gte=sk-a").status_code == 400
    assert AuditEvent.objects.count() == before


# Metadata columns that can hold a token are redacted like the others ---------

META_SECRET = "ghp_" + "M3t4d4t4S3cr3tV4lu3x" * 2


@pytest.fixture
def metadata_store(tmp_path):
    from tests.builders import StateDB
    from tests.conftest import use_store

    path = tmp_path / "meta.db"
    with StateDB.create(path, "current") as db:
        db.session(
            "meta1",
            title="metadata",
            source="cli",
            model="gpt-x",
            billing_provider=f"prov {META_SECRET}",
            cwd=f"/srv/app/{META_SECRET}",
            git_branch=f"fix/{META_SECRET}",
            started_at=1_780_000_000,
        )
        db.message("meta1", "user", "hello")
        db.message("meta1", "tool", '{"error": "boom"}', tool_name=f"tool {META_SECRET}")
        db.model_usage("meta1", "gpt-x", task=f"task {META_SECRET}", input_tokens=5)
        db.refresh_counters()
    use_store(path)
    return path


def test_metadata_that_can_hold_a_token_is_redacted_on_every_output(metadata_store):
    clients = {role: client_for(role) for role in ("viewer", "analyst")}
    for role, client in clients.items():
        for url in (
            "/sessions/meta1/",
            "/sessions/?_export=csv",
            "/sessions/?_export=json",
            "/messages/?session_id=meta1",
            "/messages/?session_id=meta1&_export=csv",
            "/state/sessions.json",
            "/state/session_model_usage.json",
            "/state/messages.json",
            "/state/messages.csv",
            "/state/sessions",
            "/insights/?days=0",
            "/failures/?days=0",
            "/failures/?days=0&_export=csv",
        ):
            response = client.get(url)
            if response.status_code != 200:
                continue
            body = b"".join(response.streaming_content) if response.streaming else response.content
            assert META_SECRET.encode() not in body, (role, url)
    # And nothing of it is a usable filter either: the shown value is what compares.
    api = clients["analyst"].get("/state/sessions.json", {"git_branch__contains": META_SECRET[:8]})
    assert api.status_code == 200 and api.json()["rows"] == []


# The old API's raw search is bounded ---------------------------------------------


def test_raw_api_search_has_the_search_pages_limits(current_store):
    analyst = client_for("analyst")
    wide = " OR ".join(f"{c}*" for c in "abcdefghijklmnopqrstuvwxyz")
    for text in (wide, "ab* OR hello", " ".join(f"w{n}" for n in range(20))):
        response = analyst.get("/state/messages.json", {"_search": text, "_searchmode": "raw"})
        assert response.status_code == 400, text
        assert response.json()["ok"] is False


def test_searches_beyond_the_hosts_bound_are_told_busy(current_store, settings, tmp_path):
    from hermes_explorer import host_slots

    settings.DATA_DIR = tmp_path
    settings.HERMES_SEARCH_CONCURRENCY = 1
    analyst = client_for("analyst")
    with host_slots.take("search", 1):
        page = analyst.get("/search/", {"q": "hello"})
        assert page.status_code == 429 and "Too many searches" in page.content.decode()
        assert page["Retry-After"] == str(host_slots.RETRY_SECONDS)
        api = analyst.get("/state/messages.json", {"_search": "hello"})
        assert api.status_code == 429 and api["Retry-After"]
        # Pages that do not search are not held back.
        assert analyst.get("/sessions/").status_code == 200
    assert analyst.get("/search/", {"q": "hello"}).status_code == 200
    assert analyst.get("/state/messages.json", {"_search": "hello"}).status_code == 200


# The header names the profile; the file's path is for staff only --------------------------


def test_the_header_names_the_profile_and_shows_the_path_to_staff_only(current_store):
    from hermes_explorer import store

    path = store.name()
    viewer = client_for("viewer").get("/sessions/").content.decode()
    assert "Reading profile <strong>default</strong> read-only" in viewer
    assert path not in viewer
    staff = client_for("staff").get("/sessions/").content.decode()
    assert path in staff


# One-step saved views, a tag made while tagging ----------------------------------------------


def test_a_view_is_saved_in_one_step_from_the_page_it_names(current_store):
    from annotations_app.models import SavedView

    analyst = client_for("analyst")
    page = analyst.get("/sessions/?source=cli").content.decode()
    assert 'id="save-view-name"' in page and "source=cli" not in page.split("save-view")[1]
    response = analyst.post(
        "/annotations/views/",
        {"name": "CLI"},
        HTTP_REFERER="http://testserver/sessions/?source=cli",
    )
    assert response.status_code == 302 and response["Location"] == "/sessions/?source=cli"
    assert SavedView.objects.get(name="CLI").url == "/sessions/?source=cli"
    # Not from a page that can be saved: the form says why, nothing is saved.
    refused = analyst.post("/annotations/views/", {"name": "X"}, HTTP_REFERER="http://evil/")
    assert refused.status_code == 400 and not SavedView.objects.filter(name="X").exists()


def test_only_staff_make_a_tag_while_tagging(current_store):
    from annotations_app.models import SessionTag, Tag
    from sessions_app.models import Session

    sid = Session.objects.values_list("id", flat=True).first()
    assert (
        client_for("analyst")
        .post(f"/annotations/sessions/{sid}/tags/new", {"name": "x"})
        .status_code
        == 403
    )
    staff = client_for("staff")
    staff.post(f"/annotations/sessions/{sid}/tags/new", {"name": "Needs-Review"})
    staff.post(f"/annotations/sessions/{sid}/tags/new", {"name": "needs-review"})  # the same
    assert Tag.objects.get().name == "Needs-Review"
    assert SessionTag.objects.filter(session_id=sid).count() == 1
