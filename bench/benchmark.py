"""The explorer's benchmark: hot pages over HTTP on a large store, as deployed.

    make bench                                  # 20k sessions / 1M messages store, explorer only
    make bench BENCH_ARGS="--compare-datasette" # the same URLs on Datasette, interleaved
    make bench BENCH_ARGS="--compare-postgres-redis"  # and on PostgreSQL + Redis, interleaved
    make bench BENCH_ARGS="--baseline b852360 --first-views 0"  # and the explorer as it was then
    make bench BENCH_ARGS="--baseline 9476b15 --runs 0 --no-exports"  # first views, both in turn
    .venv/bin/python bench/benchmark.py --help

It builds (or reuses) a store with the demo generator, starts gunicorn with
``deploy/gunicorn.conf.py``, signs in, and times each page with warm-up and repeated runs,
printing the median and p95.  Exports are measured for time, size, throughput and the peak RSS
of the gunicorn workers.  With ``--compare-datasette`` it installs Datasette in its own
virtualenv, serves the same file the way the team's old setup did, and times the equivalent
URLs in the same rounds (explorer and Datasette alternate), printing explorer/Datasette ratios.
Before the rounds, ``--first-views N`` (default 5) measures what warm-up rounds hide: the first
build of the insights summaries and the first failures view on a new app database, and the
first view of insights (30 and 365 days), failures, the home page, the session and message
lists, a session page and searches after each of N restarts of gunicorn: each page the first
request of a new worker, from a user whose session cookie was made before the restart.
With ``--compare-postgres-redis`` a second explorer serves the same store with its app database
on a throwaway PostgreSQL and its cache on Redis (``tests/servers.py``), timed in the same rounds,
and the ratio to the default (SQLite + file cache) is printed per page.  With ``--baseline REV``
the explorer as of git revision REV (a throwaway worktree) is served and timed in the same rounds,
and each page's ratio to it is printed (its first views after a restart too, each page
restarting both explorers in turn): medians taken minutes apart on this shared machine differ
by a few ms for the same code, so "no page is slower than before" is judged in the same rounds.
Every server is first to ask for a page in turn, round after round.  Besides the wall-clock
median, each page shows the server's CPU per request (its workers' threads, read around the
request), which other load on the machine disturbs much less.  Around the first views it times a
fixed amount of work (a Python loop, an SQLite grouping) to say how fast the machine was then, and,
with ``--compare-hermes``, how many times faster than Hermes's engine each first view was: both
move with the machine's speed, which on a shared machine swings by up to 2x between hours.

This is a measurement, not a test: it prints numbers and exits 0.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Who the benchmark signs in as: "staff" (a superuser) or "analyst" (--analyst).
ROLE = "staff"
PY = sys.executable
# The key the benchmark's explorers sign with (cursors are signed).
SECRET_KEY = "benchmark-only-secret-key"


def log(*args) -> None:
    print(*args, flush=True)


# Servers ---------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port: int, path: str = "/", timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", path)
            conn.getresponse().read()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"server on port {port} did not answer within {timeout}s")


DEPLOYED = Path("deploy") / "gunicorn.conf.py"
# A gunicorn configuration: the deployed one, and a file named after each worker's pid written
# once the worker has loaded the application (gunicorn's post_worker_init hook).
READY_HOOK = """
import os

exec(compile(open({deployed!r}).read(), {deployed!r}, "exec"))
_deployed_hook = globals().get("post_worker_init")


def post_worker_init(worker):
    if _deployed_hook is not None:
        _deployed_hook(worker)
    open(os.path.join({ready!r}, str(worker.pid)), "w").close()
"""


class Explorer:
    """gunicorn serving the explorer from ``root`` (this checkout, or a baseline's)."""

    def __init__(self, store: Path, workdir: Path, port: int, root: Path = ROOT):
        self.store, self.port, self.root = store, port, root
        self.env = {
            **os.environ,
            "HERMES_STATE_DB": str(store),
            "HERMES_EXPLORER_DATA_DIR": str(workdir / "explorer-data"),
            "DJANGO_SECRET_KEY": SECRET_KEY,
            "DJANGO_SECURE_COOKIES": "0",
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "GUNICORN_BIND": f"127.0.0.1:{port}",
            "GUNICORN_ACCESS_LOG": "/dev/null",
            "GUNICORN_LOG_LEVEL": "warning",
            "DJANGO_SUPERUSER_PASSWORD": "bench-password-123",
            "DJANGO_LOG_LEVEL": "WARNING",
        }
        self.proc = None
        self.cookie = ""

    def manage(self, *args) -> None:
        subprocess.run(
            [PY, "manage.py", *args],
            cwd=self.root,
            env=self.env,
            check=True,
            stdout=subprocess.DEVNULL,
        )

    def start(self) -> None:
        Path(self.env["HERMES_EXPLORER_DATA_DIR"]).mkdir(parents=True, exist_ok=True)
        self.manage("migrate", "--noinput")
        self.manage("collectstatic", "--noinput")
        subprocess.run(
            [
                PY,
                "manage.py",
                "createsuperuser",
                "--noinput",
                "--username",
                "bench",
                "--email",
                "bench@example.invalid",
            ],
            cwd=self.root,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if ROLE == "analyst":
            # The same account, an analyst's rights: what most of the team signs in as.
            demote = (
                "from django.contrib.auth import get_user_model; "
                "get_user_model().objects.filter(username='bench')"
                ".update(is_superuser=False, is_staff=False)"
            )
            self.manage("shell", "-c", demote)
            self.manage("roles", "grant", "bench", "analyst")
        self.serve()
        wait_for(self.port, "/healthz")
        self.login()

    def login(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        conn.request("GET", "/accounts/login/")
        response = conn.getresponse()
        page = response.read().decode()
        csrf = re.search(r"csrftoken=([^;]+)", response.getheader("Set-Cookie") or "").group(1)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        body = urllib.parse.urlencode(
            {"csrfmiddlewaretoken": token, "username": "bench", "password": "bench-password-123"}
        )
        conn.request(
            "POST",
            "/accounts/login/",
            body=body,
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "Cookie": f"csrftoken={csrf}",
                "Referer": f"http://127.0.0.1:{self.port}/accounts/login/",
            },
        )
        response = conn.getresponse()
        response.read()
        session = re.search(r"sessionid=([^;]+)", response.getheader("Set-Cookie") or "")
        if not session:
            raise RuntimeError("could not sign in to the explorer")
        self.cookie = f"sessionid={session.group(1)}; csrftoken={csrf}"

    def serve(self) -> None:
        """Start gunicorn with the deployed settings of ``root``, plus a hook that leaves a file
        per worker once it has loaded the application: :meth:`restart` then knows the workers
        are ready without sending any of them a request."""
        ready = Path(self.env["HERMES_EXPLORER_DATA_DIR"]).parent / f"ready-{self.port}"
        shutil.rmtree(ready, ignore_errors=True)
        ready.mkdir(parents=True)
        config = ready.with_suffix(".conf.py")
        config.write_text(READY_HOOK.format(deployed=str(self.root / DEPLOYED), ready=str(ready)))
        gunicorn = str(Path(PY).with_name("gunicorn"))
        self.ready = ready
        self.proc = subprocess.Popen(
            [gunicorn, "-c", str(config), "hermes_explorer.wsgi:application"],
            cwd=self.root,
            env=self.env,
            start_new_session=True,
        )

    def restart(self) -> None:
        """Stop gunicorn and start it again on the same app data, as a deploy does, and wait
        for its workers to be ready: the next request is the first one a new worker serves,
        from a user whose session cookie was made before the restart (no new sign-in)."""
        self.stop()
        self.serve()
        # The deployed number of workers (deploy/gunicorn.conf.py).
        workers = int(self.env.get("GUNICORN_WORKERS") or max(2, os.cpu_count() or 1))
        deadline = time.monotonic() + 120
        while len(list(self.ready.iterdir())) < workers:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError(f"gunicorn on port {self.port}: workers not ready")
            time.sleep(0.05)
        time.sleep(0.5)  # from the hook to the worker's accept loop

    def worker_pids(self) -> list[int]:
        out = subprocess.run(["pgrep", "-P", str(self.proc.pid)], capture_output=True, text=True)
        return [int(p) for p in out.stdout.split()]

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)


PG_SCHEMA = "hermes_bench"
PG_READER = "hermes_reader"
PG_PROFILE = "pg"


def on(server: str, path: str | None) -> str | None:
    """The explorer URL ``path`` as ``server`` serves it (the PostgreSQL explorer's profile)."""
    return f"/p/{PG_PROFILE}{path}" if server in ("postgres", "pg-baseline") and path else path


def bench_postgres(store: Path, home: Path):
    """A PostgreSQL server (``tests/servers.py``, 127.0.0.1 only) whose data directory is kept
    in ``home``, holding ``store`` in the schema ``PG_SCHEMA`` readable by ``PG_READER``: the
    first run loads it (minutes for the 1M store) and leaves a marker naming the file it came
    from; later runs on the same, unchanged file only start the server."""
    sys.path.insert(0, str(ROOT))
    from hermes_fixtures.postgres import grant_read_only, load  # noqa: PLC0415
    from tests import servers as app  # noqa: PLC0415 (only for --postgres)

    server = app.PostgresServer()
    shutil.rmtree(server.dir, ignore_errors=True)
    server.dir = home
    server.data = home / "data"
    home.mkdir(parents=True, exist_ok=True)
    if server._as:
        os.chown(home, *(lambda u: (u.pw_uid, u.pw_gid))(__import__("pwd").getpwnam("postgres")))
    marker = home / "loaded.json"
    wanted = {
        "store": str(store.resolve()),
        # An empty WAL's time changes whenever a reader opens the file: not a change of data.
        "files": [
            [f.stat().st_size, f.stat().st_mtime_ns if f.stat().st_size else 0]
            for f in (store, store.with_name(store.name + "-wal"))
            if f.exists()
        ],
        "schema": PG_SCHEMA,
    }
    done = marker.exists() and json.loads(marker.read_text()) == wanted
    if not done:
        marker.unlink(missing_ok=True)
        shutil.rmtree(server.data, ignore_errors=True)
        server.start()
        log(f"loading {store} into PostgreSQL schema {PG_SCHEMA} (minutes for 1M messages) …")
        started = time.monotonic()
        counts = load(store, server.url, PG_SCHEMA, replace=True)
        grant_read_only(server.url, PG_READER, PG_SCHEMA)
        log(f"loaded in {time.monotonic() - started:.0f}s: {counts}")
        marker.write_text(json.dumps(wanted))
    else:
        server._run(
            app.postgres_bin("pg_ctl"),
            "-D",
            str(server.data),
            "-o",
            # As the first start (tests/servers.py): no fsync, the data can be loaded again.
            f"-p {server.port} -k {home} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off",
            "-l",
            str(home / "postgres.log"),
            "-w",
            "start",
        )
        log(f"reusing the PostgreSQL copy of {store} in {home}")
    reader = server.url.replace(f"//{app.PG_USER}@", f"//{PG_READER}@", 1)
    return server, f"{reader}?schema={PG_SCHEMA}"


def stop_postgres(server) -> None:
    """Stop the server, keeping its data directory for the next run."""
    with contextlib.suppress(subprocess.CalledProcessError, OSError):
        server._run(
            sys.modules["tests.servers"].postgres_bin("pg_ctl"),
            "-D",
            str(server.data),
            "-m",
            "fast",
            "stop",
        )


class Datasette:
    """Datasette in its own virtualenv, started the way the team's runbook starts it."""

    def __init__(self, store: Path, venv: Path, port: int, time_limit_ms: int):
        self.store, self.venv, self.port = store, venv, port
        self.time_limit_ms = time_limit_ms
        self.note = ""
        self.proc = None
        self.cookie = ""

    def install(self) -> None:
        exe = self.venv / "bin" / "datasette"
        if not exe.exists():
            log(f"installing Datasette into {self.venv} …")
            subprocess.run([sys.executable, "-m", "venv", str(self.venv)], check=True)
            subprocess.run(
                [str(self.venv / "bin" / "pip"), "install", "--quiet", "datasette"], check=True
            )

    def prepare(self) -> None:
        """Datasette cannot open a current-shape file: its start-up check reads every table,
        and ``messages_fts_cjk`` needs a tokenizer it does not have ("no such tokenizer:
        cjk_unicode61"). It is served a copy whose schema lacks that one table (same rows)."""
        conn = sqlite3.connect(f"file:{self.store}?mode=ro", uri=True)
        has_cjk = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'messages_fts_cjk'"
        ).fetchone()
        conn.close()
        if not has_cjk:
            return
        copy = self.venv.parent / "datasette-copy" / "state.db"
        if not copy.exists() or copy.stat().st_mtime < self.store.stat().st_mtime:
            log(
                "Datasette refuses this file (no such tokenizer: cjk_unicode61); "
                f"serving it a copy without messages_fts_cjk at {copy} …"
            )
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.store, copy)
            conn = sqlite3.connect(copy)
            conn.execute("PRAGMA writable_schema = ON")
            conn.execute("DELETE FROM sqlite_master WHERE name = 'messages_fts_cjk'")
            conn.execute("PRAGMA writable_schema = OFF")
            conn.commit()
            conn.close()
        self.store = copy
        self.note = (
            "served a copy without messages_fts_cjk (Datasette cannot start on the original)"
        )

    def start(self) -> None:
        self.install()
        self.prepare()
        # The runbook: `datasette serve state.db --immutable state.db`. The SQL time limit is
        # raised from Datasette's 1 s default, or its heavier pages would answer with an error
        # instead of rows (the team's measured 5 s searches imply a raised limit).
        self.proc = subprocess.Popen(
            [
                str(self.venv / "bin" / "datasette"),
                "serve",
                "--immutable",
                str(self.store),
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--setting",
                "sql_time_limit_ms",
                str(self.time_limit_ms),
                "--setting",
                "facet_time_limit_ms",
                "200",
                "--setting",
                "num_sql_threads",
                "3",
                # Datasette cuts a streamed CSV at 100 MB by default: the export rows compare
                # whole downloads.
                "--setting",
                "max_csv_mb",
                "0",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        wait_for(self.port, "/-/versions.json")

    def worker_pids(self) -> list[int]:
        return [self.proc.pid]

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(20)


# Measuring -------------------------------------------------------------------------------------
@dataclass
class Sample:
    seconds: float
    status: int
    size: int
    # The server's CPU seconds for this request (its workers' threads, before and after).
    cpu: float | None = None


def thread_cpu(pids: list[int]) -> float | None:
    """CPU seconds the processes' threads have run, to the nanosecond (Linux schedstat; the
    clock ticks of /proc/<pid>/stat are 10 ms, coarser than a page).  None without it."""
    total = 0
    try:
        for pid in pids:
            for task in Path(f"/proc/{pid}/task").iterdir():
                try:
                    total += int((task / "schedstat").read_text().split()[0])
                except (OSError, ValueError):
                    pass  # a thread that ended meanwhile
    except OSError:
        return None
    return total / 1e9


def fetch(server, path: str, timeout: float = 600, pids: list[int] | None = None) -> Sample:
    """GET ``path``; with the server's worker ``pids``, also the CPU it spent on the request
    (requests are sent one at a time, so the workers' CPU between the two reads is this one's)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=timeout)
    cpu_before = thread_cpu(pids) if pids else None
    started = time.perf_counter()
    conn.request("GET", path, headers={"Cookie": server.cookie} if server.cookie else {})
    response = conn.getresponse()
    size = 0
    while chunk := response.read(1 << 16):
        size += len(chunk)
    elapsed = time.perf_counter() - started
    conn.close()
    cpu_after = thread_cpu(pids) if cpu_before is not None else None
    cpu = cpu_after - cpu_before if cpu_after is not None else None
    return Sample(elapsed, response.status, size, cpu)


def rss_kb(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total = max(total, int(line.split()[1]))
        except OSError:
            pass
    return total


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time the processes have used (a throughput per CPU second does not
    depend on what else the machine is doing, a wall-clock one does)."""
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            pass
    return total


def fetch_with_rss(server, path: str) -> tuple[Sample, int, int]:
    """Download ``path`` while sampling the server's worker RSS; returns (sample, start, peak)."""
    pids = server.worker_pids()
    start = rss_kb(pids)
    peak = [start]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], rss_kb(pids))
            time.sleep(0.05)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    result = fetch(server, path)
    done.set()
    thread.join()
    return result, start, peak[0]


def median_cpu(samples: list[Sample]) -> float | None:
    values = [s.cpu for s in samples if s.cpu is not None]
    return statistics.median(values) if values else None


def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f}"


# A fixed amount of work, timed to tell how fast the machine is at the time of a run: the
# same code's first views differ by up to 2x between hours on a shared machine, and so does
# this.  An interpreted loop and an SQLite statement (grouping rows of its own making).
SPEED_LOOP = 5_000_000
SPEED_SQL = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000)"
    " SELECT i % 97, COUNT(*), SUM(i) FROM n GROUP BY 1"
)


def machine_speed(rounds: int = 3) -> dict[str, float]:
    """Milliseconds of :data:`SPEED_LOOP` and :data:`SPEED_SQL` now (medians; lower is
    faster)."""
    loop, sql = [], []
    for _ in range(rounds):
        started = time.perf_counter()
        total = 0
        for i in range(SPEED_LOOP):
            total += i
        loop.append(time.perf_counter() - started)
        conn = sqlite3.connect(":memory:")
        started = time.perf_counter()
        conn.execute(SPEED_SQL).fetchall()
        sql.append(time.perf_counter() - started)
        conn.close()
    return {
        "python_loop_ms": round(statistics.median(loop) * 1000, 1),
        "sqlite_ms": round(statistics.median(sql) * 1000, 1),
    }


def log_speed(when: str) -> dict[str, float]:
    speed = machine_speed()
    log(
        f"machine speed {when}: Python loop {speed['python_loop_ms']:.0f} ms,"
        f" SQLite grouping {speed['sqlite_ms']:.0f} ms (same work every run; lower is faster)"
    )
    return speed


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


@dataclass
class Page:
    name: str
    explorer: str
    datasette: str | None = None
    # The URL as the baseline explorer takes it, where it differs (an older cursor format).
    baseline_url: str | None = None
    samples: dict[str, list[Sample]] = field(
        default_factory=lambda: {
            k: []
            for k in ("explorer", "datasette", "pg+redis", "baseline", "postgres", "pg-baseline")
        }
    )


# The baseline ----------------------------------------------------------------------------------
def baseline_tree(rev: str, workdir: Path) -> Path:
    """A throwaway checkout of ``rev`` (a git worktree of this repository, detached) ready to
    serve: its translation catalogs compiled when it has them (the .mo files are not in git)."""
    tree = workdir / "baseline-tree"
    subprocess.run(
        ["git", "worktree", "add", "--detach", "--quiet", str(tree), rev],
        cwd=ROOT,
        check=True,
    )
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=tree, capture_output=True, text=True
    ).stdout.strip()
    log(f"baseline: {rev} ({commit}) checked out at {tree}")
    if (tree / "locale").is_dir():
        subprocess.run(
            [PY, "manage.py", "compilemessages", "--ignore=.venv", "-v", "0"],
            cwd=tree,
            env={**os.environ, "DJANGO_DEBUG": "1", "DJANGO_SECRET_KEY": "benchmark-only"},
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return tree


def drop_baseline_tree(tree: Path) -> None:
    subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)


# The store -------------------------------------------------------------------------------------
def ensure_store(path: Path, sessions: int, messages: int, seed: int) -> None:
    if path.exists():
        log(f"reusing {path} ({path.stat().st_size / 1e9:.2f} GB)")
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    log(f"building {path}: {sessions:,} sessions, {messages:,} messages (seed {seed}) …")
    started = time.monotonic()
    subprocess.run(
        [
            PY,
            "manage.py",
            "make_demo_db",
            str(path),
            "--sessions",
            str(sessions),
            "--messages",
            str(messages),
            "--seed",
            str(seed),
        ],
        cwd=ROOT,
        check=True,
        env={**os.environ, "DJANGO_DEBUG": "1"},
    )
    log(f"built in {time.monotonic() - started:.0f}s, {path.stat().st_size / 1e9:.2f} GB")


BIG_SESSION = "bench-big-session"


def ensure_big_session(path: Path, n: int) -> None:
    """Add to the store, once, a session of ``n`` messages: the largest session's rows again
    and again, each time later (the demo generator's sessions stay at a few thousand)."""
    conn = sqlite3.connect(path)
    if conn.execute("SELECT 1 FROM sessions WHERE id = ?", [BIG_SESSION]).fetchone() is None:
        log(f"adding a session of {n:,} messages ({BIG_SESSION}) …")
        src = conn.execute("SELECT id FROM sessions ORDER BY message_count DESC LIMIT 1").fetchone()
        cols = [r[1] for r in conn.execute("PRAGMA table_info(sessions)")]
        values = {"id": BIG_SESSION, "title": BIG_SESSION, "message_count": n}
        conn.execute(
            f"INSERT INTO sessions ({', '.join(cols)}) SELECT"
            f" {', '.join('?' if c in values else c for c in cols)} FROM sessions WHERE id = ?",
            [values[c] for c in cols if c in values] + [src[0]],
        )
        span = conn.execute(
            "SELECT MAX(timestamp) - MIN(timestamp) + 60 FROM messages WHERE session_id = ?", src
        ).fetchone()[0]
        cols = [r[1] for r in conn.execute("PRAGMA table_info(messages)") if r[1] != "id"]
        k = 0
        while (
            have := conn.execute(
                "SELECT COUNT(*) FROM messages WHERE session_id = ?", [BIG_SESSION]
            ).fetchone()[0]
        ) < n:
            made = {
                "session_id": "?",
                "timestamp": f"timestamp + {k * span}",
                "message_uid": f"message_uid || '-{k}'",
            }
            conn.execute(
                f"INSERT INTO messages ({', '.join(cols)}) SELECT"
                f" {', '.join(made.get(c, c) for c in cols)} FROM messages"
                " WHERE session_id = ? ORDER BY id LIMIT ?",
                [BIG_SESSION, src[0], n - have],
            )
            k += 1
        conn.commit()
    conn.close()


QUEUE_SOURCES = ("telegram", "cron", "discord", "slack")
SCORE_PAGE = "review: score a session (POST)"


def named(name: str, words: list[str] | None) -> bool:
    """Whether ``name`` holds one of ``words`` (``--pages``, ``--exports``; none: every name)."""
    return not words or any(word in name for word in words)


def pick_targets(store: Path) -> dict:
    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    q = lambda sql, *a: conn.execute(sql, a).fetchone()  # noqa: E731
    big = q(
        "SELECT id, message_count FROM sessions WHERE id <> ? ORDER BY message_count DESC LIMIT 1",
        BIG_SESSION,
    )
    huge = q("SELECT COUNT(*) FROM messages WHERE session_id = ?", BIG_SESSION)[0]
    mid = q(
        "SELECT id FROM sessions WHERE message_count BETWEEN 40 AND 200 "
        "ORDER BY started_at DESC LIMIT 1 OFFSET 100"
    )
    n_sessions = q("SELECT COUNT(*) FROM sessions")[0]
    deep = q(
        "SELECT started_at, id, rowid FROM sessions ORDER BY started_at DESC, id DESC "
        "LIMIT 1 OFFSET ?",
        min(10_000, n_sessions - 60),
    )
    # A review queue of about 10,000 sessions (four sources), and a session half-way along it.
    queue = q(
        f"SELECT id FROM sessions WHERE source IN ({', '.join('?' * len(QUEUE_SOURCES))}) "
        "ORDER BY started_at DESC, id DESC LIMIT 1 OFFSET 5000",
        *QUEUE_SOURCES,
    )
    rare = "zyxwvut"
    total_messages = q("SELECT MAX(id) FROM messages")[0]
    cut = q(
        "SELECT timestamp FROM messages ORDER BY id LIMIT 1 OFFSET ?",
        min(100_000, total_messages - 1),
    )[0]
    conn.close()
    return {
        "queue_session": queue[0] if queue else big[0],
        "big_session": big[0],
        "big_messages": big[1],
        "huge_messages": huge,
        "session": mid[0] if mid else big[0],
        "deep_started": deep[0],
        "deep_id": deep[1],
        "deep_rowid": deep[2],
        "rare": rare,
        "common": "telegram",
        "total_messages": total_messages,
        "first_100k_until": time.strftime("%Y-%m-%d", time.gmtime(cut)),
        # The end of that day in UTC (the default TIME_ZONE): Datasette's equivalent filter.
        "first_100k_end": (int(cut) // 86_400 + 1) * 86_400,
    }


def fetch_json(server, path: str) -> tuple[Sample, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=600)
    started = time.perf_counter()
    conn.request("GET", path, headers={"Cookie": server.cookie})
    response = conn.getresponse()
    body = response.read()
    sample = Sample(time.perf_counter() - started, response.status, len(body))
    conn.close()
    return sample, json.loads(body) if response.status == 200 else {}


FIRST_PAGES = (
    ("insights, 30 days", "/insights/?days=30"),
    ("insights, 365 days", "/insights/?days=365"),
    ("failures, 30 days", "/failures/?days=30"),
)


def restart_pages(t: dict) -> list[tuple[str, str]]:
    """The pages timed on their first view after each restart: the insights and failures
    pages, then the pages a user opens first (the home page, lists, a transcript, a search),
    each the first request of a new worker, from a user signed in before the restart."""
    return [
        *FIRST_PAGES,
        ("home (overview)", "/"),
        ("sessions, newest", "/sessions/"),
        ("messages, newest", "/messages/"),
        ("messages, one session", f"/messages/?session_id={urllib.parse.quote(t['session'])}"),
        ("session page", f"/sessions/{urllib.parse.quote(t['session'])}/"),
        ("search, rare word", f"/search/?q={t['rare']}"),
        ("search, common word", f"/search/?q={t['common']}"),
    ]


# Times Hermes's own engine on the store, from a Hermes checkout on sys.path (argv: checkout,
# store, days); prints the seconds of ``InsightsEngine(db).generate(days)``.  The store is
# opened read-only; ``db`` is the little the engine asks of Hermes's SessionDB.
HERMES_ENGINE = """
import sqlite3, sys, time
sys.path.insert(0, sys.argv[1])
from agent.insights import InsightsEngine

class StateDB:
    def __init__(self, path):
        self._conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        self._conn.row_factory = sqlite3.Row

    def flush_token_counts(self, timeout=5.0):
        return True

db = StateDB(sys.argv[2])
started = time.perf_counter()
InsightsEngine(db).generate(days=int(sys.argv[3]))
print(time.perf_counter() - started)
"""


def hermes_engine_seconds(checkout: Path, python: str, store: Path, days: int) -> float:
    """Seconds Hermes's ``InsightsEngine(db).generate(days)`` takes on ``store`` now, in a
    process of its own (``python`` with Hermes's dependencies, ``checkout`` on its path)."""
    out = subprocess.run(
        [python, "-c", HERMES_ENGINE, str(checkout), str(store), str(days)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    return float(out.stdout.strip().splitlines()[-1])


def first_views(
    store: Path,
    restarts: int,
    targets: dict,
    hermes: tuple[Path, str] | None = None,
    baseline_root: Path | None = None,
    words: list[str] | None = None,
    pg_stores: str | None = None,
) -> dict:
    """What no warm-up round shows: the first build on a new app database, then the first view
    of each page after each of ``restarts`` restarts of gunicorn (the work kept, the processes
    new), each page alone in its restart.

    * first build, insights: ``insights_warm`` on an app database of its own (the summaries
      and the preset reports, as its timer computes them), then the page's first response;
    * with ``hermes`` (a checkout and its Python), Hermes's own engine on the same window,
      right after, the store's pages as warm as the build left them;
    * first view ever, failures: the first request on a new app database;
    * first view after a restart: the first request of the page in new worker processes, the
      summaries and failure counts already stored, the short-lived cache (reports, counts,
      facets) emptied, as a live store makes it (:func:`restart_pages`); with
      ``baseline_root`` (a checkout of an earlier revision), that explorer too, on its own app
      database, restarted in turn with this one for each page; with ``pg_stores`` (the
      ``HERMES_STORES`` of an explorer serving the store's PostgreSQL copy as profile
      ``PG_PROFILE``), that explorer too, its pages read from the schema."""
    out: dict = {"first_build": [], "after_restart": [], "speed": [log_speed("before")]}
    for name, path in [p for p in FIRST_PAGES if named(p[0], words)]:
        workdir = Path(tempfile.mkdtemp(prefix="hermes-bench-first-"))
        explorer = Explorer(store, workdir, free_port())
        try:
            explorer.start()
            load = os.getloadavg()[0]
            if path.startswith("/insights/"):
                # As deployed: insights_warm (its timer) builds the summaries and the preset
                # reports; the first response is the page's after it.
                started = time.perf_counter()
                explorer.manage("insights_warm")
                first, data = fetch_json(explorer, path + "&_export=json")
                total = time.perf_counter() - started
            else:
                first = fetch(explorer, path)
                total = first.seconds
            row = {
                "page": name,
                "first_response_ms": round(first.seconds * 1000, 1),
                "complete_s": round(total, 2),
                "status": first.status,
                "load_average": round(load, 2),
            }
            days = re.search(r"days=(\d+)", path)
            if hermes and path.startswith("/insights/") and days:
                explorer.stop()  # nothing else running while Hermes's engine is timed
                row["hermes_s"] = round(hermes_engine_seconds(*hermes, store, int(days[1])), 2)
            out["first_build"].append(row)
            log(
                f"first build   {name:20} first response {first.seconds * 1000:8.1f} ms,"
                f" complete after {total:6.2f} s (load {load:.1f})"
                + (f"; Hermes's engine {row['hermes_s']:.2f} s" if "hermes_s" in row else "")
            )
        finally:
            explorer.stop()
            shutil.rmtree(workdir, ignore_errors=True)
    workdir = Path(tempfile.mkdtemp(prefix="hermes-bench-first-"))
    servers = [("explorer", Explorer(store, workdir / "explorer", free_port()))]
    if baseline_root is not None:
        servers.append(
            ("baseline", Explorer(store, workdir / "baseline", free_port(), baseline_root))
        )
    if pg_stores:  # the schema's pages, from an explorer serving it as profile PG_PROFILE
        servers.append(("postgres", Explorer(store, workdir / "postgres", free_port())))
        servers[-1][1].env["HERMES_STORES"] = pg_stores
    try:
        for _name, server in servers:
            server.start()
            server.manage("insights_warm")
            server.stop()
        pages = [p for p in restart_pages(targets) if named(p[0], words)]
        samples = {(who, name): [] for who, _ in servers for name, _ in pages}
        loads = []
        for restart in range(restarts):
            for name, path in pages:
                # Each restart starts with the next server: none is always the first.
                turn = restart % len(servers)
                for who, server in servers[turn:] + servers[:turn]:
                    # As after a deploy on a live store: Hermes has written since, so no
                    # report, count or facet kept under the file's old signature serves (the
                    # summaries in the app database and the failure counts of full blocks
                    # still do).
                    data_dir = Path(server.env["HERMES_EXPLORER_DATA_DIR"])
                    shutil.rmtree(data_dir / "cache" / "default", ignore_errors=True)
                    server.restart()
                    loads.append(os.getloadavg()[0])
                    samples[(who, name)].append(fetch(server, on(who, path)).seconds)
                    server.stop()
        out["speed"].append(log_speed("after"))
        hermes_s = {row["page"]: row["hermes_s"] for row in out["first_build"] if "hermes_s" in row}
        for name, _ in pages:
            times = samples[("explorer", name)]
            med = statistics.median(times)
            row = {
                "page": name,
                "median_ms": round(med * 1000, 1),
                "max_ms": round(max(times) * 1000, 1),
                "restarts": restarts,
            }
            line = (
                f"after restart {name:20} median {med * 1000:8.1f} ms,"
                f" max {max(times) * 1000:8.1f} ms over {restarts} restarts"
            )
            if name in hermes_s:
                # Hermes's engine on the same window, timed a few minutes earlier: a yardstick
                # that moves with the machine's speed.
                row["times_faster_than_hermes"] = round(hermes_s[name] / med, 1)
                line += f"; {hermes_s[name] / med:.1f}x faster than Hermes's engine"
            for who in [who for who, _ in servers if who != "explorer"]:
                other = statistics.median(samples[(who, name)])
                # Above 1, the slower: this checkout (beside the baseline), the schema (postgres).
                ratio = med / other if who == "baseline" else other / med
                row[f"{who}_median_ms"] = round(other * 1000, 1)
                row[f"{who}_max_ms"] = round(max(samples[(who, name)]) * 1000, 1)
                row[f"{who}_ratio"] = round(ratio, 3)
                line += f"; {who} median {other * 1000:8.1f} ms, ratio {ratio:5.2f}"
            out["after_restart"].append(row)
            log(line)
        out["load_average"] = round(statistics.mean(loads), 2) if loads else None
    finally:
        for _name, server in servers:
            server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return out


def score_presses(server, session_id: str, runs: int) -> list[float]:
    """Seconds of each of ``runs`` presses of a score's button on a session page (a CSRF
    POST answered with a redirect; pressing twice clears, so creates and deletes alternate)."""
    made = subprocess.run(
        [
            PY,
            "manage.py",
            "shell",
            "-c",
            "from annotations_app.models import Score; print(Score.objects.get_or_create("
            "name='quality', defaults={'values': ['good', 'bad']})[0].pk)",
        ],
        cwd=server.root,
        env=server.env,
        check=True,
        capture_output=True,
        text=True,
    )
    csrf = re.search(r"csrftoken=([^;]+)", server.cookie).group(1)
    body = urllib.parse.urlencode(
        {"csrfmiddlewaretoken": csrf, "score": made.stdout.strip(), "value": "good"}
    )
    path = f"/review/sessions/{urllib.parse.quote(session_id)}/score"
    times = []
    for _ in range(runs):
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        started = time.perf_counter()
        conn.request(
            "POST",
            path,
            body=body,
            headers={
                "Cookie": server.cookie,
                "Content-Type": "application/x-www-form-urlencoded",
            },
        )
        response = conn.getresponse()
        response.read()
        times.append(time.perf_counter() - started)
        conn.close()
        if response.status != 302:
            raise RuntimeError(f"scoring answered {response.status}")
    return times


def explorer_cursor(started_at: float, session_id: str) -> str:
    """The session list's cursor for the page after this session, signed with the key the
    benchmark's explorers run with."""
    sys.path.insert(0, str(ROOT))
    from django.conf import settings  # noqa: PLC0415

    from sessions_app.pagination import Keyset  # noqa: PLC0415 (needs only Django's Q)

    if not settings.configured:
        settings.configure(SECRET_KEY=SECRET_KEY)
    keyset = Keyset((("started_at", True), ("id", True)), name="-started_at")
    return keyset.encode({"started_at": started_at, "id": session_id}, "n")


def unsigned_cursor(started_at: float, session_id: str) -> str:
    """The same cursor as explorers before signed cursors wrote it (base64 of its JSON)."""
    payload = {"k": "-started_at", "d": "n", "v": [started_at, session_id]}
    raw = json.dumps(payload, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


# The /state/ API (Datasette's URLs) as scripts call it: a hundred rows sorted by a column.
STATE_SORTED = "_sort=source&_size=100"


def build_pages(t: dict) -> list[Page]:
    s, big = urllib.parse.quote(t["session"]), urllib.parse.quote(t["big_session"])
    cursor = explorer_cursor(t["deep_started"], t["deep_id"])
    deep_next = urllib.parse.quote(f"{t['deep_started']},{t['deep_rowid']}")
    queue = "&".join(f"source={name}" for name in QUEUE_SOURCES)
    return [
        Page("home (overview)", "/", "/state"),
        Page("sessions: newest", "/sessions/", "/state/sessions?_sort_desc=started_at"),
        Page(
            "sessions: telegram, newest",
            "/sessions/?source=telegram&sort=-started_at",
            "/state/sessions?source=telegram&_sort_desc=started_at",
        ),
        Page(
            "sessions: sorted by source", "/sessions/?sort=source", "/state/sessions?_sort=source"
        ),
        Page(
            "sessions: deep page (10,000 in)",
            f"/sessions/?cursor={cursor}",
            f"/state/sessions?_sort_desc=started_at&_next={deep_next}",
            f"/sessions/?cursor={unsigned_cursor(t['deep_started'], t['deep_id'])}",
        ),
        Page(
            f"session page ({t['big_messages']:,} msgs)",
            f"/sessions/{big}/",
            f"/state/messages?session_id={big}&_sort=id",
        ),
        Page(f"session timeline ({t['big_messages']:,} msgs)", f"/sessions/{big}/timeline/"),
        *(
            [Page(f"session timeline ({huge:,} msgs)", f"/sessions/{BIG_SESSION}/timeline/")]
            if (huge := t["huge_messages"])
            else []
        ),
        Page(
            "messages of one session",
            f"/messages/?session_id={s}",
            f"/state/messages?session_id={s}",
        ),
        Page("messages: role=user", "/messages/?role=user", "/state/messages?role=user"),
        Page("live", "/live/"),
        Page(
            "state API: sessions sorted by source",
            f"/state/sessions.json?{STATE_SORTED}",
            f"/state/sessions.json?{STATE_SORTED}",
        ),
        Page(
            f"search: rare word ({t['rare']})",
            f"/search/?q={t['rare']}",
            f"/state/messages?_search={t['rare']}",
        ),
        Page(
            f"search: common word ({t['common']})",
            f"/search/?q={t['common']}",
            f"/state/messages?_search={t['common']}",
        ),
        Page(
            "review: next to review (queue of ~10,000)",
            f"/review/next/?{queue}&from={urllib.parse.quote(t['queue_session'])}",
        ),
        Page(
            "review: a session of the queue (its place counted)",
            f"/review/sessions/{urllib.parse.quote(t['queue_session'])}/?{queue}",
        ),
        Page("insights: 30 days", "/insights/?days=30"),
        Page("insights: 365 days", "/insights/?days=365"),
        Page("insights: all time", "/insights/?days=all"),
        Page("people: 30 days", "/people/?days=30"),
        Page("people: 365 days", "/people/?days=365"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--store",
        type=Path,
        default=ROOT / "var" / "bench" / "state.db",
        help="store to use (built when missing; name it state.db so Datasette's URLs are /state/…)",
    )
    parser.add_argument("--sessions", type=int, default=20_000)
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--big-session",
        type=int,
        default=0,
        metavar="N",
        help="add to the store (once) a session of N messages, and time its timeline",
    )
    parser.add_argument("--runs", type=int, default=11, help="timed runs per page")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--compare-datasette", action="store_true")
    parser.add_argument("--datasette-time-limit-ms", type=int, default=20_000)
    parser.add_argument("--no-exports", action="store_true", help="skip the export measurements")
    parser.add_argument("--export-runs", type=int, default=1, help="downloads of each export")
    parser.add_argument("--no-pages", action="store_true", help="measure the exports only")
    parser.add_argument(
        "--exports", nargs="*", help="measure only the exports whose name contains these words"
    )
    parser.add_argument(
        "--pages",
        nargs="+",
        metavar="WORD",
        help="time only the pages whose name contains one of these words (e.g. search insights)",
    )
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    parser.add_argument(
        "--keep-app-data",
        type=Path,
        metavar="DIR",
        help="keep the timed explorers' app databases here rather than in a new temporary "
        "directory: a later run on the same store finds the summaries insights_warm stored and "
        "computes only what changed (hours saved on a 10M-message store)",
    )
    parser.add_argument(
        "--first-views",
        type=int,
        default=5,
        metavar="N",
        help="restarts for the first-build / first-view-after-restart measurements (0: skip)",
    )
    parser.add_argument(
        "--compare-hermes",
        type=Path,
        metavar="CHECKOUT",
        help="with the first builds, time Hermes's own InsightsEngine on the same windows, from "
        "this Hermes Agent checkout (the directory holding agent/insights.py)",
    )
    parser.add_argument(
        "--hermes-python",
        default=sys.executable,
        help="the Python that has Hermes's dependencies (default: this one)",
    )
    parser.add_argument(
        "--compare-postgres-redis",
        action="store_true",
        help="also serve the store from a second explorer whose app database is a throwaway "
        "PostgreSQL and whose cache is Redis (as on several machines), timed in the same rounds",
    )
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="also serve the store loaded into a PostgreSQL schema (a throwaway server on "
        "127.0.0.1 whose data directory is kept in var/bench/pg, loaded once per store) from a "
        "second explorer, timed in the same rounds; pages that answer 501 there are shown so",
    )
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="also serve the store from the explorer as of git revision REV (a throwaway "
        "worktree), timed in the same rounds: is any page slower than before?",
    )
    parser.add_argument(
        "--analyst", action="store_true", help="sign in as an analyst instead of a superuser"
    )
    args = parser.parse_args()
    global ROLE
    ROLE = "analyst" if args.analyst else "staff"

    ensure_store(args.store, args.sessions, args.messages, args.seed)
    if args.big_session:
        ensure_big_session(args.store, args.big_session)
    targets = pick_targets(args.store)
    pages = [] if args.no_pages else build_pages(targets)
    pages = [p for p in pages if named(p.name, args.pages)]
    workdir = Path(tempfile.mkdtemp(prefix="hermes-bench-"))
    kept = args.keep_app_data or workdir
    explorer = Explorer(args.store, kept, free_port())
    datasette = None
    if args.compare_datasette:
        datasette = Datasette(
            args.store,
            ROOT / "var" / "bench" / "datasette-venv",
            free_port(),
            args.datasette_time_limit_ms,
        )
    results: dict = {"store": str(args.store), "targets": targets, "pages": [], "exports": []}
    baseline_root = baseline_tree(args.baseline, workdir) if args.baseline else None
    app_servers, shared, baseline, pg_server, pgx = [], None, None, None, None
    pg_baseline = None
    try:
        if args.postgres:
            pg_server, source = bench_postgres(args.store, ROOT / "var" / "bench" / "pg")
        if args.first_views and not args.no_pages:
            log("first build and first view after a restart (each on new gunicorn processes):")
            hermes = (args.compare_hermes, args.hermes_python) if args.compare_hermes else None
            results["first_views"] = first_views(
                args.store,
                args.first_views,
                targets,
                hermes,
                baseline_root,
                args.pages,
                pg_stores=f"default={args.store},{PG_PROFILE}={source}" if pg_server else None,
            )
        if args.compare_postgres_redis:
            sys.path.insert(0, str(ROOT))
            from tests import servers as app  # noqa: PLC0415 (only for this option)

            app_servers = [app.PostgresServer().start(), app.RedisServer().start()]
            shared = Explorer(args.store, workdir / "postgres-redis", free_port())
            shared.env["DATABASE_URL"], shared.env["CACHE_URL"] = (s.url for s in app_servers)
            log(f"second explorer: app database {app_servers[0].url}, cache {app_servers[1].url}")
        if args.postgres:
            pgx = Explorer(args.store, kept / "postgres", free_port())
            # The file too (the app's own alias reads it), the schema as profile PG_PROFILE.
            pgx.env["HERMES_STORES"] = f"default={args.store},{PG_PROFILE}={source}"
            log(f"PostgreSQL explorer: the store read from {source}")
        if baseline_root is not None:
            baseline = Explorer(args.store, kept / "baseline", free_port(), baseline_root)
            if pgx:  # the schema served by the baseline too: is a page slower there than before?
                pg_baseline = Explorer(args.store, kept / "pg-baseline", free_port(), baseline_root)
                pg_baseline.env["HERMES_STORES"] = pgx.env["HERMES_STORES"]
        explorer.start()
        # As a deployment does before serving (README): the pages are timed in steady state,
        # not while the first views build every session's insights summaries.
        explorer.manage("insights_warm")
        if datasette:
            datasette.start()
        if shared:
            shared.start()
            shared.manage("insights_warm")
        if pgx:
            pgx.start()
            pgx.manage("insights_warm")
        if pg_baseline:
            pg_baseline.start()
            pg_baseline.manage("insights_warm")
        if baseline:
            baseline.start()
            baseline.manage("insights_warm")
        servers = [("explorer", explorer)] + ([("datasette", datasette)] if datasette else [])
        servers += [("pg+redis", shared)] if shared else []
        servers += [("baseline", baseline)] if baseline else []
        servers += [("pg-baseline", pg_baseline)] if pg_baseline else []
        servers += [("postgres", pgx)] if pgx else []
        pids = {name: server.worker_pids() for name, server in servers}
        if datasette and datasette.note:
            log(f"Datasette: {datasette.note}")
            results["datasette_note"] = datasette.note
        log(
            f"store: {args.store} · {targets['total_messages']:,} messages · "
            f"runs {args.runs} after {args.warmup} warm-up"
        )
        for round_no in range(args.warmup + args.runs):
            # Each round starts with the next server: none is always the first (or the second)
            # to ask for a page.
            turn = round_no % len(servers)
            for page in pages:
                for name, server in servers[turn:] + servers[:turn]:
                    path = (
                        page.datasette
                        if name == "datasette"
                        else (name == "baseline" and page.baseline_url) or on(name, page.explorer)
                    )
                    if path is None:
                        continue
                    sample = fetch(server, path, pids=pids[name])
                    if round_no >= args.warmup:
                        page.samples[name].append(sample)
        header = f"{'page':42} {'median ms':>10} {'p95 ms':>8} {'cpu ms':>7} {'status':>6}"
        if datasette:
            header += f" {'datasette med':>14} {'ratio':>6}"
        if shared:
            header += f" {'pg+redis med':>13} {'p95':>7} {'ratio':>6}"
        if pgx:
            header += f" {'postgres med':>13} {'p95':>7} {'cpu ms':>7} {'ratio':>6}"
        if baseline:
            header += (
                f" {'baseline med':>13} {'p95':>7} {'cpu ms':>7} {'ratio':>6} {'cpu ratio':>9}"
            )
        log("\n" + header)
        for page in pages:
            ex = page.samples["explorer"]
            if not ex:  # --runs 0: the first views only
                continue
            med, p95 = (
                statistics.median(s.seconds for s in ex),
                percentile([s.seconds for s in ex], 95),
            )
            row = {
                "page": page.name,
                "url": page.explorer,
                "median_ms": round(med * 1000, 1),
                "p95_ms": round(p95 * 1000, 1),
                "status": ex[-1].status,
            }
            cpu = median_cpu(ex)
            if cpu is not None:
                row["cpu_ms"] = round(cpu * 1000, 1)
            line = f"{page.name:42} {med * 1000:10.1f} {p95 * 1000:8.1f} {ms(cpu):>7} {ex[-1].status:6}"
            ds = page.samples["datasette"]
            if ds:
                dmed = statistics.median(s.seconds for s in ds)
                row.update(
                    datasette_url=page.datasette,
                    datasette_median_ms=round(dmed * 1000, 1),
                    datasette_status=ds[-1].status,
                    ratio=round(med / dmed, 3),
                )
                line += f" {dmed * 1000:14.1f} {med / dmed:6.2f}"
                if ds[-1].status != 200:
                    line += f" (datasette answered {ds[-1].status})"
            pg = page.samples["pg+redis"]
            if pg:
                pmed = statistics.median(s.seconds for s in pg)
                pp95 = percentile([s.seconds for s in pg], 95)
                row.update(
                    pg_redis_median_ms=round(pmed * 1000, 1),
                    pg_redis_p95_ms=round(pp95 * 1000, 1),
                    pg_redis_status=pg[-1].status,
                    pg_redis_ratio=round(pmed / med, 3),
                )
                line += f" {pmed * 1000:13.1f} {pp95 * 1000:7.1f} {pmed / med:6.2f}"
            on_pg = page.samples["postgres"]
            if on_pg:
                pmed = statistics.median(s.seconds for s in on_pg)
                pp95 = percentile([s.seconds for s in on_pg], 95)
                pcpu = median_cpu(on_pg)
                status = on_pg[-1].status
                # PostgreSQL over SQLite: above 1, the schema is the slower; a page that does
                # not read PostgreSQL yet (501) has no ratio.
                ratio = pmed / med if status == 200 == ex[-1].status else None
                row.update(
                    postgres_median_ms=round(pmed * 1000, 1),
                    postgres_p95_ms=round(pp95 * 1000, 1),
                    postgres_cpu_ms=round(pcpu * 1000, 1) if pcpu is not None else None,
                    postgres_status=status,
                    postgres_ratio=round(ratio, 3) if ratio else None,
                )
                line += (
                    f" {pmed * 1000:13.1f} {pp95 * 1000:7.1f} {ms(pcpu):>7}"
                    f" {f'{ratio:.2f}' if ratio else '-':>6}"
                    + ("" if status == 200 else f" (postgres answered {status})")
                )
            on_pg_base = page.samples["pg-baseline"]
            if on_pg and on_pg_base:
                qmed = statistics.median(s.seconds for s in on_pg_base)
                qcpu = median_cpu(on_pg_base)
                # This checkout over the baseline, both reading the schema.
                row.update(
                    pg_baseline_median_ms=round(qmed * 1000, 1),
                    pg_baseline_cpu_ms=round(qcpu * 1000, 1) if qcpu is not None else None,
                    pg_baseline_ratio=round(pmed / qmed, 3),
                )
                line += f" [pg baseline {qmed * 1000:.1f} ms, ratio {pmed / qmed:.2f}]"
            base = page.samples["baseline"]
            if base:
                bmed = statistics.median(s.seconds for s in base)
                bp95 = percentile([s.seconds for s in base], 95)
                bcpu = median_cpu(base)
                # Explorer over baseline: above 1, this checkout is the slower.
                cpu_ratio = cpu / bcpu if cpu and bcpu else None
                row.update(
                    baseline=args.baseline,
                    baseline_median_ms=round(bmed * 1000, 1),
                    baseline_p95_ms=round(bp95 * 1000, 1),
                    baseline_cpu_ms=round(bcpu * 1000, 1) if bcpu is not None else None,
                    baseline_status=base[-1].status,
                    baseline_ratio=round(med / bmed, 3),
                    baseline_cpu_ratio=round(cpu_ratio, 3) if cpu_ratio else None,
                )
                line += (
                    f" {bmed * 1000:13.1f} {bp95 * 1000:7.1f} {ms(bcpu):>7} {med / bmed:6.2f}"
                    f" {f'{cpu_ratio:.2f}' if cpu_ratio else '-':>9}"
                )
            results["pages"].append(row)
            log(line)

        if not args.no_pages and named(SCORE_PAGE, args.pages):
            times = score_presses(explorer, targets["queue_session"], max(args.runs, 11))
            med, p95 = statistics.median(times), percentile(times, 95)
            results["pages"].append({"page": SCORE_PAGE, "median_ms": round(med * 1000, 1)})
            log(f"{SCORE_PAGE:52} {med * 1000:9.1f} {p95 * 1000:7.1f}")

        if not args.no_exports:
            exports = [
                (
                    "sessions CSV (all)",
                    "/sessions/?_export=csv",
                    "/state/sessions.csv?_stream=on&_size=max",
                ),
                (
                    # NOTE: no index on messages.timestamp: after the ~100k rows the last
                    # chunk query scans the rest of the table (~0.4 s on the 1M store).
                    "messages CSV (first ~100k)",
                    f"/messages/?_export=csv&sort=id&date_to={targets['first_100k_until']}",
                    "/state/messages.csv?_stream=on&_size=max&_sort=id"
                    f"&timestamp__lt={targets['first_100k_end']}",
                ),
                (
                    "messages CSV (all)",
                    "/messages/?_export=csv&sort=id",
                    "/state/messages.csv?_stream=on&_size=max",
                ),
                ("dataset (discord sessions)", "/sessions/?_export=dataset&source=discord", None),
            ]
            exports = [e for e in exports if named(e[0], args.exports)]
            log(
                f"\n{'export':32} {'server':10} {'s':>7} {'MB':>8} {'MB/s':>7} {'MB/cpu-s':>9} "
                f"{'RSS start MB':>13} {'RSS peak MB':>12} {'load':>5}"
            )
            for name, ex_path, ds_path in exports:
                for _run in range(args.export_runs):
                    for sname, server in servers:
                        # Datasette answers its own URLs; every explorer, the explorer's.
                        path = ds_path if sname == "datasette" else on(sname, ex_path)
                        if path is None:
                            continue
                        load = os.getloadavg()[0]
                        pids = server.worker_pids()
                        cpu_before = cpu_seconds(pids)
                        sample, start, peak = fetch_with_rss(server, path)
                        cpu = cpu_seconds(pids) - cpu_before
                        mb = sample.size / 1e6
                        row = {
                            "export": name,
                            "server": sname,
                            "url": path,
                            "status": sample.status,
                            "seconds": round(sample.seconds, 2),
                            "mb": round(mb, 1),
                            "mb_per_s": round(mb / sample.seconds, 1),
                            "server_cpu_s": round(cpu, 2),
                            "mb_per_cpu_s": round(mb / cpu, 1) if cpu else None,
                            "rss_start_mb": round(start / 1024, 1),
                            "rss_peak_mb": round(peak / 1024, 1),
                            "load_average": round(load, 2),
                        }
                        results["exports"].append(row)
                        per_cpu = f"{mb / cpu:9.1f}" if cpu else f"{'-':>9}"
                        log(
                            f"{name:32} {sname:10} {sample.seconds:7.1f} {mb:8.1f} "
                            f"{mb / sample.seconds:7.1f} {per_cpu} "
                            f"{start / 1024:13.1f} {peak / 1024:12.1f} {load:5.1f}"
                            + ("" if sample.status == 200 else f" status {sample.status}")
                        )
    finally:
        explorer.stop()
        if datasette:
            datasette.stop()
        if shared:
            shared.stop()
        for server in app_servers:
            server.stop()
        if baseline:
            baseline.stop()
        if pg_baseline:
            pg_baseline.stop()
        if pgx:
            pgx.stop()
        if pg_server:
            stop_postgres(pg_server)
        if baseline_root is not None:
            drop_baseline_tree(baseline_root)
        shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
        log(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
