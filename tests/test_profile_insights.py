"""Insights over several profiles: the totals are the sum of the per-profile reports."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from tests.profile_home import PROFILE_DBS, PROFILES

pytestmark = pytest.mark.django_db(databases=PROFILE_DBS)

WINDOW = "/insights/?days=all"
ADDED = (
    "total_sessions",
    "total_messages",
    "total_tool_calls",
    "total_input_tokens",
    "total_output_tokens",
    "total_tokens",
    "user_messages",
    "assistant_messages",
)


# Sessions per profile of the module's HERMES_HOME (the shared ``home`` fixture).
HOME_SESSIONS_PER_PROFILE = 8


def report(client, url: str) -> dict:
    response = client.get(url + "&_export=json")
    assert response.status_code == 200, response.content[:300]
    return response.json()


def test_totals_are_the_sum_of_the_per_profile_reports(home, staff_client):
    merged = report(staff_client, WINDOW)
    alone = {p: report(staff_client, f"/p/{p}{WINDOW}") for p in PROFILES}
    for key in ADDED:
        assert merged["overview"][key] == sum(a["overview"][key] for a in alone.values()), key
    assert merged["overview"]["estimated_cost"] == pytest.approx(
        sum(a["overview"]["estimated_cost"] for a in alone.values())
    )
    assert merged["overview"]["total_sessions"] == sum(len(m) for m in home.sessions.values())
    # Per-profile rows: one per profile, with its own report's figures.
    rows = {r["profile"]: r for r in merged["profiles"]}
    assert set(rows) == set(PROFILES)
    for profile, alone_report in alone.items():
        assert rows[profile]["sessions"] == alone_report["overview"]["total_sessions"]
        assert rows[profile]["messages"] == alone_report["overview"]["total_messages"]
        assert rows[profile]["url"].startswith(f"/p/{profile}/insights/")
    # Platforms and models are summed across profiles.
    sessions_by_platform = sum(p["sessions"] for p in merged["platforms"])
    assert sessions_by_platform == merged["overview"]["total_sessions"]
    assert merged["profiles"] and "alone" not in merged


def test_a_subset_of_profiles(home, staff_client):
    merged = report(staff_client, WINDOW + "&profile=coder&profile=cron")
    assert {r["profile"] for r in merged["profiles"]} == {"coder", "cron"}
    assert merged["overview"]["total_sessions"] == len(home.sessions["coder"]) + len(
        home.sessions["cron"]
    )


def test_the_page_shows_the_breakdown_with_drill_down(home, staff_client):
    page = staff_client.get(WINDOW).content.decode()
    assert "Sessions per profile" in page
    for profile in PROFILES:
        assert f'href="/p/{profile}/insights/?days=all"' in page
    assert "/p/" in page.split("Notable")[-1] or "Notable" not in page


def test_a_restricted_user_sees_only_the_figures_of_the_allowed_profiles(home, client):
    user = get_user_model().objects.create_user("dave", password="pw-dave-123")
    call_command("roles", "grant", "dave", "analyst")
    call_command("profiles", "restrict", "dave", "support")
    client.force_login(user)
    merged = report(client, WINDOW)
    assert [r["profile"] for r in merged["profiles"]] == ["support"]
    assert merged["overview"]["total_sessions"] == len(home.sessions["support"])
    page = client.get(WINDOW).content.decode()
    for hidden in set(PROFILES) - {"support"}:
        assert f"/p/{hidden}/" not in page
        assert f"model-{hidden}" not in page
    assert client.get(f"/p/default{WINDOW}").status_code == 404


def test_the_warm_command_builds_every_profiles_summaries(home, monkeypatch):
    from hermes_explorer import stores
    from insights_app import summary_store
    from insights_app.models import StoredSummary

    monkeypatch.setattr("sys.stdout.write", lambda text: None, raising=False)
    call_command("insights_warm", "--no-failures")
    for profile in PROFILES:
        with stores.using(stores.by_name(profile)):
            key = summary_store.store_key()
        assert StoredSummary.objects.filter(store_key=key).count() == len(home.sessions[profile]), (
            profile
        )


def test_each_profiles_report_links_to_its_own_lists(home, staff_client):
    """The report's links to the session list are reused across its rows, never across
    profiles: a second profile's report links into that profile."""
    for profile in PROFILES:
        models = report(staff_client, f"/p/{profile}{WINDOW}")["models"]
        assert models and all(m["url"].startswith(f"/p/{profile}/sessions/") for m in models)
