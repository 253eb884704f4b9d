"""The explorer's own data and caches, on whichever app database and cache the run has.

``make test`` runs this file (with the other app-database tests) twice: on the default SQLite
file and file cache, and with ``-p tests.real_servers`` on a real PostgreSQL and Redis.  Either
way the state.db stays on its read-only SQLite backend, and nothing a second worker or server
needs lives only in one process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import caches
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.db import connections
from django.test import Client, RequestFactory

from hermes_explorer import app_data
from tests.roles_helpers import PASSWORD, make_user

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.django_db(databases=["default", "hermes"]), pytest.mark.appdb]


# Configuration -----------------------------------------------------------------------------
def test_no_database_url_keeps_sqlite_in_the_data_directory(tmp_path):
    config = app_data.database("", tmp_path)
    assert config["ENGINE"] == "django.db.backends.sqlite3"
    assert config["NAME"] == tmp_path / "explorer.sqlite3"


def test_a_postgresql_url_gives_psycopg_with_checked_persistent_connections(tmp_path):
    config = app_data.database("postgresql://ex:s3cr%40t@db.internal:6543/explorer", tmp_path)
    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert (config["HOST"], config["PORT"], config["NAME"]) == ("db.internal", 6543, "explorer")
    assert (config["USER"], config["PASSWORD"]) == ("ex", "s3cr@t")
    assert config["CONN_MAX_AGE"] == app_data.DEFAULT_CONN_MAX_AGE
    assert config["CONN_HEALTH_CHECKS"] is True


@pytest.mark.parametrize("url", ["mysql://u:p@h/db", "oracle://u:p@h/db", "not a url"])
def test_other_databases_are_refused_at_start(url, tmp_path):
    with pytest.raises(ImproperlyConfigured):
        app_data.database(url, tmp_path)


# Filter forms' HTML is keyed by everything it shows: each process keeps its own.
PER_PROCESS = "template_fragments"


def test_no_cache_url_gives_file_caches_shared_by_this_hosts_workers(tmp_path):
    config = app_data.caches("", tmp_path)
    assert config.pop(PER_PROCESS)["BACKEND"].endswith("LocMemCache")
    assert {c["BACKEND"] for c in config.values()} == {
        "django.core.cache.backends.filebased.FileBasedCache"
    }
    assert all(str(c["LOCATION"]).startswith(str(tmp_path)) for c in config.values())


def test_a_redis_url_puts_every_cache_alias_in_redis(tmp_path):
    config = app_data.caches("redis://cache.internal:6379/2", tmp_path)
    assert config.pop(PER_PROCESS)["BACKEND"].endswith("LocMemCache")
    assert set(config) == {"default", "failures", "reports"}
    for alias in config.values():
        assert alias["BACKEND"] == "django_redis.cache.RedisCache"
        assert alias["OPTIONS"]["IGNORE_EXCEPTIONS"] is True
        assert alias["LOCATION"] == "redis://cache.internal:6379/2"
    assert config["default"]["KEY_PREFIX"] != config["failures"]["KEY_PREFIX"]


def test_an_unreachable_redis_is_a_miss_never_an_error(tmp_path):

    from django.utils.module_loading import import_string as load

    from tests.servers import free_port

    config = app_data.caches(f"redis://127.0.0.1:{free_port()}/0", tmp_path)["default"]
    dead = load(config["BACKEND"])(config["LOCATION"], config)
    began = time.monotonic()
    assert dead.get("k", "default") == "default"
    dead.set("k", 1)
    assert dead.get_many(["a", "b"]) == {}
    assert time.monotonic() - began < 10


def test_signed_in_sessions_are_djangos_cached_database_sessions():
    assert settings.SESSION_ENGINE == "django.contrib.sessions.backends.cached_db"


def test_other_cache_urls_are_refused_at_start(tmp_path):
    with pytest.raises(ImproperlyConfigured):
        app_data.caches("memcached://127.0.0.1:11211", tmp_path)


# The run's own app database ------------------------------------------------------------------
def test_the_app_database_is_the_one_configured_and_the_state_db_stays_read_only_sqlite():
    expected = "postgresql" if os.environ.get("DATABASE_URL") else "sqlite"
    assert connections["default"].vendor == expected
    assert settings.DATABASES["hermes"]["ENGINE"] == "hermes_explorer.hermes_db"
    assert connections["hermes"].vendor == "sqlite"


def test_models_and_migrations_agree_on_this_database():
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


def test_post_migrate_roles_exist_with_their_permissions():
    from django.contrib.auth.models import Group

    names = set(Group.objects.values_list("name", flat=True))
    assert {"viewers", "analysts", "staff"} <= names
    staff = Group.objects.get(name="staff")
    assert staff.permissions.filter(codename="view_auditevent").exists()


def test_audit_events_are_written_and_read_back():
    from accounts_app import audit
    from accounts_app.models import AuditEvent

    user = make_user("staff", username="auditor")
    request = RequestFactory().get("/", REMOTE_ADDR="192.0.2.4")
    request.user = user
    event = audit.record(request, AuditEvent.REVEAL, session_id="s" * 300, detail="d" * 20_000)
    stored = AuditEvent.objects.get(pk=event.pk)
    assert (stored.username, stored.ip) == ("auditor", "192.0.2.4")
    assert len(stored.session_id) == 200 and len(stored.detail) == audit.DETAIL_CHARS


def test_api_tokens_are_made_checked_and_revoked():
    from accounts_app import tokens

    user = make_user("analyst", username="scripter")
    token, text = tokens.create(user, name="nightly", expires_in_days=3)
    assert tokens.user_for(text) == user
    assert tokens.user_for(text[:-1] + ("A" if text[-1] != "A" else "B")) is None
    tokens.revoke(token)
    assert tokens.user_for(text) is None


def test_signed_in_sessions_live_in_the_app_database(current_store):
    from django.contrib.auth import get_user_model
    from django.contrib.sessions.models import Session

    make_user("viewer", username="sam")
    client = Client()
    response = client.post("/accounts/login/", {"username": "sam", "password": PASSWORD})
    assert response.status_code == 302
    key = client.cookies[settings.SESSION_COOKIE_NAME].value
    row = Session.objects.get(session_key=key)
    user = get_user_model().objects.get(username="sam")
    assert row.get_decoded()["_auth_user_id"] == str(user.pk)
    assert client.get("/").status_code == 200


def test_failed_sign_ins_are_counted_in_the_app_database(current_store):
    from axes.models import AccessAttempt

    assert settings.AXES_HANDLER == "axes.handlers.database.AxesDatabaseHandler"
    make_user("viewer", username="mallory")
    for _ in range(2):
        Client().post(
            "/accounts/login/", {"username": "mallory", "password": "wrong"}, REMOTE_ADDR="2.2.2.2"
        )
    attempt = AccessAttempt.objects.get(username="mallory")
    assert attempt.failures_since_start == 2


# The shared cache ----------------------------------------------------------------------------
def test_no_cache_but_the_fragments_is_private_to_one_process():
    for alias, config in settings.CACHES.items():
        if alias == PER_PROCESS:
            continue
        assert "locmem" not in config["BACKEND"].lower(), alias
        assert "dummy" not in config["BACKEND"].lower(), alias


@pytest.mark.parametrize("alias", ["default", "failures", "reports"])
def test_what_one_worker_caches_another_reads(alias):
    # A second connection to the same cache, as another worker or server process opens it.
    mine, theirs = caches[alias], caches.create_connection(alias)
    mine.set("shared-probe", {"n": 41}, 30)
    assert theirs.get("shared-probe") == {"n": 41}
    theirs.delete("shared-probe")
    assert mine.get("shared-probe") is None


# Deployment checks -----------------------------------------------------------------------------
def _env_example() -> dict[str, str]:
    values = {}
    for line in (ROOT / "deploy" / "env.example").read_text().splitlines():
        if line and not line.startswith("#") and "=" in line:
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


@pytest.mark.parametrize(
    "urls",
    [
        {},
        {
            "DATABASE_URL": "postgresql://explorer:pw@127.0.0.1:5432/explorer",
            "CACHE_URL": "redis://127.0.0.1:6379/0",
        },
    ],
    ids=["sqlite-file-cache", "postgresql-redis"],
)
def test_check_deploy_is_clean_in_both_configurations(urls, tmp_path):
    env = {k: v for k, v in _env_example().items() if not k.startswith("GUNICORN_")}
    env.update(
        {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "DJANGO_SECRET_KEY": "x9-" + "k3J8s0Lq2Zr7Wb4Vn6Yt1Pm5Xc" * 3,
            "HERMES_STATE_DB": str(tmp_path / "state.db"),
            "HERMES_EXPLORER_DATA_DIR": str(tmp_path),
            "DJANGO_SETTINGS_MODULE": "hermes_explorer.settings",
            **urls,
        }
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_a_template_instance_listens_on_the_port_of_its_name(monkeypatch):
    unit = (ROOT / "deploy" / "hermes-explorer@.service").read_text()
    assert "Environment=GUNICORN_PORT=%i" in unit
    assert "Requires=hermes-explorer-setup.service" in unit
    config = (ROOT / "deploy" / "gunicorn.conf.py").read_text()
    for env, bind in (
        ({"GUNICORN_PORT": "8002"}, "127.0.0.1:8002"),
        ({"GUNICORN_PORT": "8003", "GUNICORN_HOST": "10.0.0.11"}, "10.0.0.11:8003"),
        ({"GUNICORN_BIND": "127.0.0.1:9000"}, "127.0.0.1:9000"),
    ):
        for name in ("GUNICORN_PORT", "GUNICORN_HOST", "GUNICORN_BIND"):
            monkeypatch.delenv(name, raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        namespace: dict = {}
        exec(compile(config, "gunicorn.conf.py", "exec"), namespace)
        assert namespace["bind"] == bind


def test_a_new_data_directory_is_made_for_the_app_database(tmp_path):
    config = app_data.database("", tmp_path / "new" / "data")
    assert config["NAME"].parent.is_dir()
