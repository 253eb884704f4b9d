"""The rest of the home page over several profiles of different layouts: sessions per source
are the sums of each profile's, the latest sessions and what runs now come from every profile
the reader may see (each row naming its profile, its link going to it), and an unreadable
profile is named while the others are shown."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from tests.profile_home import PROFILE_DBS
from tests.test_profile_failures_home import LAYOUTS, three  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.django_db(databases=PROFILE_DBS), pytest.mark.render_context]
PROFILE_COLUMN = re.compile(r"<th[^>]*>\s*Profile\s*</th>")


@pytest.fixture
def profiles(three):  # noqa: F811 (the fixture of that module)
    return three


def _sources(response) -> dict:
    return {
        row["source"]: (row["sessions"], row["messages"], pytest.approx(row["cost"] or 0))
        for row in response.context["sources"]
    }


def _summed(parts: list[dict]) -> dict:
    total: dict = {}
    for part in parts:
        for source, (sessions, messages, cost) in part.items():
            s, m, c = total.get(source, (0, 0, 0))
            total[source] = (s + sessions, m + messages, c + cost.expected)
    return {k: (s, m, pytest.approx(c)) for k, (s, m, c) in total.items()}


def _latest(response) -> list[tuple[str, str]]:
    return [(row.record.store_name, row.record.id) for row in response.context["latest"].rows]


def _running(response) -> set[tuple[str, str]]:
    return {(s.store_name, s.id) for s in response.context["running"]}


def _check(client, staff_client, allowed, url="/") -> None:
    response = client.get(url)
    assert response.status_code == 200
    alone = {p: staff_client.get(f"/p/{p}/") for p in allowed}
    # Sessions per source: each source's sessions, messages and cost summed over the profiles.
    assert _sources(response) == _summed([_sources(a) for a in alone.values()])
    assert sum(r["sessions"] for r in response.context["sources"]) == sum(
        sum(r["sessions"] for r in a.context["sources"]) for a in alone.values()
    )
    # What runs now: every profile's running session, each linking to its profile.
    running = set().union(*(_running(a) for a in alone.values()))
    shown = _running(response)
    assert shown <= running and len(shown) == min(len(running), 5)
    assert {(p, "live-1") for p in allowed} <= shown
    assert response.context["running_count"] == len(running)
    # The latest sessions: the newest of all the profiles together, newest first.
    latest = _latest(response)
    everyone = sorted(
        (
            (row.record.started_at, p, row.record.id)
            for p, a in alone.items()
            for row in a.context["latest"].rows
        ),
        reverse=True,
    )
    assert latest == [(p, sid) for _t, p, sid in everyone[: len(latest)]]
    assert {p for p, _sid in latest} == set(allowed)
    html = response.content.decode()
    for profile in allowed:
        if profile != "default":
            assert f'href="/p/{profile}/sessions/live-1/"' in html
            assert f'href="/p/{profile}/sessions/h-' in html
    # Each row names its profile: a Profile column, and the profile before a running session.
    assert PROFILE_COLUMN.search(html)
    for profile in allowed:
        assert f'<span class="muted">{profile}</span> · <a href' in html
    assert len(PROFILE_COLUMN.findall(html)) == 2  # the costliest sessions name theirs too


def test_every_part_of_the_home_page_covers_all_profiles(profiles, staff_client):
    _check(staff_client, staff_client, tuple(LAYOUTS))


def test_a_restricted_user_sees_only_their_profiles_everywhere(profiles, staff_client, client):
    user = get_user_model().objects.create_user("erin", password="pw-erin-123")
    call_command("roles", "grant", "erin", "analyst")
    call_command("profiles", "restrict", "erin", "support", "coder")
    client.force_login(user)
    _check(client, staff_client, ("support", "coder"))
    html = client.get("/").content.decode()
    assert "/p/default/sessions/" not in html and 'href="/sessions/h-' not in html


def test_profiles_chosen_on_the_page_are_the_ones_shown(profiles, staff_client):
    _check(staff_client, staff_client, ("default", "coder"), "/?profile=default&profile=coder")
    response = staff_client.get("/?profile=coder,support")
    assert 'href="/sessions/?source=cli&amp;profile=coder&amp;profile=support"' in (
        response.content.decode()
    )


def test_one_profile_shown_names_none(profiles, staff_client):
    response = staff_client.get("/p/support/")
    assert ("support", "live-1") in _running(response)
    assert not PROFILE_COLUMN.search(response.content.decode())


@pytest.fixture
def corrupt(profiles):
    """A fourth profile, ``corrupt``, whose state.db is not a SQLite file."""
    path = profiles / "profiles" / "corrupt" / "state.db"
    path.parent.mkdir(parents=True)
    path.write_text("this is not an sqlite file " * 100)
    from hermes_explorer.stores import REGISTRY

    REGISTRY.rescan()
    return path


def test_an_unreadable_profile_is_named_and_the_others_shown(corrupt, staff_client):
    response = staff_client.get("/")
    assert response.status_code == 200
    assert [n for n in response.context["notes"] if "corrupt" in str(n)] != []
    _check(staff_client, staff_client, tuple(LAYOUTS))


def test_a_page_of_only_unreadable_profiles_says_so(corrupt, staff_client):
    response = staff_client.get("/?profile=corrupt")
    assert response.status_code == 200
    assert [n for n in response.context["notes"] if "corrupt" in str(n)] != []
    assert response.context["figures"] is None and not response.context["running"]
    assert "How are we doing?" not in response.content.decode()
