"""Access and hardening: each role sees only what it may (pages and exports alike), secrets
stay hidden unless staff reveal them (logged), sign-in is throttled, headers are strict, and
``check --deploy`` passes with the documented production settings."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connections
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import Resolver404, resolve

from accounts_app.models import AuditEvent
from accounts_app.roles import role_of
from hermes_explorer.security import client_ip
from sessions_app.selectors import message_for_reveal
from tests.builders import NASTY_NOW, StateDB, tool_call
from tests.conftest import use_store
from tests.roles_helpers import PASSWORD, client_for, make_user

# The tests that read or write the app's own tables or cache beyond signing in (roles, audit
# events, the sign-in lockout, accounts) are marked ``appdb`` and rerun on PostgreSQL and Redis;
# the others check the views' own rules, which no app database changes.
pytestmark = pytest.mark.django_db(databases=["default", "hermes"])

ROOT = Path(__file__).resolve().parent.parent
RANK = {None: -1, "viewer": 0, "analyst": 1, "staff": 2}

# url (formatted with the fixture's facts), the lowest role that may open it.
ACCESS = [
    ("/", "viewer"),
    ("/sessions/", "viewer"),
    ("/sessions/?source=telegram&sort=-started_at", "viewer"),
    ("/sessions/{xss_session_id}/", "viewer"),
    ("/sessions/{tool_session_id}/messages/{rare_message_id}/", "viewer"),
    ("/insights/", "viewer"),
    ("/insights/?days=30&source=telegram", "viewer"),
    ("/state/sessions?source=telegram&_sort_desc=started_at", "viewer"),
    ("/messages/", "analyst"),
    ("/messages/?session_id={xss_session_id}", "analyst"),
    ("/messages/?role=user", "analyst"),
    ("/search/?q=telegram", "analyst"),
    ("/state/messages?session_id={xss_session_id}", "analyst"),
    ("/state/messages?_search=telegram", "analyst"),
    ("/sessions/{tool_session_id}/messages/{rare_message_id}.txt", "analyst"),
    ("/sessions/?_export=csv", "analyst"),
    ("/sessions/?source=telegram&_export=json", "analyst"),
    ("/messages/?_export=jsonl", "analyst"),
    ("/messages/?session_id={xss_session_id}&_export=csv", "analyst"),
    ("/search/?q=telegram&_export=csv", "analyst"),
    ("/insights/?_export=json", "analyst"),
    ("/?_export=csv", "analyst"),
    ("/sessions/{xss_session_id}/export.md", "analyst"),
    ("/sessions/{xss_session_id}/export.json", "analyst"),
    # The old API: scripts of every role read the session metadata (content columns null).
    ("/state/sessions.csv", "viewer"),
    ("/state/sessions.json", "viewer"),
    ("/state/messages.csv?session_id={xss_session_id}", "analyst"),
    ("/state/messages.json?session_id={xss_session_id}", "analyst"),
    ("/state?sql=SELECT+1", "staff"),
    ("/sql/", "staff"),
    ("/sql/?query=sessions-with-cost", "staff"),
    ("/sql/?sql=SELECT+1&_export=csv", "staff"),
    ("/sql/saved/", "staff"),
]

# The pages of the matrix that read the app's own tables or cache (annotations, cached
# summaries, saved queries): their rows of every role also run on PostgreSQL and Redis.
APPDB_PAGES = {"/", "/sessions/{xss_session_id}/", "/insights/", "/sql/saved/"}


def _exists(path: str) -> bool:
    try:
        resolve(path.split("?")[0])
    except Resolver404:
        return False
    return True


@pytest.mark.parametrize("role", ["viewer", "analyst", "staff"])
@pytest.mark.parametrize(
    "url, minimum",
    [
        pytest.param(url, minimum, id=url, marks=[pytest.mark.appdb] if url in APPDB_PAGES else [])
        for url, minimum in ACCESS
    ],
)
def test_each_role_opens_exactly_what_it_may(current_store, role, url, minimum):
    path = url.format(**vars(current_store))
    if not _exists(path):
        pytest.skip(f"{path.split('?')[0]} is not built yet")
    client = client_for(role)
    response = client.get(path)
    if response.streaming:
        b"".join(response.streaming_content)
    if RANK[role] >= RANK[minimum]:
        assert response.status_code in (200, 301, 302), (path, response.status_code)
    else:
        assert response.status_code == 403, (path, response.status_code)
        body = response.content.decode()
        assert f"role ({role})" in body or f"<strong>{role}</strong> role" in body
        assert "ask a staff member" in body.lower()
        assert not response.streaming


@pytest.mark.appdb
def test_a_user_without_any_group_is_a_viewer(current_store):
    user = make_user(None)
    assert role_of(user) == "viewer"
    client = Client()
    client.force_login(user)
    assert client.get("/sessions/").status_code == 200
    assert client.get("/sessions/?_export=csv").status_code == 403


@pytest.mark.appdb
def test_a_superuser_without_groups_can_do_everything(current_store, django_user_model):
    admin = django_user_model.objects.create_superuser("root", password="x")
    client = Client()
    client.force_login(admin)
    assert client.get("/sql/").status_code == 200
    assert client.get("/sessions/?_export=csv").status_code == 200


def test_anonymous_requests_go_to_sign_in_but_healthz_answers(client, current_store):
    for url in ["/", "/sessions/", "/sessions/?_export=csv", "/sql/"]:
        response = client.get(url)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")
    # The old API is read by scripts: a 401 that says how to sign in, not a login form.
    for url in ["/state/sessions.csv", "/state/sessions.json", "/state.json"]:
        response = client.get(url)
        assert response.status_code == 401 and response["WWW-Authenticate"].startswith("Basic")
    assert client.get("/healthz").status_code == 200
    assert client.get("/accounts/login/").status_code == 200


@pytest.mark.render_context
def test_viewer_session_page_shows_metadata_but_never_queries_the_transcript(current_store):
    client = client_for("viewer")
    with CaptureQueriesContext(connections["hermes"]) as queries:
        response = client.get(f"/sessions/{current_store.tool_session_id}/")
    assert response.status_code == 200
    body = response.content.decode()
    assert "Tidy the backup scripts" in body  # the title is metadata
    assert "Usage by model" in body
    assert "message content needs the analyst role" in body
    assert current_store.rare_word not in body
    assert response.context["transcript"] is None
    assert not any('FROM "messages"' in q["sql"] for q in queries.captured_queries)


def test_analyst_session_page_shows_the_transcript(current_store):
    response = client_for("analyst").get(f"/sessions/{current_store.tool_session_id}/")
    assert current_store.rare_word in response.content.decode()


def test_viewer_session_table_hides_first_message_previews(current_store):
    untitled_preview = "are you there?"
    viewer = client_for("viewer").get("/sessions/?source=discord").content.decode()
    analyst = client_for("analyst").get("/sessions/?source=discord").content.decode()
    assert untitled_preview in analyst
    assert untitled_preview not in viewer
    assert current_store.untitled_session_id in viewer


@pytest.mark.appdb
@pytest.mark.render_context
def test_role_names_are_in_the_page_context(current_store):
    response = client_for("analyst").get("/sessions/")
    assert response.context["role"] == "analyst"
    assert response.context["can_see_content"] is True
    assert response.context["can_export"] is True
    assert response.context["can_use_sql"] is False


# Secrets -----------------------------------------------------------------------------------------
OPENAI = "sk-proj-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe" * 2
GITHUB = "ghp_" + "Q1w2E3r4T5" * 4
PASSWORD_VALUE = "Correct-Horse-Battery-9"


@pytest.fixture
def secret_store(tmp_path):
    path = tmp_path / "secrets.db"
    with StateDB.create(path, "current") as db:
        db.session("20260101_090000_5ec7e7", title="Deploy the bot", started_at=NASTY_NOW - 3600)
        db.message("20260101_090000_5ec7e7", "user", f"here is the key: OPENAI_API_KEY={OPENAI}")
        db.message(
            "20260101_090000_5ec7e7",
            "assistant",
            None,
            tool_calls=[
                tool_call(
                    "terminal", {"command": f"git push https://{GITHUB}@github.com/x/y"}, "call_1"
                )
            ],
            reasoning=f"The env has DB_PASSWORD={PASSWORD_VALUE}, do not echo it.",
        )
        result = db.message(
            "20260101_090000_5ec7e7",
            "tool",
            f"pushed with token {GITHUB}",
            tool_call_id="call_1",
            tool_name="terminal",
        )
        db.message("20260101_090000_5ec7e7", "assistant", "All done, nothing secret here.")
        db.refresh_counters()
    use_store(path)
    yield {"session_id": "20260101_090000_5ec7e7", "first": 1, "tool_result": result}
    connections["hermes"].close()


def test_transcript_hides_secrets_in_content_arguments_results_and_reasoning(secret_store):
    body = client_for("analyst").get(f"/sessions/{secret_store['session_id']}/").content.decode()
    for secret in (OPENAI, GITHUB, PASSWORD_VALUE):
        assert secret not in body
    assert "[redacted: openai key]" in body
    assert "[redacted: github token]" in body
    assert "[redacted: secret]" in body
    assert "Reveal" not in body, "only staff get the reveal button"


def test_plain_text_view_of_a_message_is_redacted(secret_store):
    url = f"/sessions/{secret_store['session_id']}/messages/{secret_store['first']}.txt"
    response = client_for("analyst").get(url)
    assert response.status_code == 200
    assert OPENAI not in response.content.decode()


def test_redaction_can_be_turned_off(secret_store, settings):
    settings.HERMES_REDACT_SECRETS = False
    body = client_for("analyst").get(f"/sessions/{secret_store['session_id']}/").content.decode()
    assert OPENAI in body


@pytest.mark.appdb
def test_staff_reveal_one_message_and_the_reveal_is_logged(secret_store, staff_user):
    client = Client()
    client.force_login(staff_user)
    page = client.get(f"/sessions/{secret_store['session_id']}/").content.decode()
    assert "Reveal 1 hidden secret" in page
    assert OPENAI not in page
    url = f"/sessions/{secret_store['session_id']}/messages/{secret_store['first']}/reveal"
    assert client.get(url).status_code == 405
    response = client.post(url, REMOTE_ADDR="10.1.2.3")
    assert response.status_code == 200
    assert OPENAI in response.content.decode()
    assert "no-store" in response["Cache-Control"] or "no-cache" in response["Cache-Control"]
    event = AuditEvent.objects.get(action=AuditEvent.REVEAL)
    assert (event.user, event.session_id, event.message_id, event.ip) == (
        staff_user,
        secret_store["session_id"],
        secret_store["first"],
        "10.1.2.3",
    )


@pytest.mark.appdb
def test_reveal_needs_staff_and_a_csrf_token(secret_store, staff_user):
    url = f"/sessions/{secret_store['session_id']}/messages/{secret_store['first']}/reveal"
    for role in ("viewer", "analyst"):
        response = client_for(role).post(url)
        assert response.status_code == 403
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(staff_user)
    assert strict.post(url).status_code == 403
    assert not AuditEvent.objects.exists()


def test_the_reveal_page_shows_reasoning_and_tool_calls_unredacted(secret_store, staff_client):
    sid, mid = secret_store["session_id"], secret_store["first"] + 1
    body = staff_client.post(f"/sessions/{sid}/messages/{mid}/reveal").content.decode()
    assert PASSWORD_VALUE in body and GITHUB in body
    assert f"Message {mid}, unredacted" in body and "(no content)" in body
    assert AuditEvent.objects.get(action=AuditEvent.REVEAL).message_id == mid


def test_the_reveal_selector_reads_one_message_of_its_session_unredacted(secret_store):
    sid = secret_store["session_id"]
    message = message_for_reveal(session_id=sid, message_id=secret_store["first"] + 1)
    assert (message.session_id, message.role, message.text) == (sid, "assistant", "")
    assert PASSWORD_VALUE in message.reasoning_text
    assert [c.name for c in message.calls] == ["terminal"] and GITHUB in message.calls[0].arguments
    assert not message.malformed_calls and not message.truncated
    assert message_for_reveal(session_id="other-session", message_id=message.id) is None
    assert message_for_reveal(session_id=sid, message_id=999999) is None


def test_reveal_of_an_unknown_message_is_404(secret_store, staff_client):
    url = f"/sessions/{secret_store['session_id']}/messages/999999/reveal"
    assert staff_client.post(url).status_code == 404
    url = f"/sessions/other-session/messages/{secret_store['first']}/reveal"
    assert staff_client.post(url).status_code == 404


@pytest.mark.parametrize(
    "url",
    [
        "/sessions/{sid}/export.md",
        "/sessions/{sid}/export.json",
        "/messages/?session_id={sid}&_export=csv",
        "/messages/?session_id={sid}&_export=jsonl",
        "/messages/?session_id={sid}",
        "/search/?q=pushed",
        "/search/?q=pushed&_export=csv",
        "/state/messages.json?session_id={sid}",
    ],
)
def test_exports_and_other_content_views_are_redacted(secret_store, url):
    path = url.format(sid=secret_store["session_id"])
    if not _exists(path):
        pytest.skip(f"{path.split('?')[0]} is not built yet")
    response = client_for("analyst").get(path, follow=True)
    assert response.status_code == 200
    body = (
        b"".join(response.streaming_content) if response.streaming else response.content
    ).decode()
    for secret in (OPENAI, GITHUB, PASSWORD_VALUE):
        assert secret not in body, f"{secret[:12]}… leaked by {path}"


# Sign-in -----------------------------------------------------------------------------------------
def _login(client, username, password, ip="127.0.0.1", **extra):
    return client.post(
        "/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=ip, **extra
    )


@pytest.mark.appdb
def test_failed_sign_ins_lock_the_user_out_from_that_address(current_store, settings):
    make_user("analyst", username="alice")
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT):
        response = _login(client, "alice", "wrong-password")
        assert response.status_code in (200, 429)
    locked = _login(client, "alice", PASSWORD)
    assert locked.status_code == 429
    assert "Too many failed sign-ins" in locked.content.decode()
    assert "_auth_user_id" not in client.session
    # The same user from another address, and another user from this one, still sign in.
    assert _login(Client(), "alice", PASSWORD, ip="192.0.2.7").status_code == 302
    make_user("viewer", username="bob")
    assert _login(Client(), "bob", PASSWORD).status_code == 302


@pytest.mark.appdb
def test_a_successful_sign_in_resets_the_failure_count(current_store, settings):
    make_user("viewer", username="carol")
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        _login(Client(), "carol", "nope")
    assert _login(Client(), "carol", PASSWORD).status_code == 302
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        _login(Client(), "carol", "nope")
    assert _login(Client(), "carol", PASSWORD).status_code == 302


@pytest.mark.appdb
def test_sign_in_form_needs_a_csrf_token(current_store):
    make_user("viewer", username="dave")
    client = Client(enforce_csrf_checks=True)
    assert _login(client, "dave", PASSWORD).status_code == 403


def test_client_address_comes_from_the_proxy_only_when_behind_it(rf, settings):
    request = rf.get("/", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.9")
    settings.HERMES_TRUST_FORWARDED_FOR = False
    assert client_ip(request) == "127.0.0.1"
    settings.HERMES_TRUST_FORWARDED_FOR = True
    assert client_ip(request) == "203.0.113.9", "the right-most entry is the one our proxy added"
    forged = rf.get("/", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="not-an-ip")
    assert client_ip(forged) == "127.0.0.1"


def test_proxy_user_header_is_ignored_unless_configured(client, current_store):
    response = client.get("/sessions/", HTTP_X_FORWARDED_USER="mallory")
    assert response.status_code == 302


@pytest.mark.appdb
@pytest.mark.render_context
def test_proxy_user_header_signs_in_a_new_viewer_when_configured(current_store, settings):
    settings.HERMES_REMOTE_USER_HEADER = "X-Forwarded-User"
    auth = settings.MIDDLEWARE.index("django.contrib.auth.middleware.AuthenticationMiddleware")
    settings.MIDDLEWARE = [
        *settings.MIDDLEWARE[: auth + 1],
        "hermes_explorer.security.ProxyUserMiddleware",
        *settings.MIDDLEWARE[auth + 1 :],
    ]
    settings.AUTHENTICATION_BACKENDS = [
        *settings.AUTHENTICATION_BACKENDS,
        "hermes_explorer.security.ProxyUserBackend",
    ]
    client = Client()
    response = client.get("/sessions/", HTTP_X_FORWARDED_USER="erin")
    assert response.status_code == 200
    assert response.context["user"].username == "erin"
    assert response.context["role"] == "viewer"
    assert client.get("/messages/", HTTP_X_FORWARDED_USER="erin").status_code in (403, 404)


# Headers -----------------------------------------------------------------------------------------
def test_pages_send_strict_security_headers(staff_client, current_store):
    response = staff_client.get("/sessions/")
    csp = response["Content-Security-Policy"]
    assert "default-src 'self'" in csp
    assert "script-src 'self'" in csp
    assert "style-src 'self'" in csp
    assert "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert response["X-Frame-Options"] == "DENY"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Cross-Origin-Opener-Policy"] == "same-origin"
    assert "Strict-Transport-Security" not in response  # plain http in tests


def test_hsts_is_sent_over_https(staff_client, current_store, settings):
    settings.SECURE_HSTS_SECONDS = 31_536_000
    response = staff_client.get("/sessions/", secure=True)
    assert response["Strict-Transport-Security"].startswith("max-age=31536000")


@pytest.mark.appdb
def test_cookies_are_http_only_and_same_site(current_store):
    make_user("viewer", username="frank")
    response = _login(Client(), "frank", PASSWORD)
    session_cookie = response.cookies["sessionid"]
    assert session_cookie["httponly"]
    assert session_cookie["samesite"] == "Lax"


class _InlineFinder(HTMLParser):
    """Collects what a strict CSP would block: inline scripts, style elements and attributes,
    event-handler attributes, javascript: URLs."""

    def __init__(self):
        super().__init__()
        self.problems: list[str] = []

    def handle_starttag(self, tag, attrs):
        names = dict(attrs)
        if tag == "script" and not names.get("src"):
            self.problems.append("inline <script>")
        if tag == "style":
            self.problems.append("<style> element")
        for name, value in attrs:
            if name == "style":
                self.problems.append(f'style="" on <{tag}>')
            if name.startswith("on"):
                self.problems.append(f"{name}= on <{tag}>")
            if name in ("href", "src", "action") and (value or "").strip().lower().startswith(
                "javascript:"
            ):
                self.problems.append(f"javascript: URL on <{tag}>")


PAGES = [
    "/",
    "/sessions/",
    "/sessions/{tool_session_id}/",
    "/sessions/{xss_session_id}/",
    "/messages/",
    "/search/?q=telegram",
    "/insights/",
    "/sql/?query=sessions-with-cost",
    "/sql/saved/",
    "/state/sessions",
    "/accounts/login/",
]


@pytest.mark.parametrize("url", PAGES)
def test_pages_have_no_inline_script_or_style(staff_client, current_store, url):
    path = url.format(**vars(current_store))
    if not _exists(path):
        pytest.skip(f"{path.split('?')[0]} is not built yet")
    response = staff_client.get(path, follow=True)
    assert response.status_code == 200
    finder = _InlineFinder()
    finder.feed(response.content.decode())
    assert finder.problems == []


# Deployment ----------------------------------------------------------------------------------------
def _env_example() -> dict[str, str]:
    values = {}
    for line in (ROOT / "deploy" / "env.example").read_text().splitlines():
        if line and not line.startswith("#") and "=" in line:
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


def test_env_example_lists_every_variable_the_settings_read():
    documented = set(
        re.findall(r"^#?([A-Z][A-Z0-9_]+)=", (ROOT / "deploy" / "env.example").read_text(), re.M)
    )
    read = set()
    for source in [ROOT / "hermes_explorer" / "settings.py", ROOT / "deploy" / "gunicorn.conf.py"]:
        text = source.read_text()
        read |= set(re.findall(r"env(?:_bool|_list)?\(\s*\"([A-Z][A-Z0-9_]+)\"", text))
        read |= set(re.findall(r"environ(?:\.get\(|\[)\s*\"([A-Z][A-Z0-9_]+)\"", text))
    missing = read - documented
    assert not missing, f"add to deploy/env.example: {sorted(missing)}"


# The roles command and groups ------------------------------------------------------------------------
@pytest.mark.appdb
def test_role_groups_exist_after_migrate(current_store):
    from django.contrib.auth.models import Group

    assert set(Group.objects.values_list("name", flat=True)) >= {"viewers", "analysts", "staff"}
    staff = Group.objects.get(name="staff")
    assert staff.permissions.filter(codename="change_user").exists()


@pytest.mark.appdb
def test_roles_command_grants_lists_and_revokes(current_store, django_user_model):
    make_user(None, username="gina")

    def gina():  # a fresh object: role_of caches the role on the user for one request
        return django_user_model.objects.get(username="gina")

    out = StringIO()
    call_command("roles", "grant", "gina", "analyst", stdout=out)
    assert role_of(gina()) == "analyst"
    call_command("roles", "grant", "gina", "staff", stdout=out)
    assert gina().is_staff and role_of(gina()) == "staff"
    listing = StringIO()
    call_command("roles", "list", stdout=listing)
    assert re.search(r"^gina\s+staff", listing.getvalue(), re.M)
    call_command("roles", "revoke", "gina", stdout=out)
    assert not gina().is_staff and role_of(gina()) == "viewer"
    with pytest.raises(CommandError, match="Unknown role"):
        call_command("roles", "grant", "gina", "overlord")
    with pytest.raises(CommandError, match="No account"):
        call_command("roles", "grant", "nobody", "viewer")


@pytest.mark.appdb
def test_staff_manage_accounts_in_the_admin(current_store):
    client = client_for("staff")
    assert client.get("/admin/auth/user/").status_code == 200
    assert client_for("analyst").get("/admin/").status_code == 302


@pytest.mark.appdb
def test_staff_reveal_of_a_multimodal_message_shows_its_text_on_every_shape(store, staff_client):
    """Multimodal content starts with a NUL: the reveal must cut it NUL-safely (plain
    ``substr()`` returns '' for it), and must not name a column the file lacks."""
    url = f"/sessions/{store.multimodal_session_id}/messages/{store.multimodal_message_id}/reveal"
    response = staff_client.post(url)
    assert response.status_code == 200
    body = response.content.decode()
    assert "What is in this photo? Sent from telegram." in body


# Secrets in metadata ------------------------------------------------------------------------
@pytest.fixture
def metadata_secret_store(tmp_path):
    path = tmp_path / "meta.db"
    with StateDB.create(path, "current") as db:
        db.session(
            "20260101_090000_me7a01",
            title=f"debug {OPENAI}",
            user_id=f"{GITHUB}",
            display_name=f"bot {GITHUB}",
            model=f"openai/{OPENAI}",
            started_at=NASTY_NOW - 3600,
            input_tokens=10,
        )
        db.message("20260101_090000_me7a01", "user", "the usual words zorblax")
        db.refresh_counters()
    use_store(path)
    yield "20260101_090000_me7a01"
    connections["hermes"].close()


@pytest.mark.parametrize("role", ["viewer", "analyst"])
def test_secrets_pasted_into_metadata_are_redacted_on_every_page(metadata_secret_store, role):
    client = client_for(role)
    sid = metadata_secret_store
    urls = ["/", "/sessions/", f"/sessions/{sid}/", "/insights/?days=30"]
    if role == "analyst":
        urls += ["/search/?q=zorblax", "/messages/"]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        body = response.content.decode()
        for secret in (OPENAI, GITHUB):
            assert secret not in body, (role, url)


def test_secrets_pasted_into_metadata_are_redacted_in_exports(metadata_secret_store):
    client = client_for("analyst")
    sid = metadata_secret_store
    for url in (
        "/sessions/?_export=csv",
        "/sessions/?_export=json",
        "/messages/?_export=jsonl",
        f"/sessions/{sid}/export.md",
        f"/sessions/{sid}/export.json",
        "/insights/?days=30&_export=json",
    ):
        response = client.get(url)
        assert response.status_code == 200, url
        data = (
            b"".join(response.streaming_content) if response.streaming else response.content
        ).decode()
        for secret in (OPENAI, GITHUB):
            assert secret not in data, url


@pytest.mark.render_context
def test_title_and_user_filters_never_confirm_a_secret(metadata_secret_store):
    client = client_for("viewer")
    for params in (
        {"title": OPENAI[:20]},
        {"title": OPENAI[8:30]},
        {"user_id": GITHUB},
    ):
        response = client.get("/sessions/", params)
        assert response.status_code == 200
        assert list(response.context["table"].data) == [], params
    # What the reader can see still filters.
    assert len(list(client.get("/sessions/", {"title": "debug"}).context["table"].data)) == 1


# Small doors ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "path",
    [
        "/accounts/password_reset/",
        "/accounts/password_reset/done/",
        "/accounts/reset/MQ/set-password/",
        "/accounts/reset/done/",
    ],
)
def test_there_are_no_anonymous_password_reset_pages(client, current_store, path):
    assert not _exists(path)
    response = client.post(path, {"email": "someone@example.org"})
    assert response.status_code in (302, 404)
    assert response.status_code == 404 or response["Location"].startswith("/accounts/login/")


@pytest.mark.appdb
def test_signed_in_users_still_change_their_own_password(current_store):
    client = client_for("viewer")
    assert client.get("/accounts/password_change/").status_code == 200


@pytest.mark.parametrize(
    "url, role",
    [
        ("/", "viewer"),
        ("/sessions/", "viewer"),
        ("/sessions/{xss_session_id}/", "viewer"),
        ("/insights/", "viewer"),
        ("/messages/", "analyst"),
        ("/search/?q=telegram", "analyst"),
        ("/sessions/?_export=csv", "analyst"),
        ("/sessions/{xss_session_id}/export.md", "analyst"),
        ("/state/sessions", "viewer"),
        ("/sql/", "staff"),
        ("/sql/saved/", "staff"),
        ("/messages/", "viewer"),  # the 403 page too
    ],
)
def test_content_pages_and_downloads_are_never_stored(current_store, url, role):
    path = url.format(**vars(current_store))
    if not _exists(path):
        pytest.skip(f"{path.split('?')[0]} is not built yet")
    response = client_for(role).get(path)
    if response.streaming:
        b"".join(response.streaming_content)
    assert response.status_code in (200, 302, 403)
    assert "no-store" in response["Cache-Control"]
    assert "private" in response["Cache-Control"]


def test_the_sign_in_page_is_not_stored_either(client, current_store):
    assert "no-store" in client.get("/accounts/login/")["Cache-Control"]


@pytest.mark.parametrize(
    "url",
    [
        "/",
        "/sessions/",
        "/sessions/{xss_session_id}/",
        "/messages/",
        "/search/?q=telegram",
        "/insights/",
        "/state/sessions",
        "/sql/",
        "/sql/saved/",
        "/sessions/?_export=csv",
        "/healthz",
        "/accounts/login/",
    ],
)
def test_head_answers_like_get(staff_client, current_store, url):
    path = url.format(**vars(current_store))
    if not _exists(path):
        pytest.skip(f"{path.split('?')[0]} is not built yet")
    got = staff_client.get(path)
    head = staff_client.head(path)
    assert head.status_code == got.status_code
    assert got.status_code in (200, 302)
    assert head["Content-Type"] == got["Content-Type"]
    if head.streaming:
        assert b"".join(head.streaming_content) == b""
    else:
        assert head.content == b""
        if head.has_header("Content-Length") and url != "/healthz":  # it says how long it took
            assert int(head["Content-Length"]) == len(got.content)


def test_forwarded_for_is_believed_only_from_a_trusted_proxy(rf, settings):
    settings.HERMES_TRUST_FORWARDED_FOR = True
    settings.HERMES_TRUSTED_PROXIES = ["127.0.0.1", "::1", "10.8.0.0/16"]
    direct = rf.get("/", REMOTE_ADDR="198.51.100.7", HTTP_X_FORWARDED_FOR="203.0.113.9")
    assert client_ip(direct) == "198.51.100.7"
    for proxy in ("127.0.0.1", "::1", "10.8.3.4", "::ffff:127.0.0.1"):
        via = rf.get("/", REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.9")
        assert client_ip(via) == "203.0.113.9", proxy


@pytest.mark.appdb
def test_a_direct_client_cannot_rotate_forwarded_for_to_dodge_the_lockout(current_store, settings):
    settings.HERMES_TRUST_FORWARDED_FOR = True
    make_user("analyst", username="hank")
    client = Client()
    for n in range(settings.AXES_FAILURE_LIMIT):
        _login(client, "hank", "wrong", ip="198.51.100.7", HTTP_X_FORWARDED_FOR=f"192.0.2.{n}")
    locked = _login(client, "hank", PASSWORD, ip="198.51.100.7", HTTP_X_FORWARDED_FOR="192.0.2.99")
    assert locked.status_code == 429
    # Through the proxy, the forwarded address is the one that counts.
    proxied = _login(Client(), "hank", PASSWORD, ip="127.0.0.1", HTTP_X_FORWARDED_FOR="192.0.2.99")
    assert proxied.status_code == 302
