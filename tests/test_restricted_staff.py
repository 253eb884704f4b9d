"""Staff restricted to some profiles reach no other profile through the admin or the review
pages: what they grant, create, change or delete stays within the profiles they see."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.test import Client

from annotations_app.models import AnnotatedSession, Score, SessionScore
from profiles_app.models import ProfileRestriction
from tests.profile_home import PROFILE_DBS
from tests.roles_helpers import PASSWORD, make_user

pytestmark = pytest.mark.django_db(databases=PROFILE_DBS)

HOME_SESSIONS_PER_PROFILE = 2
RESTRICTIONS = "/admin/profiles_app/profilerestriction/"


@pytest.fixture
def staff(home, client):
    """Staff member alice, who sees only the ``coder`` profile."""
    make_user("staff", "alice")
    call_command("profiles", "restrict", "alice", "coder")
    client.force_login(get_user_model().objects.get(username="alice"))
    return client


def _restricted(username: str, *profiles: str):
    user = make_user("analyst", username)
    call_command("profiles", "restrict", username, *profiles)
    return ProfileRestriction.objects.get(user=user)


def _signed_in(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


def test_restricted_staff_grant_only_profiles_they_see(staff):
    row = _restricted("bob", "coder")
    page = staff.post(f"{RESTRICTIONS}{row.pk}/change/", {"profiles": "coder,support"})
    assert page.status_code == 200 and "only profiles you can see" in page.content.decode()
    row.refresh_from_db()
    assert row.profiles == "coder"
    viewer = make_user("viewer", "dave")
    staff.post(f"{RESTRICTIONS}add/", {"user": viewer.pk, "profiles": "support"})
    assert not ProfileRestriction.objects.filter(user=viewer).exists()
    # Narrowing (or granting what they see) still works.
    staff.post(f"{RESTRICTIONS}add/", {"user": viewer.pk, "profiles": "coder"})
    assert ProfileRestriction.objects.get(user=viewer).profiles == "coder"


def test_restricted_staff_never_lift_a_restriction(staff):
    row = _restricted("bob", "coder")
    other = make_user("viewer", "dave")
    staff.post(f"{RESTRICTIONS}{row.pk}/delete/", {"post": "yes"})
    staff.post(
        RESTRICTIONS, {"action": "delete_selected", "_selected_action": [row.pk], "post": "yes"}
    )
    # Moving it to another account would free bob: the owner is read-only.
    staff.post(f"{RESTRICTIONS}{row.pk}/change/", {"user": other.pk, "profiles": "coder"})
    row.refresh_from_db()
    assert row.user.username == "bob"
    assert _signed_in("bob").get("/p/support/sessions/").status_code == 404


def test_restrictions_naming_a_hidden_profile_do_not_exist_for_restricted_staff(staff):
    wide = _restricted("bob", "coder,support")
    listing = staff.get(RESTRICTIONS).content.decode()
    assert f"/{wide.pk}/change/" not in listing and "support" not in listing
    assert staff.get(f"{RESTRICTIONS}{wide.pk}/change/").status_code in (302, 404)


def test_an_account_made_by_restricted_staff_carries_their_restriction(staff):
    form = {
        "username": "mallory",
        "password1": "New-pass-4567!",
        "password2": "New-pass-4567!",
        "usable_password": "true",
    }
    assert staff.post("/admin/auth/user/add/", form).status_code == 302
    mallory = get_user_model().objects.get(username="mallory")
    assert ProfileRestriction.allowed_for(mallory) == {"coder"}
    analysts = Group.objects.get(name="analysts")
    changed = staff.post(
        f"/admin/auth/user/{mallory.pk}/change/",
        {
            "username": "mallory",
            "is_active": "on",
            "date_joined_0": "2026-01-01",
            "date_joined_1": "10:00:00",
            "groups": [str(analysts.pk)],
        },
    )
    assert changed.status_code == 302
    assert mallory.groups.filter(name="analysts").exists()
    client = Client()
    assert client.login(username="mallory", password="New-pass-4567!")
    assert client.get("/p/support/sessions/").status_code == 404
    assert client.get("/p/coder/sessions/").status_code == 200


def test_restricted_staff_cannot_take_over_an_account_that_sees_more(staff):
    free = make_user("analyst", "carol")  # no restriction: every profile
    wide = _restricted("bob", "coder", "support").user
    within = _restricted("erin", "coder").user
    form = {"password1": "New-pass-4567!", "password2": "New-pass-4567!", "usable_password": "true"}
    for account in (free, wide):
        assert staff.post(f"/admin/auth/user/{account.pk}/password/", form).status_code == 403
        account.refresh_from_db()
        assert not account.check_password("New-pass-4567!")
        response = staff.post(f"/admin/auth/user/{account.pk}/delete/", {"post": "yes"})
        assert response.status_code == 403
    assert staff.post(f"/admin/auth/user/{within.pk}/password/", form).status_code == 302
    within.refresh_from_db()
    assert within.check_password("New-pass-4567!")


def test_restricted_staff_cannot_widen_an_account_through_a_group(staff):
    viewers = Group.objects.get(name="viewers")
    call_command("profiles", "restrict", "--group", "viewers", "support")
    erin = _restricted("erin", "coder").user
    page = staff.post(
        f"/admin/auth/user/{erin.pk}/change/",
        {
            "username": "erin",
            "is_active": "on",
            "date_joined_0": "2026-01-01",
            "date_joined_1": "10:00:00",
            "groups": [str(viewers.pk)],
        },
    )
    assert page.status_code == 200  # not a choice offered to them
    assert ProfileRestriction.allowed_for(erin) == {"coder"}


# Scores --------------------------------------------------------------------------------------


def _scored(score: Score, profile: str) -> None:
    target = AnnotatedSession.objects.create(store=profile, session_id=f"s-{score.name}")
    row = SessionScore(
        target=target, score=score, user=make_user("analyst", f"r-{score}-{profile}"), value="bad"
    )
    row.copy_keys(target)
    row.save()


def test_restricted_staff_cannot_delete_a_score_given_in_a_hidden_profile(staff):
    hidden = Score.objects.create(name="quality", values=["good", "bad"])
    _scored(hidden, "coder")
    _scored(hidden, "support")
    response = staff.post(f"/p/coder/review/scores/{hidden.pk}/delete")
    assert response.status_code == 403
    staff.post(f"/admin/annotations_app/score/{hidden.pk}/delete/", {"post": "yes"})
    assert Score.objects.filter(pk=hidden.pk).exists()
    own = Score.objects.create(name="tone", values=["ok"])
    _scored(own, "coder")
    assert staff.post(f"/p/coder/review/scores/{own.pk}/delete").status_code == 302
    assert not Score.objects.filter(pk=own.pk).exists()
