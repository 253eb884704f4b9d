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
"""

from __future__ import annotations

import select

from django.db.backends.postgresql.base import DatabaseWrapper as PostgresWrapper
from psycopg import pq


class DatabaseWrapper(PostgresWrapper):
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
