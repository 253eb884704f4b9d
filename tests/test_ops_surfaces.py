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


def run_gunicorn(tmp_path, extra_env: dict[str, str]) -> str:
    """Start the real gunicorn with ``deploy/gunicorn.conf.py`` on a free port, ask it for a URL
    with a query string (and a Referer that has one), stop it: everything it wrote."""
    import os
    import signal
    import subprocess
    import sys
    import urllib.request

    from tests import servers
    from tests.builders import StateDB
    from tests.cluster import ROOT, SECRET_KEY

    store = tmp_path / "state.db"
    if not store.exists():
        StateDB.create(store, "current").close()
    port = servers.free_port()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "DJANGO_SETTINGS_MODULE": "hermes_explorer.settings",
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": SECRET_KEY,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_SECURE_COOKIES": "0",
        "HERMES_STATE_DB": str(store),
        "HERMES_EXPLORER_DATA_DIR": str(tmp_path / "data"),
        "GUNICORN_PORT": str(port),
        "GUNICORN_WORKERS": "1",
        "GUNICORN_THREADS": "1",
        **extra_env,
    }
    output = tmp_path / "gunicorn.out"
    with open(output, "wb") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py"]
            + ["hermes_explorer.wsgi:application"],
            cwd=ROOT,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            servers.wait_for_port(port, 60, proc=proc)
            asked = urllib.request.Request(
                f"http://127.0.0.1:{port}/healthz?q=tangerine-passphrase&content__gte=sk-a",
                headers={"Referer": f"http://127.0.0.1:{port}/search/?q=vault-words"},
            )
            with urllib.request.urlopen(asked, timeout=30) as response:
                assert response.status == 200
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(30)
    return output.read_text()


def test_gunicorn_logs_no_query_string_with_the_deployed_settings(tmp_path):
    default = run_gunicorn(tmp_path, {})
    assert "Booting worker" in default  # its own log is there
    assert "/healthz" in default  # the app's request line
    assert "GET /healthz HTTP/1.1" not in default  # no access log unless asked for
    asked = run_gunicorn(tmp_path, {"GUNICORN_ACCESS_LOG": "-"})
    assert '"GET /healthz HTTP/1.1" 200' in asked
    for output in (default, asked):
        for word in ("tangerine", "content__gte", "sk-a", "vault-words", "healthz?", "search/?"):
            assert word not in output, word


@pytest.mark.django_db(databases=STORE_DBS)
def test_long_exports_are_bounded_host_wide_and_hold_their_slot_to_the_end(current_store, settings):
    settings.HERMES_EXPORT_CONCURRENCY = 1
    analyst = client_for("analyst")
    running = analyst.get("/sessions/?_export=csv")
    assert running.status_code == 200  # streaming, not read yet: it holds the one slot
    for url in (
        "/sessions/?_export=json",
        "/sessions/?_export=jsonl",
        "/sessions/?_export=dataset",
        "/messages/?_export=csv",
        "/state/messages.csv?_stream=on",
        "/state/sessions.csv?_stream=on&_dl=1",
    ):
        busy = analyst.get(url)
        assert busy.status_code == 429, url
        assert busy["Retry-After"] == "10", url
        assert b"Too many downloads" in busy.content, url
    # Pages, one page of the old API's CSV and its JSON are not long exports.
    assert analyst.get("/sessions/").status_code == 200
    assert analyst.get("/state/sessions.csv").status_code == 200
    assert analyst.get("/state/sessions.json").status_code == 200
    # The slot is given back when the stream ends...
    assert b"".join(running.streaming_content)
    read = analyst.get("/sessions/?_export=dataset")
    assert read.status_code == 200 and b"".join(read.streaming_content)
    # ...and when the client goes away (the server closes the response), read or not.
    for url in ("/state/messages.csv?_stream=on", "/messages/?_export=json"):
        gone = analyst.get(url)
        assert gone.status_code == 200
        next(iter(gone.streaming_content), None)
        gone.close()
    unread = analyst.get("/sessions/?_export=jsonl")
    assert unread.status_code == 200
    unread.close()
    last = analyst.get("/sessions/?_export=csv")
    assert last.status_code == 200
    last.close()


@pytest.mark.django_db(databases=STORE_DBS)
@pytest.mark.parametrize(
    "query",
    [{}, {"source": "cli"}, {"id": ["20251231_220000_0a0b0c", "20251231_100000_e1e2e3"]}],
    ids=["all", "filtered", "id"],
)
def test_the_dataset_holds_exactly_the_sessions_the_lists_json_export_holds(current_store, query):
    import json

    analyst = client_for("analyst")
    listed = analyst.get("/sessions/", {**query, "_export": "json"})
    expected = [row["id"] for row in json.loads(b"".join(listed.streaming_content))]
    dataset = analyst.get("/sessions/", {**query, "_export": "dataset"})
    assert dataset.status_code == 200
    lines = b"".join(dataset.streaming_content).decode().splitlines()
    assert [json.loads(line)["metadata"]["session_id"] for line in lines] == expected
    assert expected
    if "id" in query:
        # The chosen sessions, and only them, on the page and in every export.
        assert sorted(expected) == sorted(query["id"])
        page = analyst.get("/sessions/", query).content.decode()
        assert all(sid in page for sid in query["id"])
