"""The one door to a Hermes state.db: its shape, its rows, its path and its time budget.

Every query the explorer sends to a state.db goes through this module (the ORM models reach
the same connection through the router).  Code asks the store *what the file has* —
:func:`shape` — before it names a column, so that a file of any Hermes release opens; and it
runs raw SQL with :func:`rows` / :func:`one`, which always pass a parameter list (the backend
then reads ``%%`` as a literal ``%``) and honour the deadline of the current
:func:`~hermes_explorer.hermes_db.deadline.query_budget`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Sequence

from django.db import connections

from .hermes_db.deadline import query_budget
from .hermes_db.shape import StoreShape
from .hermes_db.uri import path_of

ALIAS = "hermes"


def connection(alias: str = ALIAS):
    return connections[alias]


def shape(alias: str = ALIAS) -> StoreShape:
    """What this file has (tables, columns, full-text layout); connects if needed."""
    return connections[alias].hermes_shape_now()


def name(alias: str = ALIAS) -> str:
    """The alias's configured NAME (a path or a ``file:`` URI), as the backend opens it."""
    return str(connections[alias].settings_dict["NAME"])


def path(alias: str = ALIAS) -> str:
    """The file system path of the state.db this alias reads."""
    return path_of(name(alias))


def file_signature(alias: str = ALIAS) -> tuple | None:
    """(name, device, inode, size, mtime) of the state.db and of its WAL; None if unreadable.

    Every commit by Hermes changes one of the two (the WAL in WAL mode, the file itself in
    rollback-journal mode), so an unchanged signature means unchanged data.
    """
    file_path = path(alias)
    parts: list = [name(alias)]
    for candidate in (file_path, file_path + "-wal"):
        try:
            st = os.stat(candidate)
        except FileNotFoundError:
            parts.append(None)
            continue
        except OSError:
            return None
        parts.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(parts)


def file_identity(alias: str = ALIAS) -> tuple:
    """(name, device, inode): the same file until it is replaced."""
    try:
        st = os.stat(path(alias))
        return (name(alias), st.st_dev, st.st_ino)
    except OSError:
        return (name(alias), None, None)


@contextlib.contextmanager
def cursor(*, budget: float | None = None, alias: str = ALIAS) -> Iterator:
    """A cursor on the state.db; with ``budget``, every statement gets that many seconds."""
    with contextlib.ExitStack() as stack:
        if budget is not None:
            stack.enter_context(query_budget(budget))
        yield stack.enter_context(connections[alias].cursor())


def rows(
    sql: str, params: Iterable = (), budget: float | None = None, *, alias: str = ALIAS
) -> list[tuple]:
    """Every row of one statement."""
    with cursor(budget=budget, alias=alias) as cur:
        cur.execute(sql, list(params))
        return cur.fetchall()


def one(
    sql: str, params: Iterable = (), *, budget: float | None = None, alias: str = ALIAS
) -> tuple | None:
    """The first row of one statement, or None."""
    with cursor(budget=budget, alias=alias) as cur:
        cur.execute(sql, list(params))
        return cur.fetchone()


def present(table: str, wanted: Sequence[str], *, alias: str = ALIAS) -> list[str]:
    """The columns of ``wanted`` that this file's ``table`` has, in the order given."""
    s = shape(alias)
    return [c for c in wanted if s.has_column(table, c)]


def close(alias: str = ALIAS) -> None:
    connections[alias].close()
