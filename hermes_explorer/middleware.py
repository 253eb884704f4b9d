"""Turn state.db failures into clear pages instead of tracebacks.

A query past its deadline, a missing, unreadable, locked or corrupt file: each becomes a 503
page that says what happened and what to do, never a 500.
"""

from __future__ import annotations

import logging
import os

from django.db import DatabaseError, connections
from django.shortcuts import render
from django.utils.deprecation import MiddlewareMixin
from django.utils.translation import gettext_noop

from . import store
from .hermes_db.current import current_alias
from .hermes_db.deadline import QueryTimeout

logger = logging.getLogger(__name__)

# Messages SQLite gives when the file itself, not the query, is the problem.
STORE_FAULTS = {
    "unable to open database file": gettext_noop(
        "The state.db file cannot be opened (missing, or not readable by the explorer's user)."
    ),
    "file is not a database": gettext_noop("The file is not an SQLite database."),
    "database disk image is malformed": gettext_noop("The state.db is corrupt."),
    "database is locked": gettext_noop(
        "The state.db stayed locked by a writer longer than the busy timeout."
    ),
    "disk I/O error": gettext_noop("Reading the state.db failed with a disk I/O error."),
    "no such table": gettext_noop(
        "The file does not look like a Hermes state.db (a table is missing)."
    ),
    "readonly database": gettext_noop(
        "The state.db could not be read (a WAL reader needs the -wal/-shm files or a writable directory)."
    ),
}
# ...and PostgreSQL (and the profile's configuration) when a schema is the problem.
_UNREACHABLE = gettext_noop(
    "The PostgreSQL server cannot be reached (down, restarting, or a wrong address)."
)
_CONFIGURATION = gettext_noop("The profile's configuration does not say how to read it.")
STORE_FAULTS |= {
    "connection failed": _UNREACHABLE,
    "connection timeout expired": _UNREACHABLE,
    "server closed the connection": _UNREACHABLE,
    "terminating connection": _UNREACHABLE,
    "the connection is closed": _UNREACHABLE,
    "or later is required": gettext_noop(
        "The PostgreSQL server is too old: the explorer reads PostgreSQL 14 and later."
    ),
    "no such schema": gettext_noop("The profile's PostgreSQL schema does not exist."),
    "permission denied": gettext_noop(
        "The PostgreSQL role may not read this profile (permission denied)."
    ),
    # A hot standby cancels a query that holds up its replay (SQLSTATE 40001): transient.
    "conflict with recovery": gettext_noop(
        "The standby server cancelled this query to replay a change from its primary. Load the"
        " page again; hot_standby_feedback = on on the standby avoids most of these."
    ),
    "config.yaml": _CONFIGURATION,
    "invalid schema name": _CONFIGURATION,
}


def describe_store_fault(exc: BaseException) -> str | None:
    text = str(exc)
    return next((why for needle, why in STORE_FAULTS.items() if needle in text), None)


def describe_fault_at(exc: BaseException, path: str) -> str | None:
    """:func:`describe_store_fault`, or that the configured path is a directory."""
    if os.path.isdir(path):
        return gettext_noop("The configured state.db path is a directory, not a database file.")
    return describe_store_fault(exc)


class StateDBErrorMiddleware(MiddlewareMixin):
    def process_exception(self, request, exception):
        if isinstance(exception, QueryTimeout):
            return render(
                request,
                "errors/timeout.html",
                {"budget": exception.budget, "path": request.get_full_path()},
                status=503,
            )
        if isinstance(exception, DatabaseError):
            explanation = describe_fault_at(exception, store.path())
            if explanation is not None:
                logger.warning("state.db unavailable: %s", exception)
                return render(
                    request,
                    "errors/store_unavailable.html",
                    {"explanation": explanation, "detail": str(exception)},
                    status=503,
                )
            if connections[current_alias()].vendor == "postgresql":
                # A page whose SQL has no PostgreSQL version yet: say so, never a 500.
                logger.error("%s does not read PostgreSQL yet", request.path, exc_info=exception)
                return render(request, "errors/not_on_postgres.html", status=501)
        return None
