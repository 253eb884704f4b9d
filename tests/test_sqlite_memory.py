"""Web workers run SQLite without its memory statistics (``hermes_explorer/sqlite_memory.py``),
turned off by gunicorn's ``post_fork`` hook before the worker loads the application; the SQL
console's child process keeps them (its heap limit needs them)."""

from __future__ import annotations

import runpy
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent

# Memory SQLite reports in use after filling a table, in a new process.
PROBE = """
import ctypes, ctypes.util, sqlite3, sys
sys.path.insert(0, {root!r})
if {turn_off}:
    from hermes_explorer import sqlite_memory
    print("done" if sqlite_memory.turn_off() else "not done")
conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE t (x)")
conn.executemany("INSERT INTO t VALUES (?)", [("x" * 100,)] * 10_000)
assert conn.execute("SELECT COUNT(*), SUM(length(x)) FROM t").fetchone() == (10_000, 1_000_000)
lib = ctypes.CDLL(ctypes.util.find_library("sqlite3"))
lib.sqlite3_memory_used.restype = ctypes.c_int64
print(lib.sqlite3_memory_used())
"""


def _probe(turn_off: bool) -> list[str]:
    code = PROBE.format(root=str(ROOT), turn_off=turn_off)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_turned_off_sqlite_counts_no_memory_and_still_works():
    assert int(_probe(False)[-1]) > 1_000_000  # the default: every allocation counted
    done, used = _probe(True)
    assert done == "done"
    assert int(used) == 0


def test_gunicorn_turns_it_off_in_each_new_worker_unless_the_app_is_preloaded(monkeypatch):
    from hermes_explorer import sqlite_memory

    calls = []
    monkeypatch.setattr(sqlite_memory, "turn_off", lambda: calls.append(1) or True)
    hooks = runpy.run_path(str(ROOT / "deploy" / "gunicorn.conf.py"))
    hooks["post_fork"](SimpleNamespace(cfg=SimpleNamespace(preload_app=False)), None)
    assert calls == [1]
    hooks["post_fork"](SimpleNamespace(cfg=SimpleNamespace(preload_app=True)), None)
    assert calls == [1]


def test_the_console_child_keeps_the_statistics_its_heap_limit_needs():
    child = (ROOT / "console_app" / "child.py").read_text()
    readonly = (ROOT / "console_app" / "readonly.py").read_text()
    assert "sqlite_memory" not in child and "sqlite_memory" not in readonly
    assert "hard_heap_limit" in readonly
