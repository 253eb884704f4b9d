"""Sign-in for scripts: ``curl -u`` (HTTP Basic) and personal tokens on the API and exports."""

from __future__ import annotations

import base64
import io
import json
from datetime import timedelta

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client, override_settings
from django.utils import timezone

from accounts_app import tokens
from accounts_app.models import ApiToken
from tests.roles_helpers import PASSWORD, make_user

pytestmark = [pytest.mark.django_db(databases=["default", "hermes"]), pytest.mark.appdb]


def basic(username: str, password: str) -> dict:
    raw = base64.b64encode(f"{username}:{password}".encode()).decode()
    return {"HTTP_AUTHORIZATION": f"Basic {raw}"}


def bearer(text: str) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {text}"}


@pytest.fixture
def scripts(current_store):
    return Client(), make_user("analyst", "ana"), make_user("viewer", "vic")


def test_curl_u_reads_the_api_with_the_accounts_role(scripts):
    client, _analyst, _viewer = scripts
    response = client.get("/state/sessions.json", **basic("ana", PASSWORD))
    assert response.status_code == 200 and json.loads(response.content)["table"] == "sessions"
    assert "sessionid" not in response.cookies  # signed in for this request only
    assert client.get("/state/messages.json", **basic("ana", PASSWORD)).status_code == 200
    refused = client.get("/state/messages.json", **basic("vic", PASSWORD))
    assert refused.status_code == 403 and json.loads(refused.content)["ok"] is False
    assert client.get("/state/sessions.json", **basic("vic", PASSWORD)).status_code == 200


def test_wrong_or_missing_credentials_answer_401_not_the_sign_in_page(scripts):
    client = scripts[0]
    wrong = client.get("/state/sessions.json", **basic("ana", "nope"))
    assert wrong.status_code == 401 and wrong["WWW-Authenticate"].startswith("Basic")
    assert json.loads(wrong.content)["ok"] is False
    anonymous = client.get("/state/sessions.csv")
    assert anonymous.status_code == 401 and anonymous["Content-Type"].startswith("text/plain")
    garbled = client.get("/state/sessions.json", HTTP_AUTHORIZATION="Basic !!!")
    assert garbled.status_code == 401
    other = client.get("/state/sessions.json", HTTP_AUTHORIZATION="Digest x")
    assert other.status_code == 401


def test_basic_sign_in_is_throttled_by_the_same_lockout(scripts):
    client = scripts[0]
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert client.get("/state/sessions.json", **basic("ana", "wrong")).status_code == 401
    # The failure that reaches the limit is already answered as a lockout.
    assert client.get("/state/sessions.json", **basic("ana", "wrong")).status_code == 429
    locked = client.get("/state/sessions.json", **basic("ana", PASSWORD))
    assert locked.status_code == 429
    assert "locked" in json.loads(locked.content)["error"]


def test_a_token_made_on_the_command_line_works_until_revoked(scripts):
    client = scripts[0]
    out, err = io.StringIO(), io.StringIO()
    call_command("api_token", "create", "ana", "--name", "cron", stdout=out, stderr=err)
    text = out.getvalue().strip()
    token = ApiToken.objects.get(user__username="ana")
    assert text.startswith("hxp_") and token.key_id in text
    assert text.split("_")[-1] not in token.secret_hash  # stored hashed
    response = client.get("/state/messages.json", **bearer(text))
    assert response.status_code == 200
    token.refresh_from_db()
    assert token.last_used_at is not None
    # Every export URL, not only /state/…
    assert client.get("/sessions/", {"_export": "csv"}, **bearer(text)).status_code == 200
    # Never from the query string.
    assert client.get("/state/sessions.json", {"token": text}).status_code == 401
    call_command("api_token", "revoke", token.key_id, stdout=io.StringIO())
    assert client.get("/state/messages.json", **bearer(text)).status_code == 401


def test_expired_forged_and_inactive_tokens_are_refused(scripts):
    client, analyst, _viewer = scripts
    token, text = tokens.create(analyst, expires_in_days=1)
    assert client.get("/state/sessions.json", **bearer(text)).status_code == 200
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert client.get("/state/sessions.json", **bearer(text)).status_code == 401
    _t2, good = tokens.create(analyst)
    forged = good[:-4] + ("AAAA" if not good.endswith("AAAA") else "BBBB")
    assert client.get("/state/sessions.json", **bearer(forged)).status_code == 401
    analyst.is_active = False
    analyst.save()
    assert client.get("/state/sessions.json", **bearer(good)).status_code == 401


def test_credentials_are_not_read_on_pages(scripts):
    client = scripts[0]
    response = client.get("/sessions/", **basic("ana", PASSWORD))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


@override_settings(
    BEHIND_TLS_PROXY=True, SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https")
)
def test_behind_the_tls_proxy_credentials_over_plain_http_are_refused(scripts):
    client, analyst, _viewer = scripts
    _token, text = tokens.create(analyst)
    assert client.get("/state/sessions.json", **basic("ana", PASSWORD)).status_code == 403
    assert client.get("/state/sessions.json", **bearer(text)).status_code == 403
    secure = client.get(
        "/state/sessions.json", HTTP_X_FORWARDED_PROTO="https", **bearer(text), secure=True
    )
    assert secure.status_code == 200


@pytest.mark.render_context
def test_the_account_page_makes_shows_once_and_revokes_tokens(scripts):
    client, analyst, _viewer = scripts
    client.force_login(analyst)
    made = client.post("/accounts/tokens/", {"name": "notebook", "expires": "30"})
    assert made.status_code == 200
    text = made.context["created"]
    assert text.startswith("hxp_") and text in made.content.decode()
    token = ApiToken.objects.get(user=analyst)
    assert token.name == "notebook" and token.expires_at is not None
    listing = client.get("/accounts/tokens/")
    assert text not in listing.content.decode() and token.key_id in listing.content.decode()
    other = make_user("analyst", "someone-else")
    _t, theirs = tokens.create(other)
    stranger = ApiToken.objects.get(user=other)
    assert client.post(f"/accounts/tokens/{stranger.key_id}/revoke/").status_code == 404
    client.post(f"/accounts/tokens/{token.key_id}/revoke/")
    assert Client().get("/state/sessions.json", **bearer(text)).status_code == 401
    assert Client().get("/state/sessions.json", **bearer(theirs)).status_code == 200
