"""Exports name the profile of each row whenever more than one store is served."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from tests.profile_home import PROFILE_DBS, PROFILES

pytestmark = pytest.mark.django_db(databases=PROFILE_DBS)


# Sessions per profile of the module's HERMES_HOME (the shared ``home`` fixture).
HOME_SESSIONS_PER_PROFILE = 5


def read_csv(response) -> list[dict]:
    assert response.status_code == 200
    text = b"".join(response.streaming_content).decode()
    return list(csv.DictReader(io.StringIO(text)))


def test_the_session_export_has_every_profile_and_a_profile_column(home, staff_client):
    rows = read_csv(staff_client.get("/sessions/?_export=csv"))
    assert rows and list(rows[0])[0] == "profile"
    got = {(r["profile"], r["id"]) for r in rows}
    assert got == {(p, sid) for p, made in home.sessions.items() for sid, _ in made}
    # Each profile in turn, newest first within it.
    order = [r["profile"] for r in rows]
    assert order == sorted(order, key=list(PROFILES).index) or len(set(order)) == len(PROFILES)
    for profile in PROFILES:
        mine = [float(r["started_at_epoch"]) for r in rows if r["profile"] == profile]
        assert mine == sorted(mine, reverse=True)


def test_a_profile_page_exports_with_the_profile_column_too(home, staff_client):
    rows = read_csv(staff_client.get("/p/coder/sessions/?_export=csv"))
    assert {r["profile"] for r in rows} == {"coder"}
    assert len(rows) == len(home.sessions["coder"])


def test_the_message_export_names_the_profile(home, staff_client):
    response = staff_client.get("/messages/?_export=jsonl&profile=cron&profile=support")
    lines = [json.loads(x) for x in b"".join(response.streaming_content).decode().splitlines()]
    assert {x["profile"] for x in lines} == {"cron", "support"}
    assert len(lines) == home.messages["cron"] + home.messages["support"]


def test_a_restricted_user_exports_only_the_allowed_profiles(home, client):
    user = get_user_model().objects.create_user("carol", password="pw-carol-123")
    call_command("roles", "grant", "carol", "analyst")
    call_command("profiles", "restrict", "carol", "cron")
    client.force_login(user)
    rows = read_csv(client.get("/sessions/?_export=csv"))
    assert {r["profile"] for r in rows} == {"cron"}
    text = b"".join(client.get("/messages/?_export=csv").streaming_content).decode()
    assert "onlydefault" not in text and "onlycron" in text
    assert read_csv(client.get("/sessions/?_export=csv&profile=default")) == []


def test_one_store_exports_as_it_always_did(current_store, staff_client):
    rows = read_csv(staff_client.get("/sessions/?_export=csv"))
    assert rows and "profile" not in rows[0]


def test_transcript_exports_name_the_profile(home, staff_client):
    sid = home.sessions["support"][1][0]
    md = staff_client.get(f"/p/support/sessions/{sid}/export.md")
    assert "support" in md["Content-Disposition"]
    assert "- **Profile:** `support`" in b"".join(md.streaming_content).decode()
    data = json.loads(
        b"".join(staff_client.get(f"/p/support/sessions/{sid}/export.json").streaming_content)
    )
    assert data["export"]["profile"] == "support"
    assert data["session"]["id"] == sid
