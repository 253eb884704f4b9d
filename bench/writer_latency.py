"""Hermes's commit latency on a rollback-journal (DELETE) state.db while the explorer reads it.

    .venv/bin/python bench/writer_latency.py                       # copy, baseline, load
    .venv/bin/python bench/writer_latency.py --load-seconds 90 --json out.json
    .venv/bin/python bench/writer_latency.py --help

On a SQLite that Hermes does not trust with WAL, it writes in rollback-journal mode, where a
reader's SHARED lock keeps the writer from taking the EXCLUSIVE lock its commit needs: every
explorer statement that runs while Hermes commits delays the commit by what is left of it.

This tool makes (or reuses) a DELETE-mode copy of a store (``--source`` copied to ``--store``
with ``PRAGMA journal_mode=DELETE`` on the copy; the source is only read), starts the explorer
under gunicorn as ``bench/benchmark.py`` does (127.0.0.1 only), and runs a Hermes-like writer
in its own process: every ``--interval`` seconds, ``BEGIN IMMEDIATE``, one message inserted
(the full-text triggers fire) and the session's counters updated, ``COMMIT``; a busy timeout
of ``--busy-ms`` and up to ``--retries`` retries after a short random pause, as Hermes does.
Each transaction's latency (first ``BEGIN`` to finished ``COMMIT``, retries included), the
part of it spent waiting for locks (the busy handler's sleeps), its retries and failures are
recorded: on a busy machine the rest (CPU, disk syncs) varies too, and is not the readers'
doing.  The explorer logs every statement that held the lock
longer than ``--log-holds-ms`` (``HERMES_LOG_LOCK_HOLDS_MS``); the longest are listed.

First the writer runs alone (the baseline), then while the explorer's heaviest reads run
concurrently and repeatedly: insights over all time, a full CSV export of ``/messages/``,
full-text searches of common words (relevance order and newest first, words and substring),
and, with ``--readers …,console``, a heavy SQL console query.  It prints p50/p99/max commit latency,
retries and failures of both phases, and what the readers did.

With ``--postgres``, the same on PostgreSQL: the source loaded once into a schema of a server
kept in ``var/bench/pg`` (as ``bench/benchmark.py --postgres`` does; the primary), a streaming hot
standby of it (``pg_basebackup -R``, thrown away after), and a Hermes-shaped writer on the
primary: one transaction per turn, a message inserted and the session's counters updated, as
Hermes writes there.  The explorer reads the standby (profile ``pg``) with what reads a schema
today: session list walks (following "next" page after page, several sorts), the full messages
CSV export, and the /state/ API sorted by a column, in JSON and CSV.  The writer deletes its
session and messages at the end, so the kept schema holds the source's rows again.  A standby
cannot hold up the primary's commits (no lock is shared), so what the readers add here is the
CPU they take on this one machine: ``--readers-nice 19`` runs the standby and the explorer at
low priority, ``--separate-cores`` gives the primary and its writer one core and the standby,
the explorer and the readers the others (two machines, as far as one can share out CPUs), and
``--read-profile default`` sends the same reads to the source file instead (a control: the same
CPU, no standby).

    .venv/bin/python bench/writer_latency.py --postgres --separate-cores

This is a measurement, not a test: it prints numbers and exits 0.  Every phase is bounded in
time; the writer appends ``interval``-spaced rows to the copy (never to the source).
"""

from __future__ import annotations

import argparse
import contextlib
import html
import http.client
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from benchmark import (  # noqa: E402
    PG_PROFILE,
    PG_READER,
    PG_SCHEMA,
    Explorer,
    bench_postgres,
    free_port,
    log,
    percentile,
    stop_postgres,
)

PY = sys.executable
DEFAULT_SOURCE = HERE.parent / "var" / "bench" / "state.db"


# The copy ---------------------------------------------------------------------------------------
def ensure_delete_copy(source: Path, store: Path, fresh: bool) -> None:
    """``store`` as a DELETE-journal copy of ``source`` (made once, reused after)."""
    if store.exists() and not fresh:
        mode = _journal_mode(store)
        if mode != "delete":
            raise SystemExit(f"{store} exists but is in {mode} mode: use --fresh")
        log(f"reusing {store} ({store.stat().st_size / 1e9:.2f} GB, journal_mode=delete)")
        return
    if not source.exists():
        raise SystemExit(f"no source store at {source}")
    tmp = store.with_name(store.name + ".tmp")
    log(f"copying {source} to {store} …")
    started = time.monotonic()
    # Read through SQLite so that a WAL the source may have is included; the copy is then
    # switched to the rollback journal.
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    dst = sqlite3.connect(tmp)
    try:
        src.backup(dst, pages=65_536)
    finally:
        src.close()
    dst.execute("PRAGMA journal_mode=DELETE")
    dst.close()
    os.replace(tmp, store)
    log(f"copied in {time.monotonic() - started:.0f}s; journal_mode={_journal_mode(store)}")


def _journal_mode(path: Path) -> str:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        conn.execute("PRAGMA schema_version").fetchone()
        return conn.execute("PRAGMA journal_mode").fetchone()[0]
    finally:
        conn.close()


# The writer (runs in its own process: ``writer_latency.py --writer-process``) -----------------
WORDS = (
    "the file test config error python run build deploy check update value result agent "
    "session message tool output function return data list request response cache"
).split()


# SQLite's own busy handler sleeps these milliseconds between tries, then 100 ms each.
BUSY_DELAYS_MS = (1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100)


def writer_process(args: argparse.Namespace) -> None:
    """Commit every ``interval`` s until SIGTERM or ``--seconds``; write samples as JSON.

    The busy timeout is SQLite's own handler re-done in Python (the same sleeps, the same
    limit), so that the time spent waiting for readers' locks can be told apart from the
    time the commit itself took."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    conn = sqlite3.connect(args.store, timeout=0, isolation_level=None)
    rng = random.Random(1)
    session = f"bench-writer-{int(time.time())}-{os.getpid()}"
    waited = [0.0]

    def patiently(sql: str, params=()) -> None:
        """``sql``, retried on SQLITE_BUSY as SQLite's busy handler would, up to the timeout."""
        tries = 0
        while True:
            try:
                conn.execute(sql, params)
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                done = sum(BUSY_DELAYS_MS[: min(tries, len(BUSY_DELAYS_MS))]) + 100 * max(
                    0, tries - len(BUSY_DELAYS_MS)
                )
                delay = BUSY_DELAYS_MS[tries] if tries < len(BUSY_DELAYS_MS) else 100
                if done + delay > args.busy_ms:
                    delay = args.busy_ms - done
                    if delay <= 0:
                        raise
                began = time.monotonic()
                time.sleep(delay / 1000)
                waited[0] += time.monotonic() - began
                tries += 1

    def transaction(statements) -> tuple[bool, int, str]:
        """Run ``statements`` in BEGIN IMMEDIATE … COMMIT with Hermes's retries."""
        error = ""
        waited[0] = 0.0
        for attempt in range(args.retries + 1):
            try:
                patiently("BEGIN IMMEDIATE")
                for sql, params in statements:
                    patiently(sql, params)
                patiently("COMMIT")
                return True, attempt, error
            except sqlite3.OperationalError as exc:
                error = str(exc)
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                if "locked" not in error and "busy" not in error:
                    return False, attempt, error
                time.sleep(rng.uniform(0.02, 0.15))
        return False, args.retries, error

    now = time.time()
    ok, _, error = transaction(
        [
            (
                "INSERT INTO sessions (id, source, started_at, message_count, input_tokens,"
                " output_tokens) VALUES (?, 'cli', ?, 0, 0, 0)",
                (session, now),
            )
        ]
    )
    if not ok:
        raise SystemExit(f"the writer could not create its session: {error}")
    samples = []
    started = time.monotonic()
    tick = 0
    while not stop.is_set() and time.monotonic() - started < args.seconds:
        due = started + tick * args.interval
        pause = due - time.monotonic()
        if pause > 0:
            stop.wait(pause)
            if stop.is_set():
                break
        tick += 1
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 120)))
        tokens = len(text) // 4
        began = time.monotonic()
        ok, retries, error = transaction(
            [
                (
                    "INSERT INTO messages (session_id, role, content, timestamp, token_count)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (session, rng.choice(("user", "assistant")), text, time.time(), tokens),
                ),
                (
                    "UPDATE sessions SET message_count = message_count + 1,"
                    " input_tokens = input_tokens + ?, output_tokens = output_tokens + ?"
                    " WHERE id = ?",
                    (tokens, tokens // 2, session),
                ),
            ]
        )
        samples.append(
            {
                "t": round(began - started, 3),
                "epoch": round(time.time() - (time.monotonic() - began), 3),
                "ms": round((time.monotonic() - began) * 1000, 2),
                "waited_ms": round(waited[0] * 1000, 2),
                "retries": retries,
                "ok": ok,
                "error": error,
            }
        )
    conn.close()
    Path(args.out).write_text(json.dumps(samples))


def pg_writer_process(args: argparse.Namespace) -> None:
    """As :func:`writer_process`, on the PostgreSQL primary at ``--dsn``: one transaction per
    turn (its own session's message inserted, the session's counters updated), committed
    synchronously; its rows are deleted at the end."""
    import psycopg  # noqa: PLC0415 (only for --postgres)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    rng = random.Random(1)
    session = f"bench-writer-{int(time.time())}-{os.getpid()}"
    conn = psycopg.connect(args.dsn, autocommit=True, options=f"-c search_path={PG_SCHEMA}")
    conn.execute("SET synchronous_commit = on")
    with conn.transaction():
        conn.execute(
            "INSERT INTO sessions (id, source, started_at, message_count, input_tokens,"
            " output_tokens) VALUES (%s, 'cli', %s, 0, 0, 0)",
            (session, time.time()),
        )
    samples = []
    started = time.monotonic()
    tick = 0
    try:
        while not stop.is_set() and time.monotonic() - started < args.seconds:
            due = started + tick * args.interval
            if (pause := due - time.monotonic()) > 0 and stop.wait(pause):
                break
            tick += 1
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 120)))
            tokens = len(text) // 4
            began = time.monotonic()
            ok, error = True, ""
            try:
                with conn.transaction():
                    conn.execute(
                        "INSERT INTO messages (session_id, role, content, timestamp,"
                        " token_count) VALUES (%s, %s, %s, %s, %s)",
                        (session, rng.choice(("user", "assistant")), text, time.time(), tokens),
                    )
                    conn.execute(
                        "UPDATE sessions SET message_count = message_count + 1,"
                        " input_tokens = input_tokens + %s, output_tokens = output_tokens + %s"
                        " WHERE id = %s",
                        (tokens, tokens // 2, session),
                    )
            except psycopg.Error as exc:
                ok, error = False, str(exc)
            samples.append(
                {
                    "t": round(began - started, 3),
                    "epoch": round(time.time() - (time.monotonic() - began), 3),
                    "ms": round((time.monotonic() - began) * 1000, 2),
                    "waited_ms": 0.0,
                    "retries": 0,
                    "ok": ok,
                    "error": error,
                }
            )
    finally:
        with conn.transaction():
            conn.execute("DELETE FROM messages WHERE session_id = %s", (session,))
            conn.execute("DELETE FROM sessions WHERE id = %s", (session,))
        conn.close()
        Path(args.out).write_text(json.dumps(samples))


@dataclass
class WriterRun:
    out: Path
    proc: subprocess.Popen

    @classmethod
    def start(cls, store: Path, args, seconds: float, workdir: Path, label: str) -> WriterRun:
        out = workdir / f"writer-{label}.json"
        proc = subprocess.Popen(
            [
                PY,
                __file__,
                "--writer-process",
                *(["--dsn", args.dsn] if args.dsn else []),
                "--store",
                str(store),
                "--out",
                str(out),
                "--seconds",
                str(seconds),
                "--interval",
                str(args.interval),
                "--busy-ms",
                str(args.busy_ms),
                "--retries",
                str(args.retries),
            ]
        )
        if getattr(args, "writer_cpus", None):
            os.sched_setaffinity(proc.pid, args.writer_cpus)
        return cls(out, proc)

    def finish(self, timeout: float = 30) -> list[dict]:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return json.loads(self.out.read_text()) if self.out.exists() else []


def summary(samples: list[dict]) -> dict:
    done = [s for s in samples if s["ok"]]
    ms = [s["ms"] for s in done] or [0.0]
    waits = [s["waited_ms"] for s in done] or [0.0]
    return {
        "commits": len(samples),
        "p50_ms": round(percentile(ms, 50), 1),
        "p99_ms": round(percentile(ms, 99), 1),
        "max_ms": round(max(ms), 1),
        "lock_wait_p99_ms": round(percentile(waits, 99), 1),
        "lock_wait_max_ms": round(max(waits), 1),
        "over_100_ms": sum(1 for v in ms if v > 100),
        "over_250_ms": sum(1 for v in ms if v > 250),
        "retried": sum(1 for s in samples if s["retries"]),
        "failed": sum(1 for s in samples if not s["ok"]),
        "locked_errors": sum(1 for s in samples if "locked" in s["error"] or "busy" in s["error"]),
    }


# The readers ------------------------------------------------------------------------------------
@dataclass
class Reader:
    name: str
    paths: list[str]
    requests: list[tuple[str, int, float, int]] = field(default_factory=list)

    def run(self, server: Explorer, until: float) -> None:
        i = 0
        while time.monotonic() < until:
            path = self.paths[i % len(self.paths)]
            i += 1
            started = time.monotonic()
            status, size = get(server, path, until)
            self.requests.append((path, status, time.monotonic() - started, size))


class Walker(Reader):
    """Follows each list's "next" link up to ``pages`` pages, then starts the next list."""

    pages = 30
    NEXT = re.compile(r'<a rel="next" href="([^"]+)"')

    def run(self, server: Explorer, until: float) -> None:
        i = 0
        while time.monotonic() < until:
            first = path = self.paths[i % len(self.paths)]
            i += 1
            for _ in range(self.pages):
                started = time.monotonic()
                status, body = get_page(server, path)
                self.requests.append((path, status, time.monotonic() - started, len(body)))
                found = self.NEXT.search(body)
                if time.monotonic() > until or not found:
                    break
                path = first.split("?")[0] + html.unescape(found.group(1))


def get_page(server: Explorer, path: str) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=300)
    try:
        conn.request("GET", path, headers={"Cookie": server.cookie})
        response = conn.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    except OSError:
        return 0, ""
    finally:
        conn.close()


def get(server: Explorer, path: str, until: float) -> tuple[int, int]:
    """GET ``path``; a download still running at ``until`` is cut (its status is kept)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=300)
    try:
        conn.request("GET", path, headers={"Cookie": server.cookie})
        response = conn.getresponse()
        size = 0
        while chunk := response.read(1 << 16):
            size += len(chunk)
            if time.monotonic() > until:
                break
        return response.status, size
    except http.client.IncompleteRead:
        # The server stopped a streamed download half-way (its log says why).
        return -1, size
    except (OSError, http.client.HTTPException):
        return 0, 0
    finally:
        conn.close()


def readers(names: list[str], profile: str = PG_PROFILE) -> list[Reader]:
    """The readers asked for: ``insights``, ``export``, ``search``, ``console``."""
    q = urllib.parse.quote
    console_sql = "SELECT role, count(*), sum(length(content)) FROM messages GROUP BY role"
    known = {
        "insights": Reader("insights, all time", ["/insights/?days=all"]),
        "export": Reader("messages CSV export (all)", ["/messages/?_export=csv"]),
        "search": Reader(
            "search, common words",
            [
                "/search/?q=the",
                "/search/?q=file",
                "/search/?q=test",
                "/search/?q=python&page=2",
                "/search/?q=" + q("the file"),
                "/search/?q=the&sort=newest",
                "/search/?q=error&mode=substring",
                "/search/?q=config&role=tool&sort=newest",
            ],
        ),
        "console": Reader("SQL console, full scan", ["/sql/?sql=" + q(console_sql)]),
    }
    pg = f"/p/{profile}"
    # What reads a PostgreSQL schema today (the other pages answer 501 there).
    known |= {
        "pg-lists": Walker(
            "session and message list walks",
            [
                f"{pg}/sessions/",
                f"{pg}/sessions/?sort=source",
                f"{pg}/sessions/?sort=-message_count",
                f"{pg}/sessions/?source=telegram&sort=-started_at",
                f"{pg}/messages/?role=user",
            ],
        ),
        "pg-export": Reader("messages CSV export (all)", [f"{pg}/messages/?_export=csv"]),
        "pg-state": Reader(
            "/state/ API, sorted",
            [
                f"{pg}/state/sessions.json?_sort=source&_size=max",
                f"{pg}/state/messages.json?_sort_desc=timestamp&_size=max",
                # Not streamed: the stream's later pages do not read a schema yet.
                f"{pg}/state/sessions.csv?_size=max&_sort_desc=message_count",
            ],
        ),
    }
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown readers {unknown}: pick from {', '.join(known)}")
    return [known[n] for n in names]


def report_readers(group: list[Reader], results: dict) -> None:
    log(f"\n{'reader':32} {'requests':>8} {'statuses':>18} {'median s':>9} {'max s':>7}")
    results["readers"] = []
    for r in group:
        statuses: dict[int, int] = {}
        for _p, status, _s, _b in r.requests:
            statuses[status] = statuses.get(status, 0) + 1
        secs = [s for _p, _st, s, _b in r.requests] or [0.0]
        text = ",".join(f"{k}x{v}" for k, v in sorted(statuses.items()))
        log(
            f"{r.name:32} {len(r.requests):8} {text:>18} "
            f"{percentile(secs, 50):9.2f} {max(secs):7.2f}"
        )
        results["readers"].append(
            {
                "reader": r.name,
                "requests": [
                    {"path": p, "status": st, "seconds": round(s, 3), "bytes": b}
                    for p, st, s, b in r.requests
                ],
            }
        )


def report_phase(name: str, samples: list[dict]) -> dict:
    s = summary(samples)
    log(
        f"{name:10} {s['commits']:7} {s['p50_ms']:8.1f} {s['p99_ms']:8.1f} {s['max_ms']:8.1f}"
        f" {s['lock_wait_p99_ms']:10.1f} {s['lock_wait_max_ms']:10.1f}"
        f" {s['over_250_ms']:6} {s['retried']:7} {s['failed']:6} {s['locked_errors']:7}"
    )
    return s


HOLD_LINE = re.compile(r"held the state\.db for (\d+) ms from ([\d.]+): (.*)")


def logged_holds(server_log: Path) -> list[tuple[int, float, str]]:
    """(ms, start epoch, statement) of each hold the explorer logged."""
    try:
        text = server_log.read_text(errors="replace")
    except OSError:
        return []
    found = []
    for line in text.splitlines():
        match = HOLD_LINE.search(line)
        if match:
            sql = " ".join(match.group(3).split())[:100]
            found.append((int(match.group(1)), float(match.group(2)), sql))
    return found


def report_holds(found: list[tuple[int, float, str]], worst: list[dict], over_ms: float) -> dict:
    """The longest holds, a count per kind of statement, and the holds that overlapped each of
    the slowest commits."""
    log(f"\nexplorer statements that held the lock over {over_ms:g} ms: {len(found)}")
    for ms, _start, sql in sorted(found, reverse=True)[:8]:
        log(f"  {ms:6} ms  {sql}")
    kinds: dict[str, int] = {}
    for _ms, _start, sql in found:
        kinds[sql[:60]] = kinds.get(sql[:60], 0) + 1
    for kind, n in sorted(kinds.items(), key=lambda kv: -kv[1])[:8]:
        log(f"  {n:6} x   {kind}…")
    overlaps = []
    for sample in worst:
        begin, end = sample["epoch"], sample["epoch"] + sample["ms"] / 1000
        during = [
            (ms, sql) for ms, start, sql in found if start < end and start + ms / 1000 > begin
        ]
        overlaps.append({"commit": sample, "holds": during})
        log(
            f"  commit at +{sample['t']:.1f}s ({sample['ms']:.0f} ms, waited"
            f" {sample['waited_ms']:.0f} ms) overlapped: "
            + (
                "; ".join(f"{ms} ms {sql[:50]}" for ms, sql in sorted(during, reverse=True)[:3])
                or "no logged statement"
            )
        )
    return {
        "count": len(found),
        "longest": sorted(found, reverse=True)[:20],
        "kinds": kinds,
        "slowest_commits": overlaps,
    }


@contextlib.contextmanager
def stderr_to(path: Path):
    """Child processes started inside the block write their stderr to ``path``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    saved = os.dup(2)
    os.dup2(fd, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)


def postmaster(server) -> int:
    """The pid of ``server``'s postmaster, the parent of its processes."""
    return int((server.data / "postmaster.pid").read_text().split()[0])


def pin_tree(root: int, cpus: set[int]) -> None:
    """Process ``root`` and every process under it on ``cpus`` (PostgreSQL's children each
    lead a process group of their own); the ones they start later inherit it."""
    parents = {}
    for proc in Path("/proc").iterdir():
        with contextlib.suppress(OSError, ValueError, IndexError):
            if proc.name.isdigit():
                parents[int(proc.name)] = int(
                    (proc / "stat").read_text().rsplit(")", 1)[1].split()[1]
                )
    for pid in parents:
        up = pid
        while up not in (root, 0, 1) and up in parents:
            up = parents[up]
        if up == root:
            with contextlib.suppress(OSError):
                os.sched_setaffinity(pid, cpus)


def alone_then_loaded(store, args, workdir, explorer, group, results: dict, read: str) -> list:
    """The writer alone for ``--baseline-seconds``, then while ``group`` reads (profile
    ``read``) for ``--load-seconds``: both phases reported into ``results``, the added p99
    too. Returns the loaded phase's samples."""
    log(f"baseline: the writer alone for {args.baseline_seconds:g}s …")
    alone = WriterRun.start(store, args, args.baseline_seconds, workdir, "alone")
    alone.proc.wait(args.baseline_seconds + 60)
    baseline = alone.finish()
    log(f"load: the writer while {len(group)} readers{read} run for {args.load_seconds:g}s …")
    loaded = WriterRun.start(store, args, args.load_seconds + 600, workdir, "load")
    time.sleep(1.0)  # let the writer open and create its session
    until = time.monotonic() + args.load_seconds
    threads = [threading.Thread(target=r.run, args=(explorer, until), daemon=True) for r in group]
    for t in threads:
        t.start()
    for t in threads:
        t.join(args.load_seconds + 300)
    under_load = loaded.finish()
    log(
        f"\n{'phase':10} {'commits':>7} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}"
        f" {'wait p99':>10} {'wait max':>10}"
        f" {'>250ms':>6} {'retried':>7} {'failed':>6} {'locked':>7}"
    )
    results["alone"] = report_phase("alone", baseline)
    results["load"] = report_phase("load", under_load)
    added = results["load"]["p99_ms"] - results["alone"]["p99_ms"]
    log(f"p99 added by the readers{read}: {added:+.1f} ms")
    results["p99_added_ms"] = round(added, 1)
    report_readers(group, results)
    return under_load


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="store to copy")
    parser.add_argument(
        "--store", type=Path, default=None, help="the DELETE-mode copy (default: beside source)"
    )
    parser.add_argument("--fresh", action="store_true", help="copy again even if it exists")
    parser.add_argument("--baseline-seconds", type=float, default=20)
    parser.add_argument("--load-seconds", type=float, default=60)
    parser.add_argument("--interval", type=float, default=0.1, help="seconds between commits")
    parser.add_argument("--busy-ms", type=int, default=1000, help="the writer's busy timeout")
    parser.add_argument("--retries", type=int, default=5, help="the writer's retries")
    parser.add_argument(
        "--readers",
        default=parser_default_readers(),
        help="the explorer's reads under load, of insights,export,search,console (with "
        "--postgres: pg-lists,pg-export,pg-state)",
    )
    parser.add_argument("--server-log", type=Path, help="keep the explorer's log here")
    parser.add_argument(
        "--log-holds-ms",
        type=float,
        default=60,
        help="list the explorer's statements that held the lock longer than this",
    )
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="write to a PostgreSQL primary (the source loaded once into var/bench/pg) while "
        "the explorer reads a hot standby of it (readers pg-lists,pg-export,pg-state)",
    )
    parser.add_argument(
        "--readers-nice",
        type=int,
        default=0,
        help="with --postgres: run the standby and the explorer at this nice value (the "
        "writer and the primary keep theirs), as if the standby had a machine of its own",
    )
    parser.add_argument(
        "--separate-cores",
        action="store_true",
        help="with --postgres: the primary and the writer on one core, the standby, the "
        "explorer and the readers on the others, as if each side had a machine of its own",
    )
    parser.add_argument(
        "--read-profile",
        default=PG_PROFILE,
        help=f"with --postgres: the profile the readers read, {PG_PROFILE} (the standby) or "
        "default (the source file: the same reads without the standby, a control of what "
        "sharing the machine's CPU alone adds)",
    )
    # Internal: the writer's own process.
    parser.add_argument("--writer-process", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--seconds", type=float, default=60, help=argparse.SUPPRESS)
    parser.add_argument("--dsn", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.writer_process:
        (pg_writer_process if args.dsn else writer_process)(args)
        return
    if args.postgres:
        postgres_main(args)
        return

    store = args.store or args.source.with_name(args.source.stem + "-delete.db")
    ensure_delete_copy(args.source, store, args.fresh)
    workdir = Path(tempfile.mkdtemp(prefix="hermes-writer-bench-"))
    explorer = Explorer(store, workdir, free_port())
    # The explorer logs each statement that held the lock longer than this.
    explorer.env["HERMES_LOG_LOCK_HOLDS_MS"] = str(args.log_holds_ms)
    server_log = args.server_log or workdir / "server.log"
    results: dict = {"store": str(store), "args": {k: str(v) for k, v in vars(args).items()}}
    try:
        with stderr_to(server_log):
            explorer.start()
        log(
            f"writer: a commit every {args.interval * 1000:.0f} ms, busy timeout "
            f"{args.busy_ms} ms, {args.retries} retries"
        )
        group = readers(args.readers.split(","))
        under_load = alone_then_loaded(store, args, workdir, explorer, group, results, "")
        worst = sorted(under_load, key=lambda s: -s["waited_ms"])[:5]
        results["holds"] = report_holds(logged_holds(server_log), worst, args.log_holds_ms)
    finally:
        explorer.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
        log(f"\nwrote {args.json}")


def postgres_main(args: argparse.Namespace) -> None:
    """The ``--postgres`` run: writer on the primary, explorer on a standby."""
    sys.path.insert(0, str(HERE.parent))
    from tests.servers import PG_USER, PostgresStandby  # noqa: PLC0415 (only for --postgres)

    if args.readers == parser_default_readers():
        args.readers = "pg-lists,pg-export,pg-state"
    workdir = Path(tempfile.mkdtemp(prefix="hermes-writer-bench-"))
    primary, _source = bench_postgres(args.source, HERE.parent / "var" / "bench" / "pg")
    standby = explorer = None
    results: dict = {"store": str(args.source), "args": {k: str(v) for k, v in vars(args).items()}}
    try:
        args.dsn = primary.url
        log("starting a streaming hot standby of it (pg_basebackup) …")
        standby = PostgresStandby(primary).start()
        standby.catch_up(600)
        reader = standby.url.replace(f"//{PG_USER}@", f"//{PG_READER}@", 1)
        explorer = Explorer(args.source, workdir, free_port())
        explorer.env["HERMES_STORES"] = (
            f"default={args.source},{PG_PROFILE}={reader}?schema={PG_SCHEMA}"
        )
        with stderr_to(args.server_log or workdir / "server.log"):
            explorer.start()
        if args.readers_nice:
            # As if the standby and the explorer had a machine of their own: they yield the
            # CPU to the primary and its writer (this machine has few cores to share).
            for group in (explorer.proc.pid, postmaster(standby)):
                os.setpriority(os.PRIO_PGRP, group, args.readers_nice)
            log(f"the standby and the explorer run at nice {args.readers_nice}")
        if args.separate_cores:
            first, *rest = sorted(os.sched_getaffinity(0))
            if not rest:
                raise SystemExit("--separate-cores needs two cores or more")
            args.writer_cpus = {first}
            pin_tree(postmaster(primary), args.writer_cpus)
            for group in (explorer.proc.pid, postmaster(standby)):
                pin_tree(group, set(rest))
            os.sched_setaffinity(0, set(rest))  # the readers' threads, started from here
            log(f"the primary and the writer on core {first}, the standby and readers on {rest}")
        log(f"writer: a transaction every {args.interval * 1000:.0f} ms on the primary")
        group = readers(args.readers.split(","), args.read_profile)
        alone_then_loaded(
            args.source, args, workdir, explorer, group, results, f" of {args.read_profile}"
        )
    finally:
        if explorer:
            explorer.stop()
        if standby:
            standby.stop()
        stop_postgres(primary)
        shutil.rmtree(workdir, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
        log(f"\nwrote {args.json}")


def parser_default_readers() -> str:
    return "insights,export,search"


if __name__ == "__main__":
    main()
