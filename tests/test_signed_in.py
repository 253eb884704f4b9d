"""Signed-in sessions read with their user in one statement, and still checked on every request.

Runs on the default SQLite app database and, with ``-p tests.real_servers``, on PostgreSQL: a
change made through another connection (another instance) to the user or the session shows on
the very next request.
"""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connections
from django.test import Client
from django.test.utils import CaptureQueriesContext

from accounts_app.models import SignedInSession
from tests.roles_helpers import PASSWORD, make_user

pytestmark = pytest.mark.django_db(databases=["default", "hermes"])


def _signed_in(username: str = "sam") -> tuple[Client, object]:
    user = make_user("viewer", username=username)
    client = Client()
    assert (
        client.post("/accounts/login/", {"username": username, "password": PASSWORD}).status_code
        == 302
    )
    return client, user


def _signed_out(response) -> bool:
    return response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_a_page_reads_its_session_and_its_user_in_one_statement(current_store):
    client, _user = _signed_in()
    assert client.get("/").status_code == 200
    with CaptureQueriesContext(connections["default"]) as queries:
        assert client.get("/").status_code == 200
    sql = [q["sql"] for q in queries]
    table = SignedInSession._meta.db_table
    users = get_user_model()._meta.db_table
    session_reads = [s for s in sql if table in s]
    assert len(session_reads) == 1 and users in session_reads[0]
    assert not [s for s in sql if f'FROM "{users}"' in s and table not in s]


def test_a_deactivated_user_is_signed_out_at_the_next_request(current_store):
    client, user = _signed_in()
    assert client.get("/").status_code == 200
    get_user_model().objects.filter(pk=user.pk).update(is_active=False)
    assert _signed_out(client.get("/"))


def test_a_password_changed_elsewhere_ends_the_session(current_store):
    client, user = _signed_in()
    assert client.get("/").status_code == 200
    other = get_user_model().objects.get(pk=user.pk)
    other.set_password("a-new-password-456")
    other.save()
    assert _signed_out(client.get("/"))
    assert not SignedInSession.objects.filter(
        session_key=client.cookies[settings.SESSION_COOKIE_NAME].value
    ).exists()


def test_a_session_ended_elsewhere_is_signed_out_and_a_deleted_user_takes_theirs(current_store):
    client, user = _signed_in()
    key = client.cookies[settings.SESSION_COOKIE_NAME].value
    SignedInSession.objects.filter(session_key=key).delete()
    assert _signed_out(client.get("/"))
    again, user = _signed_in("kim")
    assert SignedInSession.objects.filter(user_id=user.pk).exists()
    get_user_model().objects.filter(pk=user.pk).delete()
    assert not SignedInSession.objects.filter(user_id=user.pk).exists()
    assert _signed_out(again.get("/"))


def test_a_session_whose_user_column_disagrees_with_its_data_reads_the_user_by_its_data(
    current_store,
):
    client, user = _signed_in()
    other = make_user("staff", username="other")
    key = client.cookies[settings.SESSION_COOKIE_NAME].value
    SignedInSession.objects.filter(session_key=key).update(user_id=other.pk)
    page = client.get("/")
    assert page.status_code == 200
    assert page.context["user"].pk == user.pk


def test_sign_out_removes_the_session_row(current_store):
    client, _user = _signed_in()
    key = client.cookies[settings.SESSION_COOKIE_NAME].value
    page = client.get("/")
    token = page.context["csrf_token"]
    assert client.post("/accounts/logout/", {"csrfmiddlewaretoken": str(token)}).status_code == 302
    assert not SignedInSession.objects.filter(session_key=key).exists()
    assert _signed_out(client.get("/"))


def test_the_upgrade_copies_running_sessions_with_their_user(current_store):
    import importlib

    from django.apps import apps
    from django.contrib.sessions.backends.db import SessionStore as DjangoStore

    migration = importlib.import_module("accounts_app.migrations.0006_signed_in_sessions")
    user = make_user("viewer", username="before")
    old = DjangoStore()
    old.update(
        {"_auth_user_id": str(user.pk), "_auth_user_backend": settings.AUTHENTICATION_BACKENDS[-1]}
    )
    old.create()
    anonymous = DjangoStore()
    anonymous["something"] = 1
    anonymous.create()
    with connections["default"].schema_editor() as editor:
        migration.copy_running_sessions(apps, editor)
    copied = SignedInSession.objects.get(session_key=old.session_key)
    assert copied.user_id == user.pk
    assert copied.get_decoded()["_auth_user_id"] == str(user.pk)
    assert SignedInSession.objects.get(session_key=anonymous.session_key).user_id is None


def test_the_user_s_profile_restrictions_are_read_with_the_session():
    from profiles_app.models import ProfileRestriction

    assert {ProfileRestriction.OWN, ProfileRestriction.BY_GROUP} <= set(settings.SESSION_USER_READS)


def test_a_restriction_made_elsewhere_applies_at_the_next_request(current_store):
    from django.contrib.auth.models import Group

    from profiles_app.models import ProfileRestriction

    client, user = _signed_in()
    assert client.get("/").status_code == 200
    mine = ProfileRestriction.objects.create(user=user, profiles="elsewhere")
    assert client.get("/").status_code == 404
    mine.profiles = "default, elsewhere"
    mine.save()
    assert client.get("/").status_code == 200
    mine.delete()
    group = Group.objects.create(name="contractors")
    user.groups.add(group)
    assert client.get("/").status_code == 200
    ProfileRestriction.objects.create(group=group, profiles="elsewhere")
    assert client.get("/").status_code == 404
    ProfileRestriction.objects.create(user=user, profiles="default")
    assert client.get("/").status_code == 200  # the union of the user's and the group's


def test_an_empty_own_restriction_shows_no_profile(current_store):
    from profiles_app.models import ProfileRestriction

    client, user = _signed_in()
    ProfileRestriction.objects.create(user=user, profiles=" , ")
    assert client.get("/").status_code == 404


def test_expired_sessions_are_cleared(current_store):
    from datetime import timedelta

    from django.core.management import call_command
    from django.utils import timezone

    client, _user = _signed_in()
    key = client.cookies[settings.SESSION_COOKIE_NAME].value
    SignedInSession.objects.filter(session_key=key).update(
        expire_date=timezone.now() - timedelta(seconds=1)
    )
    assert _signed_out(client.get("/"))
    call_command("clearsessions")
    assert not SignedInSession.objects.filter(session_key=key).exists()


def test_the_saved_views_of_the_navigation_read_with_the_session_are_the_queried_ones(
    current_store,
):
    from annotations_app import selectors
    from annotations_app.models import SavedView

    assert selectors.VIEWS_READ_WITH_SESSION in settings.SESSION_USER_READS
    client, user = _signed_in()
    other = make_user("viewer", username="other")
    assert selectors.views_for(_session_user(client)) == ([], [])
    for owner, name, shared in [
        (user, "beta", False),
        (user, "Alpha", True),
        (other, "zeta <b>", True),
        (other, "hidden", False),
        (other, "Émile", True),
        (user, "alpha two", False),
    ]:
        SavedView.objects.create(owner=owner, name=name, url=f"/sessions/?q={name}", shared=shared)
    read = selectors.views_for(_session_user(client))
    queried = selectors.views_for(get_user_model().objects.get(pk=user.pk))
    assert read == queried
    own, shared = read
    assert [v.name for v in own] == [v.name for v in queried[0]] and len(own) == 3
    assert {v.name for v in shared} == {"zeta <b>", "Émile"}
    assert {v.owner_name for v in shared} == {"other"} and all(v.shared for v in shared)
    page = client.get("/").content.decode()
    assert "zeta &lt;b&gt;</a>" in page and ">hidden</a>" not in page


def _session_user(client):
    from accounts_app.signed_in import SessionStore

    store = SessionStore(client.cookies[settings.SESSION_COOKIE_NAME].value)
    store.load()
    user = store.loaded_user
    assert hasattr(user, "saved_view_links")
    return user
