"""Run one console statement in a fresh child process (``child.py``), under limits it cannot
talk past: SQLite's progress handler cannot stop a statement inside one function call (a
``LIKE`` over a huge ``printf`` string runs for minutes), and rows of ``zeroblob``\\s fill memory.

* **time**: the child stops itself at the deadline when it can; the web process kills it
  :data:`KILL_GRACE` seconds later whatever it is doing;
* **memory**: the child caps its address space (``HERMES_SQL_MEMORY_MB``) and SQLite's limits,
  and measures rows before sending them, so the web process never receives more than the cap;
* **workers**: at most ``HERMES_SQL_CONCURRENCY`` statements run at once on this host; one more
  is told the console is busy rather than queued;
* **downloads**: rows are spooled to a temporary file under the same deadline, so the
  statement, its process and its slot are done before the first byte goes out.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO

from django.conf import settings
from django.db import connections

from hermes_explorer import dialect, host_slots
from hermes_explorer.hermes_db.current import current_alias
from hermes_explorer.hermes_db.deadline import PROGRESS_STEPS

from .readonly import (
    MAX_VALUE_BYTES,
    ConsoleBusy,
    ConsoleError,
    ConsoleTimeout,
    ConsoleTooLarge,
    check_statement,
    leading_keyword,
    translate,
    unavailable,
)

# Seconds between the child's own deadline and the kill.
KILL_GRACE = 0.25
# A single row of a download may not hold more than this: the web process holds about eight
# copies of it while it is decoded, redacted and encoded (the page's cells are cut earlier).
MAX_ROW_BYTES = 4 * 1024 * 1024
# Characters of a text cell kept beyond what the page shows, so redaction sees a secret
# starting there whole (private keys are a few kilobytes).
REDACTION_MARGIN = 16 * 1024
# A frame larger than this is not from our child: stop reading.
MAX_FRAME_BYTES = MAX_VALUE_BYTES + 1024 * 1024
PROJECT_ROOT = Path(__file__).resolve().parent.parent
CHILD = [sys.executable, "-E", "-S", "-m", "console_app.child"]
# On a PostgreSQL profile the child needs the installed packages (its driver).
CHILD_WITH_PACKAGES = [sys.executable, "-E", "-m", "console_app.child"]
_ROWS_FRAME = b'{"rows":'


@dataclass(frozen=True)
class Limits:
    """What one statement may use: ``cell_chars`` for the page (text cut, blobs as sizes),
    None for a download."""

    timeout: float
    max_rows: int
    max_bytes: int
    cell_chars: int | None = None
    max_cells: int | None = None
    # Added to a time-out's message when the limit is the file's rather than the console's.
    timeout_note: str = ""


@dataclass
class Result:
    columns: list[str]
    rows: list
    truncated: bool
    elapsed_ms: float
    row_cap: int

    @property
    def row_count(self) -> int:
        return len(self.rows)


def run(
    sql: str,
    params: dict[str, str],
    *,
    path: str,
    limits: Limits,
    convert: Callable[[list], list] | None = None,
) -> Result:
    """Run ``sql`` for the page: every row (few, cut), each batch through ``convert``."""
    started = time.monotonic()
    rows: list = []
    child = _execute(
        sql, params, path, limits, lambda p: rows.extend((convert or list)(json.loads(p)["rows"]))
    )
    return Result(
        columns=child.column_names,
        rows=rows,
        truncated=bool(child.truncated),
        elapsed_ms=round((time.monotonic() - started) * 1000, 1),
        row_cap=child.row_cap or limits.max_rows,
    )


@dataclass
class Spooled:
    """A finished statement's rows in a temporary file, read back one batch at a time."""

    columns: list[str]
    truncated: str | bool
    file: IO[bytes]

    def batches(self) -> Iterator[list[list]]:
        try:
            while header := self.file.read(4):
                yield json.loads(self.file.read(int.from_bytes(header, "big")))["rows"]
        finally:
            self.file.close()


def spool(sql: str, params: dict[str, str], *, path: str, limits: Limits) -> Spooled:
    """Run ``sql`` for a download: its rows go to a temporary file (see the module docstring)."""
    file = tempfile.TemporaryFile(prefix="hermes-console-")
    try:
        child = _execute(
            sql, params, path, limits, lambda p: file.write(len(p).to_bytes(4, "big") + p)
        )
    except BaseException:
        file.close()
        raise
    file.seek(0)
    return Spooled(columns=child.column_names, truncated=child.truncated, file=file)


def _execute(sql: str, params: dict[str, str], path: str, limits: Limits, take) -> _Child:
    """Run ``sql`` in a child, holding one of the host's ``HERMES_SQL_CONCURRENCY`` console
    slots (ConsoleBusy when none is free): ``take(frame)`` for each encoded rows frame; a
    time-out says ``limits.timeout_note``."""
    check_statement(sql)
    try:
        with host_slots.take("console", settings.HERMES_SQL_CONCURRENCY):
            with _Child(sql, params, path=path, limits=limits) as child:
                for payload in child.row_frames():
                    take(payload)
    except host_slots.Busy as busy:
        raise ConsoleBusy(busy.count) from None
    except ConsoleTimeout as exc:
        if not limits.timeout_note:
            raise
        raise ConsoleTimeout(exc.budget, limits.timeout_note) from None
    return child


def _postgres_params() -> dict | None:
    """How the child connects to the current PostgreSQL profile (its role, read-only
    sessions, the schema's search path), or None on a state.db."""
    if not dialect.postgres():
        return None
    params = connections[current_alias()].get_connection_params()
    return {k: v for k, v in params.items() if isinstance(v, str | int) and k != "cursor_factory"}


class _Child:
    """One child process running one statement; every read is bounded by the deadline."""

    def __init__(self, sql: str, params: dict[str, str], *, path: str, limits: Limits):
        self.sql, self.limits = sql, limits
        self.truncated: str | bool = False
        self.column_names: list[str] = []
        self.row_cap: int | None = None
        self.deadline = time.monotonic() + limits.timeout + KILL_GRACE
        self._buffer = bytearray()
        self.postgres = _postgres_params()
        self._request = json.dumps(
            {
                "path": path,
                "postgres": self.postgres,
                "sql": sql,
                "params": params,
                **asdict(limits),
                "max_row_bytes": MAX_ROW_BYTES,
                "cell_chars": (
                    limits.cell_chars + REDACTION_MARGIN if limits.cell_chars is not None else None
                ),
                "memory_bytes": int(settings.HERMES_SQL_MEMORY_MB) * 2**20,
                "progress_steps": PROGRESS_STEPS,
            }
        ).encode()

    def __enter__(self) -> _Child:
        try:
            self.proc = subprocess.Popen(
                CHILD_WITH_PACKAGES if self.postgres else CHILD,
                cwd=PROJECT_ROOT,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env={"PATH": os.defpath},
                start_new_session=True,
            )
        except OSError as exc:
            raise ConsoleError(
                f"The console could not start a process for the query: {exc}"
            ) from exc
        self._out = self.proc.stdout.fileno()
        os.set_blocking(self._out, False)
        try:
            self._send_request()
        except BaseException:  # a request not written in time: the child is killed, reaped here
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc_info) -> None:
        self.proc.kill()  # (nothing to do when it has ended)
        self.proc.wait()
        self.proc.stdout.close()

    def row_frames(self) -> Iterator[bytes]:
        """The encoded ``{"rows": …}`` frames until the end (sets ``column_names`` from the
        first frame, ``truncated`` and ``row_cap`` from the last)."""
        message = json.loads(self._frame())
        if "columns" not in message:
            raise self._failure(message)
        self.column_names = message["columns"]
        while True:
            payload = self._frame()
            if payload.startswith(_ROWS_FRAME):
                yield payload
                continue
            message = json.loads(payload)
            if "end" not in message:
                raise self._failure(message)
            self.truncated = message["end"]["truncated"]
            self.row_cap = message["end"].get("row_cap")
            return

    def _failure(self, message: dict) -> ConsoleError:
        if "unavailable" in message:
            return unavailable(message["unavailable"], message.get("database", "SQLite"))
        if "too_large" in message:
            return ConsoleTooLarge(message["too_large"]["limit"], row=message["too_large"]["row"])
        failed = message.get("failed") or {}
        return translate(failed, keyword=leading_keyword(self.sql), timeout=self.limits.timeout)

    def _send_request(self) -> None:
        fd = self.proc.stdin.fileno()
        os.set_blocking(fd, False)
        view = memoryview(self._request)
        try:
            while view:
                self._wait(fd, select.POLLOUT)
                view = view[os.write(fd, view) :]
        except BrokenPipeError:
            pass  # the child died before reading: reading its answer says so
        finally:
            self.proc.stdin.close()

    def _frame(self) -> bytes:
        size = int.from_bytes(self._read(4), "big")
        if size > MAX_FRAME_BYTES:
            raise ConsoleError("The console's process sent an answer too large to read.")
        return self._read(size)

    def _read(self, size: int) -> bytes:
        while len(self._buffer) < size:
            self._wait(self._out, select.POLLIN)
            chunk = os.read(self._out, max(size - len(self._buffer), 1 << 16))
            if not chunk:
                raise self._ended()
            self._buffer += chunk
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def _wait(self, fd: int, event: int) -> None:
        poller = select.poll()
        poller.register(fd, event | select.POLLERR | select.POLLHUP)
        remaining = self.deadline - time.monotonic()
        if remaining <= 0 or not poller.poll(remaining * 1000):
            self.proc.kill()
            raise ConsoleTimeout(self.limits.timeout)

    def _ended(self) -> ConsoleError:
        """The child closed its output without a last word."""
        try:
            code = self.proc.wait(max(0.05, self.deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return ConsoleTimeout(self.limits.timeout)
        if code in (-signal.SIGKILL, -signal.SIGXCPU):  # its CPU-time backstop
            return ConsoleTimeout(self.limits.timeout)
        return ConsoleError(
            f"The query stopped unexpectedly (the console's process ended with status {code})."
        )
