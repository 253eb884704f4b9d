"""Several explorer instances behind one Caddy, on one PostgreSQL and one Redis: for real.

:class:`Cluster` starts throwaway PostgreSQL and Redis servers (:mod:`tests.servers`), migrates
the shared app database once, then N gunicorn instances of the explorer on free ports of
127.0.0.1 (each with a data directory of its own, as on separate machines: nothing on a local
disk is shared), and Caddy load-balancing them round-robin with active health checks on
``/healthz``, with the block ``deploy/Caddyfile.several`` ships.  The end-to-end tests and ``bench/load.py``
use it; everything lives in one temporary directory removed by :meth:`stop`.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests import servers

ROOT = Path(__file__).resolve().parent.parent
SECRET_KEY = "cluster-tests-only-" + "k3J8s0Lq2Zr7Wb4Vn6Yt1Pm5Xc" * 2
USERNAME = "operator"
PASSWORD = "cluster-operator-pw-42"
CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def caddy_bin() -> str | None:
    return shutil.which("caddy")


def why_not() -> str | None:
    """Why a cluster cannot run here (missing packages), or None."""
    why = servers.available()
    if why is None and caddy_bin() is None:
        why = "missing caddy (run `make servers`)"
    return why


def caddyfile(port: int, upstreams: list[int]) -> str:
    """``deploy/Caddyfile.several``, served on 127.0.0.1:``port`` over plain HTTP, in front of
    these local upstreams (health checks every second, for the tests' pace)."""
    shipped = (ROOT / "deploy" / "Caddyfile.several").read_text()
    replacements = {
        "hermes.example.org {": f"http://127.0.0.1:{port} {{",
        "reverse_proxy 10.0.0.11:8000 10.0.0.12:8000 {": "reverse_proxy "
        + " ".join(f"127.0.0.1:{p}" for p in upstreams)
        + " {",
        "Host hermes.example.org": "Host 127.0.0.1",
        "health_interval 5s": "health_interval 1s",
    }
    for old, new in replacements.items():
        if old not in shipped:
            raise RuntimeError(f"deploy/Caddyfile.several no longer has {old!r}")
        shipped = shipped.replace(old, new)
    return "{\n\tadmin off\n\tauto_https off\n}\n\n" + shipped


class Instance:
    def __init__(self, index: int, port: int, data_dir: Path, env: dict) -> None:
        self.index = index
        self.port = port
        self.data_dir = data_dir
        self.env = env
        self.access_log = data_dir / "access.log"
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "-c",
                "deploy/gunicorn.conf.py",
                "--access-logfile",
                str(self.access_log),
                "hermes_explorer.wsgi:application",
            ],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=open(self.data_dir / "gunicorn.log", "wb"),  # noqa: SIM115 - kept for the run
            start_new_session=True,
        )
        servers.wait_for_port(self.port, 60, proc=self.proc)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()

    def requests_seen(self, marker: str, *, at_least: int = 1, seconds: float = 5.0) -> int:
        """Requests whose line in the access log has ``marker``; waits (up to ``seconds``)
        for ``at_least`` of them, as gunicorn logs a request after its response is sent."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                seen = self.access_log.read_text().count(marker)
            except FileNotFoundError:
                seen = 0
            if seen >= at_least or time.monotonic() > deadline:
                return seen
            time.sleep(0.05)


class Cluster:
    def __init__(
        self,
        store: str | os.PathLike,
        *,
        instances: int = 2,
        workers: int = 2,
        threads: int = 4,
        extra_env: dict[str, str] | None = None,
        warm: bool = False,
    ) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="hermes-explorer-cluster-"))
        # Run insights_warm once before the instances start, as a deployment does after install.
        self.warm = warm
        self.store = str(store)
        self.count = instances
        self.workers = workers
        self.threads = threads
        self.extra_env = extra_env or {}
        self.pg = servers.PostgresServer()
        self.redis = servers.RedisServer()
        self.instances: list[Instance] = []
        self.caddy: subprocess.Popen | None = None
        self.caddy_port = servers.free_port()

    @property
    def url(self) -> str:
        """The load balancer's address."""
        return f"http://127.0.0.1:{self.caddy_port}"

    def env(self, data_dir: Path, port: int | None = None) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.dir),
            "DJANGO_SETTINGS_MODULE": "hermes_explorer.settings",
            "DJANGO_DEBUG": "0",
            "DJANGO_SECRET_KEY": SECRET_KEY,
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "DJANGO_SECURE_COOKIES": "0",
            "HERMES_STATE_DB": self.store,
            "HERMES_EXPLORER_DATA_DIR": str(data_dir),
            "DATABASE_URL": self.pg.url,
            "CACHE_URL": self.redis.url,
            "GUNICORN_WORKERS": str(self.workers),
            "GUNICORN_THREADS": str(self.threads),
            "GUNICORN_LOG_LEVEL": "warning",
            "DJANGO_LOG_LEVEL": "WARNING",
            **self.extra_env,
        }
        if port is not None:
            env["GUNICORN_PORT"] = str(port)  # as the template unit gives it
        return env

    def manage(self, env: dict, *args: str) -> str:
        result = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if result.returncode != 0:
            raise RuntimeError(f"manage.py {' '.join(args)}: {result.stdout}{result.stderr}")
        return result.stdout

    def start(self) -> Cluster:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        self.pg.start()
        self.redis.start()
        first = self.dir / "instance-1"
        first.mkdir()
        setup = self.env(first)
        # Once for all instances: the database is shared.  Static files are collected once and
        # copied to each instance's data directory (as a deployment would build them per host).
        self.manage(setup, "migrate", "--noinput", "--verbosity", "0")
        self.manage(setup, "collectstatic", "--noinput", "--verbosity", "0")
        self.manage(
            setup,
            "shell",
            "-c",
            "from django.contrib.auth import get_user_model as g; "
            f"g().objects.create_superuser({USERNAME!r}, '', {PASSWORD!r})",
        )
        if self.warm:
            self.manage(setup, "insights_warm")
        for index in range(1, self.count + 1):
            data_dir = self.dir / f"instance-{index}"
            if index > 1:
                data_dir.mkdir()
                shutil.copytree(first / "staticfiles", data_dir / "staticfiles")
            port = servers.free_port()
            instance = Instance(index, port, data_dir, self.env(data_dir, port))
            self.instances.append(instance)
            instance.start()
        config = self.dir / "Caddyfile"
        config.write_text(caddyfile(self.caddy_port, [i.port for i in self.instances]))
        caddy_env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.dir),
            "XDG_DATA_HOME": str(self.dir / "caddy-data"),
            "XDG_CONFIG_HOME": str(self.dir / "caddy-config"),
        }
        self.caddy = subprocess.Popen(
            [caddy_bin(), "run", "--config", str(config), "--adapter", "caddyfile"],
            env=caddy_env,
            stdout=subprocess.DEVNULL,
            stderr=open(self.dir / "caddy.log", "wb"),  # noqa: SIM115 - kept for the run
        )
        servers.wait_for_port(self.caddy_port, 30, proc=self.caddy)

    def stop(self) -> None:
        if self.caddy is not None and self.caddy.poll() is None:
            self.caddy.terminate()
            try:
                self.caddy.wait(10)
            except subprocess.TimeoutExpired:
                self.caddy.kill()
        for instance in self.instances:
            instance.stop()
        self.redis.stop()
        self.pg.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


def sign_in(client, base: str, username: str = USERNAME, password: str = PASSWORD):
    """POST the sign-in form of ``base`` with ``client`` (an httpx client); the response."""
    page = client.get(f"{base}/accounts/login/")
    token = CSRF_FIELD.search(page.text)
    data = {"username": username, "password": password}
    if token:
        data["csrfmiddlewaretoken"] = token.group(1)
    return client.post(f"{base}/accounts/login/", data=data, headers={"Referer": base + "/"})
