"""Django's PostgreSQL backend, whose health check of a kept connection costs no round trip.

Connections to the app database are kept between requests (``CONN_MAX_AGE``) and checked at
the first query of each request (``CONN_HEALTH_CHECKS``), so that a PostgreSQL restarted
meanwhile costs a reconnection, not an error page.  Django checks with a ``SELECT 1``: a round
trip on every request, as many as the page's own queries on the lightest pages.

A connection idle between requests has nothing to read: the server only speaks when asked,
except when it goes away (the socket reports end of file or an error) or has something to say
unprompted (a notice).  So the check first asks the socket, without waiting: nothing to read
means the server has not dropped the connection, and the request goes on; anything to read,
or a connection not idle, gets Django's full check (``SELECT 1``, closed and reopened if it
fails).  A server that vanished without closing its end (a host gone off the network) is
caught by neither check in time; the socket timeouts deal with that, as before.

:meth:`DatabaseWrapper.prepared_cursor`: a cursor whose statements are prepared on the server
(parsed and planned once per connection, then only executed), for the statement every request
runs (the signed-in session with its user, ``accounts_app.session_read``), whose planning cost
more than its execution.  Django leaves every other statement unprepared, which keeps
connection poolers working; a pooler that cannot keep prepared statements (PgBouncer in
transaction mode before 1.21) needs ``?prepared_statements=0`` in ``DATABASE_URL``, which makes
this cursor an ordinary one.
"""

from __future__ import annotations

import select

import psycopg
from django.db.backends.postgresql.base import TIMESTAMPTZ_OID
from django.db.backends.postgresql.base import DatabaseWrapper as PostgresWrapper
from django.db.backends.postgresql.operations import DatabaseOperations as PostgresOperations
from django.db.backends.postgresql.psycopg_any import register_tzloader
from django.utils.functional import cached_property
from psycopg import pq
from psycopg.pq import Format

from hermes_explorer.params import truthy

# This backend's own option in DATABASE_URL's query string (not a connection parameter).
PREPARED_STATEMENTS = "prepared_statements"
ONLY_WHEN_ASKED = 2**62


class PreparingCursor(psycopg.Cursor):
    """psycopg's server-side binding cursor, preparing every statement it runs."""

    def execute(self, query, params=None, *, prepare=None, binary=None):
        return super().execute(query, params, prepare=True, binary=binary)


class DatabaseOperations(PostgresOperations):
    def last_executed_query(self, cursor, sql, params):
        if isinstance(cursor, PreparingCursor):
            # Bound on the server: the statement as Django would show it, for the query log.
            try:
                return self.compose_sql(sql, params)
            except psycopg.Error:
                return sql
        return super().last_executed_query(cursor, sql, params)


class DatabaseWrapper(PostgresWrapper):
    ops_class = DatabaseOperations

    def get_connection_params(self):
        params = super().get_connection_params()
        params.pop(PREPARED_STATEMENTS, None)
        return params

    @cached_property
    def prepares_statements(self) -> bool:
        return truthy(str(self.settings_dict["OPTIONS"].get(PREPARED_STATEMENTS, "1")))

    def prepared_cursor(self):
        """A cursor (Django's wrapper: errors, query log) whose statements are prepared."""
        if not self.prepares_statements:
            return self.cursor()
        self.close_if_health_check_failed()
        self.ensure_connection()
        with self.wrap_database_errors:
            if self.connection.prepare_threshold is None:
                # Django's "never prepare" would also refuse this cursor's statements: only
                # the ones asked for are prepared (no statement is run this many times).
                self.connection.prepare_threshold = ONLY_WHEN_ASKED
            cursor = PreparingCursor(self.connection)
            # As Django's own cursors: the connection's time zone for timestamps.
            loader = self.connection.adapters.get_loader(TIMESTAMPTZ_OID, Format.TEXT)
            if self.timezone != loader.timezone:
                register_tzloader(self.timezone, cursor)
            return self._prepare_cursor(cursor)

    def close_if_health_check_failed(self):
        if (
            self.connection is not None
            and self.health_check_enabled
            and not self.health_check_done
            and self._quietly_idle()
        ):
            self.health_check_done = True
            return
        super().close_if_health_check_failed()

    def _quietly_idle(self) -> bool:
        """Whether the connection is open, idle outside a transaction, and has nothing
        waiting to be read (no end of file, no message from the server)."""
        conn = self.connection
        try:
            if conn.closed or conn.broken:
                return False
            if conn.info.transaction_status != pq.TransactionStatus.IDLE:
                return False
            readable, _w, _x = select.select([conn.fileno()], [], [], 0)
        except (OSError, ValueError, AttributeError):
            return False
        return not readable
