"""What a consistent snapshot of a live state.db costs, and what it costs the writer.

    .venv/bin/python bench/snapshot.py --source var/demo-state.db
    .venv/bin/python bench/snapshot.py --source <store> --json out.json

When Hermes runs on another machine, its state.db can reach the explorer host as a snapshot
made by SQLite (``docs/scaling.md``).  For each journal mode (WAL and the rollback journal,
DELETE) this copies ``--source`` to a work directory (the source is only read), then, while a
Hermes-like writer commits one message every ``--interval`` seconds into the copy, takes a
snapshot three ways: ``VACUUM INTO``, the online backup API in one step, and the backup API in
steps of ``--pages`` pages (as ``sqlite3``'s ``.backup`` does).  It prints each snapshot's time
and size, whether ``PRAGMA quick_check`` passes on it, and the writer's commit latency while it
ran (p50, p99, max): on a rollback-journal file a reader's lock holds every commit back.

This is a measurement, not a test: it prints numbers and exits 0.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import statistics
import tempfile
import threading
import time
from pathlib import Path


class Writer(threading.Thread):
    """Commits one message every ``interval`` seconds, recording each commit's latency."""

    def __init__(self, path: Path, interval: float) -> None:
        super().__init__(daemon=True)
        self.path, self.interval = path, interval
        self.latencies: list[float] = []
        self.failures = 0
        self.stop = threading.Event()

    def run(self) -> None:
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        session = conn.execute(
            "SELECT id FROM sessions ORDER BY started_at DESC LIMIT 1"
        ).fetchone()
        while not self.stop.is_set():
            began = time.monotonic()
            try:
                conn.execute("BEGIN IMMEDIATE")
                conn.execute(
                    "INSERT INTO messages (session_id, role, content, timestamp) "
                    "VALUES (?, 'user', 'snapshot probe', ?)",
                    (session[0], time.time()),
                )
                conn.execute("COMMIT")
                self.latencies.append(time.monotonic() - began)
            except sqlite3.Error:
                self.failures += 1
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
            self.stop.wait(self.interval)
        conn.close()


def vacuum_into(source: Path, target: Path, _pages: int) -> None:
    conn = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=30)
    conn.execute("VACUUM INTO ?", (str(target),))
    conn.close()


class GaveUp(Exception):
    pass


def backup(source: Path, target: Path, pages: int, limit: float = 60.0) -> dict:
    """The backup API; stepwise, it starts over whenever another connection writes the
    source between two steps, so it is given up after ``limit`` seconds."""
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=30)
    dst = sqlite3.connect(target)
    deadline = time.monotonic() + limit
    seen = {"restarts": 0, "last": None}

    def progress(_status, remaining, _total):
        if seen["last"] is not None and remaining > seen["last"]:
            seen["restarts"] += 1
        seen["last"] = remaining
        if time.monotonic() > deadline:
            raise GaveUp

    try:
        src.backup(dst, pages=pages, progress=progress if pages > 0 else None, sleep=0)
        seen["finished"] = True
    except GaveUp:
        seen["finished"] = False
    finally:
        dst.close()
        src.close()
    return seen


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


def measure(path: Path, work: Path, name: str, take, pages: int, interval: float) -> dict:
    target = work / f"snapshot-{name}.db"
    target.unlink(missing_ok=True)
    writer = Writer(path, interval)
    writer.start()
    time.sleep(1)  # the writer's own pace first
    before = len(writer.latencies)
    began = time.monotonic()
    outcome = take(path, target, pages) or {"finished": True}
    seconds = time.monotonic() - began
    # A commit held back by the snapshot finishes after it: wait for it before counting.
    writer.stop.set()
    writer.join()
    during = writer.latencies[before:]
    ok = False
    if outcome["finished"]:
        check = sqlite3.connect(target)
        ok = check.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        check.close()
    row = {
        "method": name,
        "finished": outcome["finished"],
        "restarts": outcome.get("restarts", 0),
        "seconds": round(seconds, 2),
        "size_mb": round(target.stat().st_size / 2**20, 1) if target.exists() else 0,
        "quick_check": "ok" if ok else ("FAILED" if outcome["finished"] else "-"),
        "writer_commits": len(during),
        "writer_failures": writer.failures,
        "commit_p50_ms": round(statistics.median(during) * 1000, 1) if during else None,
        "commit_p99_ms": round(quantile(during, 0.99) * 1000, 1) if during else None,
        "commit_max_ms": round(max(during) * 1000, 1) if during else None,
    }
    target.unlink(missing_ok=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, required=True, help="a state.db (only read)")
    parser.add_argument("--interval", type=float, default=0.05, help="seconds between commits")
    parser.add_argument("--pages", type=int, default=100, help="pages per backup step")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="hermes-snapshot-"))
    results = []
    try:
        for mode in ("wal", "delete"):
            copy = work / f"state-{mode}.db"
            shutil.copyfile(args.source, copy)
            conn = sqlite3.connect(copy)
            conn.execute(f"PRAGMA journal_mode={mode}")
            conn.close()
            for name, take, pages in (
                ("VACUUM INTO", vacuum_into, 0),
                ("backup, one step", backup, -1),
                (f"backup, {args.pages} pages a step", backup, args.pages),
            ):
                row = {
                    "journal_mode": mode,
                    **measure(copy, work, name, take, pages, args.interval),
                }
                results.append(row)
                print(
                    f"{mode:6} {name:26} {row['seconds']:7.2f} s "
                    f"{'' if row['finished'] else 'GAVE UP '}restarts {row['restarts']} "
                    f"{row['size_mb']:8.1f} MB "
                    f"check {row['quick_check']:6} writer: {row['writer_commits']} commits, "
                    f"p50 {row['commit_p50_ms']} ms, p99 {row['commit_p99_ms']} ms, "
                    f"max {row['commit_max_ms']} ms, failures {row['writer_failures']}",
                    flush=True,
                )
            copy.unlink()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
