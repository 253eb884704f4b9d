"""Hostile console statements against real gunicorn workers (``deploy/gunicorn.conf.py``, gthread,
on 127.0.0.1 only): twenty at once neither hold the workers nor their memory, and another
user's session list keeps answering in under a second."""

from __future__ import annotations

import http.client
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

import pytest

from tests.test_console_isolation import HUGE_INSTR, HUGE_LIKE, PRINTFS, ZEROBLOBS

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
HOSTILE = [HUGE_LIKE, HUGE_INSTR, ZEROBLOBS, PRINTFS] * 5
DEADLINE = 1.0  # HERMES_SQL_TIMEOUT
PASSWORD = "load-test-password-123"
# Timing-sensitive: run apart from the parallel run (make test's second pass).
pytestmark = pytest.mark.serial


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, store: str, data_dir: Path):
        self.port = _free_port()
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "HERMES_STATE_DB": store,
            "HERMES_EXPLORER_DATA_DIR": str(data_dir),
            "HERMES_SQL_TIMEOUT": str(DEADLINE),
            "GUNICORN_BIND": f"127.0.0.1:{self.port}",
            "GUNICORN_WORKERS": "2",
            "GUNICORN_THREADS": "4",
            "GUNICORN_ACCESS_LOG": "/dev/null",
            "GUNICORN_LOG_LEVEL": "warning",
            "DJANGO_LOG_LEVEL": "WARNING",
        }
        self.proc: subprocess.Popen | None = None

    def manage(self, *args: str) -> None:
        subprocess.run(
            [PY, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            check=True,
            stdout=subprocess.DEVNULL,
            timeout=120,
        )

    def start(self) -> None:
        self.manage("migrate", "--noinput")
        self.manage(
            "shell",
            "-c",
            "from django.contrib.auth.models import User; "
            f"User.objects.create_superuser('root', password='{PASSWORD}'); "
            f"User.objects.create_user('viewer', password='{PASSWORD}')",
        )
        self.proc = subprocess.Popen(
            [
                str(Path(PY).with_name("gunicorn")),
                "-c",
                "deploy/gunicorn.conf.py",
                "hermes_explorer.wsgi:application",
            ],
            cwd=ROOT,
            env=self.env,
            start_new_session=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if self.request("GET", "/healthz")[0] == 200:
                    return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("gunicorn did not start")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)

    def request(self, method, path, body=None, headers=None, timeout=15.0):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            return response.status, response.getheaders(), response.read()
        finally:
            conn.close()

    def sign_in(self, username: str) -> dict[str, str]:
        """Cookie and CSRF token of a signed-in session."""
        status, headers, page = self.request("GET", "/accounts/login/")
        csrf = re.search(r"csrftoken=([^;]+)", _cookies(headers)).group(1)
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1).decode()
        body = urllib.parse.urlencode(
            {"csrfmiddlewaretoken": token, "username": username, "password": PASSWORD}
        )
        status, headers, _ = self.request(
            "POST",
            "/accounts/login/",
            body,
            {"Content-Type": "application/x-www-form-urlencoded", "Cookie": f"csrftoken={csrf}"},
        )
        session = re.search(r"sessionid=([^;]+)", _cookies(headers))
        assert status == 302 and session, "sign-in failed"
        return {"cookie": f"sessionid={session.group(1)}; csrftoken={csrf}", "token": token}

    def worker_rss_mb(self) -> dict[int, float]:
        out = subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True, text=True)
        sizes = {}
        for pid in map(int, out.stdout.split()):
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    sizes[pid] = int(line.split()[1]) / 1024
        return sizes


def _cookies(headers) -> str:
    return "; ".join(v for k, v in headers if k.lower() == "set-cookie")


@pytest.fixture(scope="module")
def server(nasty_stores, tmp_path_factory):
    server = Server(str(nasty_stores["current"].path), tmp_path_factory.mktemp("gunicorn"))
    try:
        server.start()
        yield server
    finally:
        server.stop()


def test_twenty_hostile_statements_at_once_leave_the_session_list_fast(server):
    staff, viewer = server.sign_in("root"), server.sign_in("viewer")
    # Warm every worker up (imports, templates, a first console process) before measuring.
    for _ in range(4):
        assert server.request("GET", "/sessions/", headers={"Cookie": viewer["cookie"]})[0] == 200
    post_headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "Cookie": staff["cookie"],
    }
    warm = urllib.parse.urlencode({"sql": "SELECT 1", "csrfmiddlewaretoken": staff["token"]})
    for _ in range(4):
        server.request("POST", "/sql/", warm, post_headers)
    rss_before = server.worker_rss_mb()

    answers: list[tuple[int, float, bytes]] = []
    lock = threading.Lock()

    def hostile(sql: str) -> None:
        body = urllib.parse.urlencode({"sql": sql, "csrfmiddlewaretoken": staff["token"]})
        started = time.monotonic()
        status, _, page = server.request("POST", "/sql/", body, post_headers, timeout=30)
        with lock:
            answers.append((status, time.monotonic() - started, page))

    threads = [threading.Thread(target=hostile, args=(sql,)) for sql in HOSTILE]
    for thread in threads:
        thread.start()
    time.sleep(0.2)  # the hostile statements are running now
    list_times = []
    for _ in range(5):
        started = time.monotonic()
        status, _, _ = server.request("GET", "/sessions/", headers={"Cookie": viewer["cookie"]})
        list_times.append(time.monotonic() - started)
        assert status == 200
        time.sleep(0.1)
    for thread in threads:
        thread.join(30)

    assert len(answers) == len(HOSTILE)
    assert max(list_times) < 1.0, list_times
    # Every console request answered by its deadline + 1 s: out of time, too large, or busy.
    assert max(elapsed for _, elapsed, _ in answers) < DEADLINE + 1, [a[:2] for a in answers]
    for status, _, page in answers:
        assert status in (400, 503)
        assert re.search(rb"ran longer than|too large|already running", page)
    assert any(status == 400 for status, _, _ in answers), "some statements did run"
    rss_after = server.worker_rss_mb()
    growth = {pid: rss_after[pid] - rss_before[pid] for pid in rss_before if pid in rss_after}
    assert growth and max(growth.values()) <= 64, growth


def test_twenty_hostile_raw_searches_leave_a_viewers_page_fast(server):
    """The old API's raw search: the search page's limits, inside the deadline, and a bounded
    number at once on the host (one more is told the server is busy)."""
    import base64

    basic = base64.b64encode(f"root:{PASSWORD}".encode()).decode()
    viewer = server.sign_in("viewer")
    for _ in range(4):
        assert server.request("GET", "/sessions/", headers={"Cookie": viewer["cookie"]})[0] == 200
    # The finding's query: 26 one-letter prefixes. Refused before it runs.
    wide = " OR ".join(f"{c}*" for c in "abcdefghijklmnopqrstuvwxyz")
    path = "/state/messages.json?" + urllib.parse.urlencode(
        {"_search": wide, "_searchmode": "raw", "_shape": "array"}
    )
    status, _, body = server.request("GET", path, headers={"Authorization": f"Basic {basic}"})
    assert status == 400 and b"prefix" in body
    # The costliest query still allowed, twenty at once.
    allowed = "hel* OR wor* OR tes* OR " + " OR ".join("abcdefghijklm")
    path = "/state/messages.json?" + urllib.parse.urlencode(
        {"_search": allowed, "_searchmode": "raw", "_size": "max"}
    )
    answers: list[tuple[int, float]] = []
    lock = threading.Lock()

    def hostile() -> None:
        started = time.monotonic()
        status, _, _ = server.request(
            "GET", path, headers={"Authorization": f"Basic {basic}"}, timeout=30
        )
        with lock:
            answers.append((status, time.monotonic() - started))

    threads = [threading.Thread(target=hostile) for _ in range(20)]
    for thread in threads:
        thread.start()
    list_times = []
    for _ in range(5):
        started = time.monotonic()
        status, _, _ = server.request("GET", "/sessions/", headers={"Cookie": viewer["cookie"]})
        list_times.append(time.monotonic() - started)
        assert status == 200
    for thread in threads:
        thread.join(30)
    assert len(answers) == 20
    assert max(list_times) < 1.0, list_times
    assert {status for status, _ in answers} <= {200, 429}, answers
    assert max(elapsed for _, elapsed in answers) < 5, answers


def test_metrics_add_up_every_workers_requests(server):
    """Under gunicorn's workers (prometheus-client's multi-process mode), /metrics from the
    loopback address counts the requests every worker answered."""
    viewer = server.sign_in("viewer")
    for _ in range(6):
        assert server.request("GET", "/sessions/", headers={"Cookie": viewer["cookie"]})[0] == 200
    status, _, body = server.request("GET", "/metrics")
    assert status == 200
    text = body.decode()
    found = [
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("hermes_explorer_requests_total{")
        and 'view="sessions:list"' in line
        and 'status="200"' in line
    ]
    assert sum(found) >= 6, text[:2000]
    assert "hermes_explorer_store_readable" in text
