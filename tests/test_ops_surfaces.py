"""The operations surfaces: what ``/metrics`` and ``/healthz`` tell whom, with labels a client
cannot choose."""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command
from django.test import Client

from tests.profile_home import PROFILE_DBS
from tests.roles_helpers import client_for, make_user

STORE_DBS = ["default", "hermes"]


def request_series(body: str) -> set[str]:
    return set(re.findall(r"^hermes_explorer_requests_total\{[^}]*\}", body, re.M))


@pytest.mark.django_db(databases=STORE_DBS)
def test_made_up_methods_and_statuses_share_one_label_each(current_store):
    client = Client()
    client.get("/healthz")
    before = request_series(client.get("/metrics").content.decode())
    for n in range(25):
        assert client.generic(f"BREW{n}X", "/healthz").status_code == 405
    body = client.get("/metrics").content.decode()
    assert "BREW" not in body
    assert 'method="other"' in body
    # Twenty-five new methods add at most the one series of "other" (and the scrape's own).
    added = request_series(body) - before
    assert all('method="other"' in s or 'view="metrics"' in s for s in added), added
    assert len(added) <= 2


@pytest.mark.django_db(databases=PROFILE_DBS)
def test_metrics_name_only_the_profiles_restricted_staff_may_see(home):
    everyone = client_for("staff")
    for profile in ("default", "coder", "support"):
        assert everyone.get(f"/p/{profile}/sessions/").status_code == 200
    carol = Client()
    carol.force_login(make_user("staff", "carol"))
    call_command("profiles", "restrict", "carol", "coder")
    seen = carol.get("/metrics", REMOTE_ADDR="192.0.2.9").content.decode()
    assert 'profile="coder"' in seen and 'alias="hermes@coder"' in seen
    assert 'alias="app"' in seen and "hermes_explorer_requests_total" in seen
    for hidden in ("default", "support", "cron"):
        assert f'profile="{hidden}"' not in seen
        assert f"@{hidden}" not in seen
    assert 'alias="hermes"' not in seen  # the alias of the settings' file: no store of hers
    # The monitor on the loopback address and unrestricted staff see every store.
    for reader in (Client(), everyone):
        every = reader.get("/metrics").content.decode()
        for profile in ("default", "coder", "support", "cron"):
            assert f'hermes_explorer_store_readable{{profile="{profile}"}} 1.0' in every
        assert 'alias="hermes@support"' in every and 'alias="hermes@default"' in every
    # /healthz tells carol of her profile only, its default included.
    health = carol.get("/healthz").json()
    assert [s["profile"] for s in health["stores"]] == ["coder"]
    assert health["state_db"]["shape"] == next(iter(health["stores"]))["shape"]


FORWARDING = {
    "HTTP_X_FORWARDED_FOR": "192.0.2.9",
    "HTTP_X_REAL_IP": "192.0.2.9",
    "HTTP_FORWARDED": "for=192.0.2.9;proto=https",
    "HTTP_X_FORWARDED_PROTO": "https",
    "HTTP_X_FORWARDED_HOST": "explorer.example",
    "HTTP_VIA": "1.1 caddy",
}


@pytest.mark.django_db(databases=STORE_DBS)
@pytest.mark.parametrize("header", sorted(FORWARDING))
def test_a_request_through_a_proxy_is_not_the_loopback_monitor(current_store, header):
    """Any forwarding header a proxy (Caddy, or another) may add means "not the monitor"."""
    client = Client()
    assert client.get("/metrics").status_code == 200
    assert "stores" in client.get("/healthz").json()
    proxied = {header: FORWARDING[header]}
    assert client.get("/metrics", **proxied).status_code == 403
    assert set(client.get("/healthz", **proxied).json()) == {
        "status",
        "stores_readable",
        "elapsed_ms",
    }


@pytest.mark.django_db(databases=STORE_DBS)
def test_every_staff_where_is_audited_like_a_comparison(current_store):
    from accounts_app.models import AuditEvent

    staff = client_for("staff")
    for url in (
        "/state/messages.json?_where=content+like+'sk-%25'",
        "/state/messages.json?_where=\"CONTENT\">='sk-a'",
        "/state/sessions.json?_where=length(system_prompt)>10",
        "/state/messages?_where=content+like+'%25key%25'",
    ):
        before = AuditEvent.objects.filter(action=AuditEvent.FILTER).count()
        assert staff.get(url).status_code == 200, url
        events = AuditEvent.objects.filter(action=AuditEvent.FILTER)
        assert events.count() == before + 1, url
        assert "_where=" in events.first().detail and events.first().username == "user-staff"


@pytest.mark.django_db(databases=PROFILE_DBS)
def test_the_api_under_a_profile_answers_json_errors_alike_for_hidden_and_made_up(home):
    from accounts_app import tokens

    signed_out = {
        p: Client().get(f"/p/{p}/state/sessions.json") for p in ("coder", "default", "madeup")
    }
    for response in signed_out.values():
        assert response.status_code == 401 and response["Content-Type"] == "application/json"
        assert response.json() == signed_out["madeup"].json()
        assert response.json()["ok"] is False and response.json()["status"] == 401
    alice = make_user("analyst", "alice")
    call_command("profiles", "restrict", "alice", "coder")
    _token, text = tokens.create(alice)
    browser = Client()
    browser.force_login(alice)
    # Pages under a hidden profile keep their HTML 404.
    assert browser.get("/p/default/sessions/").status_code == 404
    for client in (browser, Client(headers={"Authorization": f"Bearer {text}"})):
        assert client.get("/p/coder/state/sessions.json").status_code == 200
        hidden = client.get("/p/default/state/sessions.json?_size=1")
        made_up = client.get("/p/madeup/state/sessions.json?_size=1")
        for response in (hidden, made_up):
            assert response.status_code == 404 and response["Content-Type"] == "application/json"
            assert response.json() == {
                "ok": False,
                "error": "No such profile.",
                "status": 404,
                "title": None,
            }
        csv = client.get("/p/default/state/sessions.csv")
        assert csv.status_code == 404 and csv.content == b"No such profile.\n"
