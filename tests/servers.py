"""Throwaway PostgreSQL and Redis servers for the tests: real servers, no Docker.

Each server runs from the Debian package's binaries (``make servers`` installs them when
missing) on a free port of 127.0.0.1, with its files in a temporary directory removed at the
end.  PostgreSQL refuses to run as root, so as root its directory is given to the package's
``postgres`` system user and its commands run as that user; the explorer connects over TCP
with ``trust`` authentication, which is only ever offered on 127.0.0.1.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

PG_USER = "explorer"
PG_DATABASE = "explorer"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, seconds: float = 30.0, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the server meant for port {port} exited ({proc.returncode})")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing answered on 127.0.0.1:{port} within {seconds:.0f} s")


def postgres_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


def redis_bin() -> str | None:
    return shutil.which("redis-server")


def available() -> str | None:
    """Why the servers cannot run here, or None when they can."""
    missing = [n for n in ("initdb", "pg_ctl") if postgres_bin(n) is None]
    if redis_bin() is None:
        missing.append("redis-server")
    if missing:
        return "missing " + ", ".join(missing) + " (run `make servers`)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root without a `postgres` user to run PostgreSQL as"
    return None


class PostgresServer:
    """``initdb`` + ``pg_ctl start`` on a free port; ``url`` is the explorer's DATABASE_URL."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="hermes-explorer-pg-"))
        self.port = free_port()
        self.data = self.dir / "data"
        self._as: list[str] = []
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.dir, user.pw_uid, user.pw_gid)
            self._as = ["runuser", "-u", "postgres", "--"]

    @property
    def url(self) -> str:
        return f"postgresql://{PG_USER}@127.0.0.1:{self.port}/{PG_DATABASE}"

    def _run(self, *args: str) -> None:
        subprocess.run(
            [*self._as, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )

    def _start(self, options: str) -> None:
        """``pg_ctl start`` of this data directory with these server options, waiting for it."""
        self._run(
            postgres_bin("pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.dir / "postgres.log"),
            "-w",
            "start",
        )

    def start(self) -> PostgresServer:
        self._run(
            postgres_bin("initdb"),
            "-D",
            str(self.data),
            "-U",
            PG_USER,
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
        )
        # Test data is thrown away: no fsync, small shared memory, a socket in our own dir.
        options = (
            f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=100"
        )
        self._start(options)
        self._run(
            postgres_bin("createdb") or "createdb",
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            PG_USER,
            PG_DATABASE,
        )
        return self

    def stop(self) -> None:
        try:
            self._run(postgres_bin("pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")
        except (subprocess.CalledProcessError, OSError):
            pass
        shutil.rmtree(self.dir, ignore_errors=True)


class RedisServer:
    """``redis-server`` on a free port, nothing saved to disk; ``url`` is the CACHE_URL."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="hermes-explorer-redis-"))
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.proc = subprocess.Popen(
            [
                redis_bin(),
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.dir),
                "--save",
                "",
                "--appendonly",
                "no",
                "--daemonize",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_for_port(self.port, proc=self.proc)
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def postgres_missing() -> str | None:
    """Why a PostgreSQL server (and a standby of it) cannot run here, or None when it can."""
    missing = [n for n in ("initdb", "pg_ctl", "pg_basebackup") if postgres_bin(n) is None]
    if missing:
        return "missing " + ", ".join(missing) + " (run `make servers`)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root without a `postgres` user to run PostgreSQL as"
    return None


class PostgresStandby(PostgresServer):
    """A streaming hot standby of a running :class:`PostgresServer`: ``pg_basebackup -R`` into
    a data directory of its own, started read-only on another free port."""

    def __init__(self, primary: PostgresServer) -> None:
        super().__init__()
        self.primary = primary

    def start(self) -> PostgresStandby:
        self._run(
            postgres_bin("pg_basebackup"),
            "-h",
            "127.0.0.1",
            "-p",
            str(self.primary.port),
            "-U",
            PG_USER,
            "-D",
            str(self.data),
            "-R",
            "-X",
            "stream",
            "--checkpoint=fast",
            "--no-sync",
        )
        options = (
            f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c hot_standby=on "
            "-c fsync=off -c wal_receiver_status_interval=1s"
        )
        self._start(options)
        return self

    def catch_up(self, seconds: float = 30.0) -> None:
        """Wait until the standby has replayed everything the primary had written by now
        (inserted WAL, not only flushed: the primary commits asynchronously)."""
        import psycopg

        with psycopg.connect(self.primary.url, autocommit=True) as primary:
            target = primary.execute("SELECT pg_current_wal_insert_lsn()").fetchone()[0]
        deadline = time.monotonic() + seconds
        with psycopg.connect(self.url, autocommit=True) as standby:
            while True:
                caught_up = standby.execute(
                    "SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", [target]
                ).fetchone()[0]
                if caught_up:
                    return
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the standby did not replay up to {target} in {seconds} s")
                time.sleep(0.05)
