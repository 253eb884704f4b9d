"""The Django database backend for the state.db (see the package docstring)."""

from __future__ import annotations

import sqlite3
import time

from django.db import DatabaseError
from django.db.backends.sqlite3 import base as sqlite_base
from django.db.backends.sqlite3.creation import DatabaseCreation as SQLiteCreation
from django.db.backends.sqlite3.features import DatabaseFeatures as SQLiteFeatures

from redaction import redact

from . import gate as gates
from . import holds
from .deadline import PROGRESS_STEPS, Deadline
from .shape import detect_shape
from .uri import path_of, readonly_uri

# A mode=ro reader can see a transient "disk I/O error" while the writer checkpoints the WAL.
IO_RETRIES = 3
IO_RETRY_PAUSE = 0.05


def _is_interrupt(exc: sqlite3.OperationalError) -> bool:
    return str(exc) == "interrupted"


class NotAHermesStore(DatabaseError):
    """An SQLite file without the tables every Hermes release writes."""


class HermesCursor(sqlite_base.SQLiteCursorWrapper):
    """Django's SQLite cursor, plus deadlines, the checkpoint retry, the statement gate of
    rollback-journal files (``gate.py``) and the lock probe (``holds.py``)."""

    deadline: Deadline
    # The process's gate of this file in rollback-journal mode (None in WAL mode).
    gate: gates.StatementGate | None = None
    # The running statement holds the gate.
    _in_gate = False
    # The running statement and when it started, while someone watches (see holds.py).
    _held_sql: str | None = None
    _held_since = 0.0

    def _start(self, query: str) -> None:
        if self.gate is not None:
            self._in_gate = self.gate.enter()
        if holds.watching():
            self._held_sql, self._held_since = query, time.monotonic()
        self.deadline.start()

    def _done(self) -> None:
        """The running statement has been reset: leave the gate, report the lock's hold."""
        if self._in_gate:
            self._in_gate = False
            self.gate.leave()
        if self._held_sql is not None:
            holds.report(self._held_sql, time.monotonic() - self._held_since)
            self._held_sql = None

    def execute(self, query, params=None):
        self._done()
        for attempt in range(IO_RETRIES + 1):
            self._start(query)
            try:
                return super().execute(query, params)
            except BaseException as exc:
                self._done()
                if not isinstance(exc, sqlite3.OperationalError):
                    raise
                if _is_interrupt(exc):
                    raise self.deadline.timeout() from exc
                if "disk I/O error" in str(exc) and attempt < IO_RETRIES:
                    time.sleep(IO_RETRY_PAUSE)
                    continue
                raise

    def executemany(self, query, param_list):
        self._done()
        self._start(query)
        try:
            return super().executemany(query, param_list)
        except BaseException:
            self._done()
            raise

    def _fetch(self, method, *args):
        try:
            return method(*args)
        except BaseException as exc:
            self._done()
            if isinstance(exc, sqlite3.OperationalError) and _is_interrupt(exc):
                raise self.deadline.timeout() from exc
            raise

    def fetchone(self):
        row = self._fetch(super().fetchone)
        if row is None:
            self._done()
        return row

    def fetchmany(self, size=None):
        size = self.arraysize if size is None else size
        rows = self._fetch(super().fetchmany, size)
        if len(rows) < size:
            self._done()
        return rows

    def fetchall(self):
        rows = self._fetch(super().fetchall)
        self._done()
        return rows

    def close(self):
        self._done()
        return super().close()

    def __del__(self):
        # A cursor dropped mid-statement must not keep the gate.
        if self._in_gate:
            self._in_gate = False
            self.gate.leave()


class DatabaseFeatures(SQLiteFeatures):
    # The state.db is never written: nothing to roll back, and no test transaction wraps it
    # (so tests can point the alias at another fixture file).
    supports_transactions = False


class DatabaseCreation(SQLiteCreation):
    """Tests never create or destroy the state.db: fixtures build it and point NAME at it."""

    def create_test_db(self, *args, **kwargs):
        return self.connection.settings_dict["NAME"]

    def destroy_test_db(self, *args, **kwargs):
        return None


class DatabaseWrapper(sqlite_base.DatabaseWrapper):
    features_class = DatabaseFeatures
    creation_class = DatabaseCreation

    def get_connection_params(self):
        params = super().get_connection_params()
        # Read-only layer 2: the file is opened read-only by URI whatever NAME says.
        params["database"] = readonly_uri(params["database"])
        params.setdefault("timeout", 5.0)
        return params

    def get_new_connection(self, conn_params):
        conn = super().get_new_connection(conn_params)
        # Read-only layer 3: even a statement past the router and the URI cannot write.
        conn.execute("PRAGMA query_only = 1")
        conn.execute(f"PRAGMA busy_timeout = {int(conn_params['timeout'] * 1000)}")
        self.deadline = Deadline()
        conn.set_progress_handler(self.deadline.expired, PROGRESS_STEPS)
        self.hermes_shape = detect_shape(conn, self.settings_dict["NAME"])
        # Filters on free text compare the redacted value: ``hermes_redact(title) LIKE …``.
        conn.create_function("hermes_redact", 1, redact, deterministic=True)
        # Asked after the shape (SQLite knows the mode once the header is read); not cached
        # with it, as Hermes may switch modes without changing the schema.
        self.hermes_journal_mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()
        self.hermes_gate = gates.for_file(path_of(str(self.settings_dict["NAME"])))
        return conn

    def hermes_shape_now(self):
        """The shape of the file (connects if needed); one without Hermes's tables is refused."""
        self.ensure_connection()
        missing = [t for t in ("sessions", "messages") if not self.hermes_shape.has_table(t)]
        if missing:
            raise NotAHermesStore(
                f"no such table: {', '.join(missing)} (this file is not a Hermes state.db)"
            )
        return self.hermes_shape

    def hermes_journal_mode_now(self) -> str:
        """``wal`` or a rollback-journal mode (``delete``…) of the file this alias points at."""
        self.ensure_connection()
        return self.hermes_journal_mode

    def create_cursor(self, name=None):
        cursor = self.connection.cursor(factory=HermesCursor)
        cursor.deadline = self.deadline
        cursor.gate = self.hermes_gate if self.hermes_journal_mode != "wal" else None
        return cursor
