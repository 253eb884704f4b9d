"""The Django database backend for a PostgreSQL store (see the package docstring)."""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import logging
import math
import time
from collections.abc import Iterator
from operator import itemgetter
from typing import NamedTuple

import psycopg
from django.db import DatabaseError, NotSupportedError
from django.db.backends.postgresql import base as pg_base
from django.db.backends.postgresql.features import DatabaseFeatures as PGFeatures
from psycopg.pq import TransactionStatus

from ..hermes_db.base import DatabaseCreation, NotAHermesStore
from ..hermes_db.deadline import Deadline, current_budget
from ..metrics import count_statement
from .shape import inspect

logger = logging.getLogger(__name__)

# The oldest server read (Django 5.2's own floor; Hermes itself writes on 17 and later).
MIN_VERSION = (14,)


# On a hot standby: seconds since the primary committed the last transaction replayed here (0
# once all WAL received is replayed), bytes of WAL received and not replayed yet, whether replay
# is paused, whether WAL arrives from the primary. Every function here is open to any role.
STANDBY_SQL = """
SELECT pg_is_in_recovery(),
       CASE WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() THEN 0
            ELSE extract(epoch FROM now() - pg_last_xact_replay_timestamp())::float8 END,
       coalesce(pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn()), 0)::int8,
       CASE WHEN pg_is_in_recovery() THEN pg_is_wal_replay_paused() END,
       EXISTS (SELECT FROM pg_stat_wal_receiver)
"""


class Standby(NamedTuple):
    """How far a hot standby is behind its primary."""

    lag_seconds: float | None
    lag_bytes: int
    # False when replay is paused or nothing arrives from the primary: the lag only grows.
    replaying: bool


class StoreUnavailable(DatabaseError):
    """A configured profile that cannot be read at all (its configuration says why)."""


class ReadOnlyCursor(pg_base.Cursor):
    """Django's client-binding cursor, each statement alone in a read-only transaction under
    its deadline, sent with the extended protocol (so one statement per call)."""

    _prelude = False

    def execute(self, query, params=None, **kwargs):
        conn = self.connection
        if conn.info.transaction_status != TransactionStatus.IDLE:
            conn.rollback()
        deadline = Deadline()
        deadline.start()
        self._prelude = True
        try:
            super().execute("; ".join(_prelude(conn, deadline)))
        finally:
            self._prelude = False
        try:
            return super().execute(query, params, **kwargs)
        except psycopg.errors.QueryCanceled as exc:
            raise deadline.timeout() from exc
        finally:
            # The rows are in: nothing the statement set survives it.
            with contextlib.suppress(psycopg.Error):
                conn.rollback()

    # Every fetch decodes Hermes's marked text (:func:`decoded`) a chunk of rows at a time.
    def fetchone(self):
        row = super().fetchone()
        return row if row is None else decoded([row], self.pgresult)[0]

    def fetchmany(self, size: int = 0):
        return decoded(super().fetchmany(size), self.pgresult)

    def fetchall(self):
        return decoded(super().fetchall(), self.pgresult)

    def __iter__(self):
        # By chunks, so a column is looked at once per chunk, not once per row.
        while rows := self.fetchmany(1000):
            yield from rows

    def executemany(self, *args, **kwargs):
        raise NotSupportedError("A store is only read one statement at a time.")

    # Both would run outside the read-only transaction and the deadline.
    copy = stream = executemany

    def _execute_send(self, query, *, force_extended=False, binary=None):
        super()._execute_send(query, force_extended=not self._prelude, binary=binary)


# PostgreSQL text holds no NUL, so Hermes marks what SQLite would store otherwise: structured
# (multimodal) content, ``"\\x00json:" + JSON`` there, is ``"\\x01json:" + JSON`` here; bytes
# are ``"\\x01bytes:" + base64``; a string holding a NUL or starting with a marker is
# ``"\\x01json:"`` + its JSON string.
JSON_MARK, BYTES_MARK = "\x01json:", "\x01bytes:"


def as_in_sqlite(text: str):
    """The value SQLite would hold for a marked text (anything else as it is), so every page
    decodes (then redacts) it as it does a file's. A value cut in SQL keeps its marker."""
    if text.startswith(BYTES_MARK):
        try:
            return base64.b64decode(text[len(BYTES_MARK) :], validate=True)
        except binascii.Error:
            return text
    payload = text[len(JSON_MARK) :]
    if payload.startswith('"'):
        for ending in ("", '"'):  # a string cut by ``left()`` lost its closing quote
            with contextlib.suppress(ValueError):
                return json.loads(payload + ending)
    return "\x00json:" + payload


def _prelude(conn, deadline: Deadline) -> tuple[str, ...]:
    """What opens a statement's read-only transaction under its deadline, one statement each
    (pipeline mode sends no multi-statement string; a cursor sends them joined, at once)."""
    ms = max(1, math.ceil(deadline.budget * 1000))
    return (
        "BEGIN READ ONLY",
        f"SET LOCAL statement_timeout = {ms}",
        f"SET LOCAL search_path = {conn.hermes_schema}, pg_catalog",
    )


class Pipelined:
    """Statements sent ahead in psycopg's pipeline mode, on a connection of the download's own
    (``DatabaseWrapper.pipelined``): the next chunk of an export is sent before the worker
    encodes the current one, so the server reads it meanwhile (no thread: the server works,
    the worker only sends and later receives).  Each statement still runs alone in a read-only
    transaction under its deadline, its prelude queued with it.  Measured: ``docs/performance.md``
    ("PostgreSQL profiles", the full messages CSV)."""

    def __init__(self, conn: psycopg.Connection, alias: str):
        self.conn = conn
        self.alias = alias

    def send(self, queryset) -> Pending:
        """Send the statement of ``queryset`` (a ``values_list()``) now, to be read by
        :meth:`Pending.rows` as the queryset itself would give its rows."""
        compiler = queryset.query.get_compiler(using=queryset.db)
        sql, params = compiler.as_sql()
        started = time.perf_counter()
        return Pending(*self.send_sql(sql, params), compiler, self.alias, started)

    def send_sql(self, sql: str, params) -> tuple[psycopg.ClientCursor, Deadline]:
        """Send ``sql`` (Django's client-side ``%s`` binding) under the current budget."""
        deadline = Deadline()
        deadline.start()
        prelude = psycopg.ClientCursor(self.conn)
        for statement in _prelude(self.conn, deadline):
            prelude.execute(statement)
        data = psycopg.ClientCursor(self.conn)
        data.execute(sql, params)
        prelude.execute("ROLLBACK")
        return data, deadline


class Pending(NamedTuple):
    cursor: psycopg.ClientCursor
    deadline: Deadline
    compiler: object
    alias: str
    sent: float  # time.perf_counter() when sent

    def rows(self) -> list[tuple]:
        """The statement's rows (waiting for them if the server is not done), through the
        queryset's converters, in its ``values_list()`` order."""
        try:
            fetched = decoded(self.cursor.fetchall(), self.cursor.pgresult)
        except psycopg.errors.QueryCanceled as exc:
            raise self.deadline.timeout() from exc
        finally:
            # Counted as the pages' statements are: from sent to its rows received.
            count_statement(self.alias, time.perf_counter() - self.sent)
        return list(self.compiler.results_iter(results=[fetched], tuple_expected=True))


TEXT_OID = 25
_MARKS = (JSON_MARK, BYTES_MARK)


def decoded(rows: list, result) -> list:
    """``rows`` (tuples of one result) with each marked ``text`` value as SQLite would hold it
    (:func:`as_in_sqlite`).  A column's values are looked at in one C-level search per chunk
    (``\\x01`` anywhere in them), so text is loaded by psycopg's C loader and the rare marked
    chunk alone pays a look at each value, where a loader of ours read every value: the full
    messages CSV of the 1M-message schema 30.8 → 35.4 MB/s beside the revision before, same
    rounds (``bench/benchmark.py --baseline 292181f --postgres --exports``)."""
    if not rows or result is None:
        return rows
    marked = [
        i
        for i in range(result.nfields)
        if result.ftype(i) == TEXT_OID
        and "\x01" in "\x02".join(filter(None, map(itemgetter(i), rows)))
    ]
    if not marked:
        return rows
    out = []
    for row in rows:
        values = list(row)
        for i in marked:
            value = values[i]
            if value.__class__ is str and value.startswith(_MARKS):
                values[i] = as_in_sqlite(value)
        out.append(tuple(values))
    return out


class DatabaseFeatures(PGFeatures):
    # Never written: no test transaction wraps it (as for the SQLite stores).
    supports_transactions = False
    minimum_database_version = MIN_VERSION


class DatabaseWrapper(pg_base.DatabaseWrapper):
    features_class = DatabaseFeatures
    creation_class = DatabaseCreation
    # Filled on each new connection (see shape.inspect).
    hermes_shape = None
    hermes_problem = ""
    hermes_writes = ""

    def get_connection_params(self):
        if self.settings_dict.get("HERMES_PROBLEM"):
            raise StoreUnavailable(self.settings_dict["HERMES_PROBLEM"])
        params = super().get_connection_params()
        schema = self.settings_dict["HERMES_SCHEMA"]
        params["cursor_factory"] = ReadOnlyCursor
        # libpq's floor is 2 s; past the budget a page fails anyway.
        params["connect_timeout"] = max(2, math.ceil(current_budget()))
        params["options"] = (
            f"{params.get('options') or ''} -c default_transaction_read_only=on "
            f"-c search_path={schema},pg_catalog -c TimeZone={self.timezone_name}"
        ).strip()
        return params

    @contextlib.contextmanager
    def pipelined(self) -> Iterator[Pipelined]:
        """A connection of its own in pipeline mode (:class:`Pipelined`) for the block, closed
        after it: a download that is never read to its end (or closed) holds no statement in
        flight on the connection the pages use."""
        with self.wrap_database_errors:
            conn = pg_base.DatabaseWrapper.get_new_connection(self, self.get_connection_params())
        try:
            conn.autocommit = True
            conn.hermes_schema = self.settings_dict["HERMES_SCHEMA"]
            with self.wrap_database_errors, conn.pipeline():
                yield Pipelined(conn, self.alias)
        finally:
            conn.close()

    def get_new_connection(self, conn_params):
        conn = super().get_new_connection(conn_params)
        conn.hermes_schema = self.settings_dict["HERMES_SCHEMA"]
        found = divmod(conn.info.server_version, 10000)
        try:
            if found < MIN_VERSION:
                raise NotSupportedError(
                    f"PostgreSQL {MIN_VERSION[0]} or later is required "
                    f"(found {found[0]}.{found[1]})."
                )
            self.hermes_shape, self.hermes_problem, self.hermes_writes = inspect(
                conn, conn.hermes_schema
            )
        except BaseException:
            # Django keeps no connection that failed to open: nothing else would close it.
            conn.close()
            raise
        if self.hermes_writes:
            logger.warning(
                "the PostgreSQL role of schema %s could write to it (%s): use a SELECT-only role",
                conn.hermes_schema,
                self.hermes_writes,
            )
        return conn

    def hermes_shape_now(self):
        """The shape of the schema (connects if needed); a missing or forbidden one is refused."""
        self.ensure_connection()
        if self.hermes_problem:
            raise NotAHermesStore(self.hermes_problem)
        return self.hermes_shape

    def hermes_journal_mode_now(self) -> str:
        # Readers never keep Hermes from committing (MVCC): statements need not be cut short.
        return "mvcc"

    def hermes_standby_now(self) -> Standby | None:
        """How far behind its primary the server is, when it is a hot standby (else None)."""
        with self.cursor() as cur:
            cur.execute(STANDBY_SQL)
            recovering, seconds, behind, paused, receiving = cur.fetchone()
        if not recovering:
            return None
        lag = None if seconds is None else round(max(0.0, seconds), 3)
        return Standby(lag, int(behind), bool(receiving and not paused))

    def hermes_change_key(self) -> str | None:
        """The schema's change revision, as text: the same value means the same conversations
        (None when the schema has none, or cannot be read)."""
        with contextlib.suppress(DatabaseError):
            if self.hermes_shape_now().has_table("state_change_revision"):
                with self.cursor() as cur:
                    cur.execute("SELECT * FROM state_change_revision")
                    return f"revision {cur.fetchall()!r}"
        return None
