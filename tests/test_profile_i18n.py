"""The pages over several profiles read in French: the profile switcher, the Profile column and
filter, the per-profile insights, the chooser of a session id two profiles share, and the note
naming a profile that cannot be read."""

from __future__ import annotations

import pytest

from hermes_explorer.stores import REGISTRY
from tests.profile_home import PROFILE_DBS, SHARED_ID, build_home, serve_home
from tests.test_i18n import FR, english_leftovers

pytestmark = pytest.mark.django_db(databases=PROFILE_DBS)


# Sessions per profile of the module's HERMES_HOME (the shared ``home`` fixture).
HOME_SESSIONS_PER_PROFILE = 5


PAGES = [
    "/sessions/",
    "/sessions/?profile=support&profile=coder",
    "/sessions/?profile=nosuch",
    "/messages/",
    "/search/?q=common",
    "/search/?q=common&sort=newest",
    "/insights/",
    "/insights/?days=all",
    "/p/support/sessions/",
    "/p/coder/insights/",
    f"/sessions/{SHARED_ID}/",
    "/p/nosuch/sessions/",
]


def test_profile_pages_read_in_french(home, staff_client):
    leftovers = {}
    for url in PAGES:
        response = staff_client.get(url, **FR)
        assert response.status_code in (200, 300, 404), (url, response.status_code)
        html = response.content.decode()
        assert '<html lang="fr"' in html, url
        found = english_leftovers(html)
        if found:
            leftovers[url] = found[:20]
    assert not leftovers, leftovers
    body = staff_client.get("/sessions/", **FR).content.decode()
    assert "Tous les profils" in body and "Profil" in body
    chooser = staff_client.get(f"/sessions/{SHARED_ID}/", **FR).content.decode()
    assert "est dans 2 profils" in chooser


def test_an_unreadable_profile_is_named_in_french(settings, tmp_path, request, staff_client):
    facts = build_home(tmp_path / ".hermes", per=2, profiles={"default": "current"})
    broken = facts.home / "profiles" / "zbroken" / "state.db"
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"this is not a database" * 100)
    serve_home(settings, facts.home, request)
    try:
        body = staff_client.get("/sessions/", **FR).content.decode()
        assert "Le profil zbroken est indisponible" in body
        assert not english_leftovers(body), english_leftovers(body)
    finally:
        REGISTRY.rescan()
