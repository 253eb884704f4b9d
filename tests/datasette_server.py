"""The real Datasette 0.65, started on a copy of a fixture store, for differential tests.

Datasette cannot open a file whose full-text table needs a tokenizer it lacks (the current
layout's ``messages_fts_cjk``: "no such tokenizer"), so it is served a copy without that one
table (same rows).  It is told, through its metadata, that ``messages_fts`` indexes
``messages`` (``fts_table``/``fts_pk``): without that, Datasette 0.65 does not recognise
Hermes's index and ignores ``_search`` on ``/state/messages``.

Started as a subprocess on a free 127.0.0.1 port, waited for at most :data:`START_SECONDS`.
"""

from __future__ import annotations

import json
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

START_SECONDS = 30.0
METADATA = {
    "databases": {"state": {"tables": {"messages": {"fts_table": "messages_fts", "fts_pk": "id"}}}}
}


def available() -> bool:
    try:
        import datasette  # noqa: F401
    except ImportError:
        return False
    return True


def datasette_version() -> str:
    import datasette.version

    return datasette.version.__version__


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def prepared_copy(store: Path, directory: Path) -> Path:
    """``directory/state.db``: the store without ``messages_fts_cjk`` (Datasette names the
    database after the file, and the old URLs say ``state``)."""
    directory.mkdir(parents=True, exist_ok=True)
    copy = directory / "state.db"
    shutil.copyfile(store, copy)
    conn = sqlite3.connect(copy)
    try:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'messages_fts_cjk'").fetchone():
            (cookie,) = conn.execute("PRAGMA schema_version").fetchone()
            conn.execute("PRAGMA writable_schema = ON")
            conn.execute("DELETE FROM sqlite_master WHERE name = 'messages_fts_cjk'")
            conn.execute(f"PRAGMA schema_version = {int(cookie) + 1}")
            conn.execute("PRAGMA writable_schema = OFF")
            conn.commit()
    finally:
        conn.close()
    return copy


class DatasetteServer:
    def __init__(self, store: Path, workdir: Path):
        self.copy = prepared_copy(store, workdir / "datasette")
        self.metadata = workdir / "datasette-metadata.json"
        self.metadata.write_text(json.dumps(METADATA))
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        exe = Path(sys.executable).with_name("datasette")
        command = [str(exe)] if exe.exists() else [sys.executable, "-m", "datasette"]
        self.proc = subprocess.Popen(
            [
                *command,
                "serve",
                str(self.copy),
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "-m",
                str(self.metadata),
                "--setting",
                "sql_time_limit_ms",
                "10000",
                "--setting",
                "facet_time_limit_ms",
                "5000",
                "--setting",
                "suggest_facets",
                "off",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("Datasette exited at start-up")
            try:
                with urllib.request.urlopen(self.base + "/-/versions.json", timeout=2):
                    return
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("Datasette did not start in time")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None

    def get(self, url: str) -> tuple[int, str, bytes, dict]:
        """Status, content type, body and headers of ``url`` (a path with query)."""
        request = urllib.request.Request(self.base + url)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return (
                    response.status,
                    response.headers.get("Content-Type", ""),
                    response.read(),
                    dict(response.headers),
                )
        except urllib.error.HTTPError as error:
            return (
                error.code,
                error.headers.get("Content-Type", ""),
                error.read(),
                dict(error.headers),
            )
