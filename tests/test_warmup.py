"""A new worker's first request after a restart: what it would build lazily is built at start.

The WSGI entry point warms the process (``hermes_explorer.warmup``), gunicorn loads it once in
its master before forking (``preload_app`` in ``deploy/gunicorn.conf.py``) and no connection is
carried across the fork.  Real processes on a real store and app database: a fresh Python
loading the entry point, and a real gunicorn with the deployed settings, each serving a user
whose session was made before it started.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from tests import servers
from tests.builders import StateDB
from tests.cluster import ROOT, SECRET_KEY

SESSION_ID = "20261201_101500_warm01"
TITLE = "Quarterly tangerine planning"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A store, a migrated app database with collected static files, and the session key of a
    staff member signed in before any server starts."""
    folder = tmp_path_factory.mktemp("warmup")
    store = folder / "state.db"
    started = time.time() - 3_600
    with StateDB.create(store, "current") as db:
        db.session(SESSION_ID, source="telegram", title=TITLE, started_at=started)
        db.message(SESSION_ID, "user", "What about the tangerine harvest?", timestamp=started + 5)
        db.message(SESSION_ID, "assistant", "It looks early this year.", timestamp=started + 9)
        db.refresh_counters()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(folder),
        "DJANGO_SETTINGS_MODULE": "hermes_explorer.settings",
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": SECRET_KEY,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_SECURE_COOKIES": "0",
        "DJANGO_LOG_LEVEL": "WARNING",
        "HERMES_STATE_DB": str(store),
        "HERMES_EXPLORER_DATA_DIR": str(folder / "data"),
    }
    for args in (["migrate", "--noinput"], ["collectstatic", "--noinput", "--verbosity", "0"]):
        subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True)
    made = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", SIGN_IN],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return {"env": env, "cookie": f"sessionid={made.stdout.split()[-1]}"}


# A session made as a sign-in makes it, in the app database, before the server starts.
SIGN_IN = """
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.models import User
from django.contrib.sessions.backends.db import SessionStore
user = User.objects.create_superuser("warm", password="warm-password-42")
session = SessionStore()
session[SESSION_KEY] = str(user.pk)
session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
session[HASH_SESSION_KEY] = user.get_session_auth_hash()
session.create()
print(session.session_key)
"""

# Loads the entry point as gunicorn's master does, reports what is built, then serves the first
# requests of the process through the WSGI application and reports what they had to build.
FIRST_REQUESTS = """
import json, sys
from hermes_explorer.wsgi import application
from django.db import connections
from django.template import engines
from django.forms.renderers import get_default_renderer
from django.urls import get_resolver
from django.urls.resolvers import get_ns_resolver
from django.utils.translation import trans_real
from hermes_explorer.hermes_db import shape

cookie, paths = sys.argv[1], sys.argv[2:]
cached = lambda backend: backend.engine.template_loaders[0].get_template_cache
report = {
    "reverse_languages": sorted(get_resolver()._reverse_dict),
    "namespace_resolvers": get_ns_resolver.cache_info().currsize,
    "templates": sorted(cached(engines["django"])),
    "form_templates": sorted(cached(get_default_renderer().engine)),
    "catalogs": sorted(trans_real._translations),
    "shapes": len(shape._cache),
    "open_after_start": [c.alias for c in connections.all() if c.connection is not None],
}
modules, templates = set(sys.modules), len(cached(engines["django"]))
namespaces = get_ns_resolver.cache_info().currsize
statuses = []
for path in paths:
    environ = {
        "REQUEST_METHOD": "GET", "PATH_INFO": path.partition("?")[0],
        "QUERY_STRING": path.partition("?")[2], "HTTP_COOKIE": cookie, "HTTP_HOST": "127.0.0.1",
        "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "80", "REMOTE_ADDR": "127.0.0.1",
        "wsgi.url_scheme": "http", "wsgi.input": sys.stdin.buffer, "wsgi.errors": sys.stderr,
    }
    answer = []
    body = b"".join(application(environ, lambda status, headers, *_: answer.append(status)))
    statuses.append([path, answer[0], len(body)])
report["statuses"] = statuses
report["imported_by_requests"] = sorted(set(sys.modules) - modules)
report["templates_compiled_by_requests"] = len(cached(engines["django"])) - templates
report["namespaces_built_by_requests"] = get_ns_resolver.cache_info().currsize - namespaces
print(json.dumps(report))
"""

PAGES = [
    "/sessions/",
    "/messages/",
    f"/sessions/{SESSION_ID}/",
    "/search/?q=tangerine",
    "/failures/?days=30",
    "/",
]


def test_loading_the_entry_point_builds_what_the_first_requests_need(site):
    ran = subprocess.run(
        [sys.executable, "-c", FIRST_REQUESTS, site["cookie"], *PAGES],
        cwd=ROOT,
        env=site["env"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout.splitlines()[-1])
    # Built at start: every language's URL tables, the namespaces' reverse tables, the page
    # templates with what they extend and include, the widgets, both catalogs, the store shape.
    assert report["reverse_languages"] == ["en", "fr"]
    assert report["namespace_resolvers"] > 0
    assert {"base.html", "django_tables2/table.html", "includes/_table.html"} <= set(
        report["templates"]
    )
    assert "django/forms/widgets/select.html" in report["form_templates"]
    assert {"en", "fr"} <= set(report["catalogs"])
    assert report["shapes"] >= 1
    # ...and nothing left open to be inherited by forked workers.
    assert report["open_after_start"] == []
    # The first requests answer and need nothing more built: no module, template or namespace.
    assert [status for _, status, _ in report["statuses"]] == ["200 OK"] * len(PAGES), report
    assert report["imported_by_requests"] == []
    assert report["templates_compiled_by_requests"] == 0
    assert report["namespaces_built_by_requests"] == 0


def deployed_config() -> dict:
    namespace: dict = {}
    source = (ROOT / "deploy" / "gunicorn.conf.py").read_text()
    exec(compile(source, "gunicorn.conf.py", "exec"), namespace)
    return namespace


def test_gunicorn_preloads_and_each_worker_drops_connections_made_before_the_fork(site):
    config = deployed_config()
    assert config["preload_app"] is True
    # prometheus-client reads its directory when the application is loaded, before any hook.
    assert any(entry.startswith("PROMETHEUS_MULTIPROC_DIR=") for entry in config["raw_env"])
    # post_fork, given a connection open in the process, closes it.
    opened = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django, sys; django.setup();"
            "from django.db import connections;"
            "connections['default'].ensure_connection();"
            "exec(compile(open(sys.argv[1]).read(), 'gunicorn.conf.py', 'exec'));"
            "post_fork(None, None);"
            "print(connections['default'].connection)",
            str(ROOT / "deploy" / "gunicorn.conf.py"),
        ],
        cwd=ROOT,
        env=site["env"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert opened.returncode == 0, opened.stderr
    assert opened.stdout.split()[-1] == "None"


def test_forked_workers_serve_a_user_signed_in_before_the_start(site):
    port = servers.free_port()
    env = {
        **site["env"],
        "GUNICORN_PORT": str(port),
        "GUNICORN_WORKERS": "2",
        "GUNICORN_THREADS": "2",
        "GUNICORN_LOG_LEVEL": "warning",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py"]
        + ["hermes_explorer.wsgi:application"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        servers.wait_for_port(port, 60, proc=proc)

        def get(path: str) -> tuple[int, str]:
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}{path}", headers={"Cookie": site["cookie"]}
            )
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.read().decode()

        for _ in range(3):
            status, page = get(f"/sessions/{SESSION_ID}/")
            assert status == 200 and "tangerine harvest" in page
            status, page = get("/search/?q=tangerine")
            assert status == 200 and SESSION_ID in page
        # Every worker's requests are counted (the metrics directory was set before the load).
        for _ in range(50):
            status, metrics = get("/metrics")
            counted = sum(
                float(line.rsplit(" ", 1)[1])
                for line in metrics.splitlines()
                if line.startswith("hermes_explorer_requests_total{") and 'status="200"' in line
            )
            if counted >= 6:
                break
            time.sleep(0.1)
        assert counted >= 6, metrics[:2000]
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        _, errors = proc.communicate(timeout=30)
    assert b"Traceback" not in errors, errors.decode()[-3000:]
