"""The one door to a Hermes store (a state.db, or a PostgreSQL schema through ``hermes_pg``).

Code asks :func:`shape` what the store has before it names a column, and runs raw SQL with
:func:`rows` / :func:`one`, which always pass a parameter list (so ``%%`` is a literal ``%``).
In rollback-journal mode a reader's statement keeps Hermes from committing while it runs, so
chunked work asks a :class:`ChunkClock` how big its next chunk may be.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence, Sized
from typing import TypeVar

from django.core.cache import cache
from django.db import connections

from . import hermes_pg
from .hermes_db.current import current_alias
from .hermes_db.deadline import QueryTimeout, query_budget, statement_cap
from .hermes_db.shape import StoreShape
from .hermes_db.uri import path_of

# On a rollback-journal file, what one statement of chunked work aims at (seconds)...
SHORT_READ_SECONDS = 0.015
# ...where it is stopped and run again on a chunk ``SHRINK_AFTER_CAP`` times smaller...
SHORT_READ_CAP = 0.075
SHRINK_AFTER_CAP = 8
# ...and how much bigger the next chunk may get after one that took under half the aim.
SHORT_READ_GROWTH = 2

# On a rollback-journal file, the longest a statement that cannot be cut may keep Hermes waiting.
UNCUT_READ_CAP = 0.2

T = TypeVar("T")


def shape(alias: str | None = None) -> StoreShape:
    """What this file has (tables, columns, full-text layout); connects if needed."""
    return connections[alias or current_alias()].hermes_shape_now()


def journal_mode(alias: str | None = None) -> str:
    """``wal``, or the rollback-journal mode (``delete``…) the file reports."""
    return connections[alias or current_alias()].hermes_journal_mode_now()


def readers_block_writer(alias: str | None = None) -> bool:
    """Whether a running statement keeps Hermes from committing: any mode but WAL and MVCC."""
    return journal_mode(alias) not in ("wal", "mvcc")


def uncut_statement_budget(seconds: float) -> float:
    """``seconds``, at most ``UNCUT_READ_CAP`` on a rollback-journal file."""
    return min(seconds, UNCUT_READ_CAP) if readers_block_writer() else seconds


def writes() -> str:
    """How the store's PostgreSQL role could write to it, in words ("" when it cannot)."""
    return getattr(connections[current_alias()], "hermes_writes", "")


def standby():
    """A PostgreSQL hot standby's lag (``hermes_pg.base.Standby``); None for a primary or a file."""
    found = getattr(connections[current_alias()], "hermes_standby_now", None)
    return found() if found else None


def name() -> str:
    """The current alias's configured NAME (a path or a ``file:`` URI), as the backend opens
    it; for a schema, its URL without the password."""
    config = connections[current_alias()].settings_dict
    if config["ENGINE"] == hermes_pg.ENGINE:
        return hermes_pg.shown(config["HERMES_SOURCE"][0])
    return str(config["NAME"])


def path() -> str:
    """The file system path of the state.db the current alias reads."""
    return path_of(name())


def file_signature() -> tuple | None:
    """(name, device, inode, size, mtime) of the state.db and of its WAL; None if unreadable.
    Every commit changes one of the two, so an unchanged signature means unchanged data.
    A schema's is ``(name, its change revision as text)``."""
    connection = connections[current_alias()]
    if hasattr(connection, "hermes_change_key"):
        key = connection.hermes_change_key()
        return None if key is None else (name(), key)
    file_path = path()
    parts: list = [name()]
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


def file_identity() -> tuple:
    """(name, device, inode): the same file until it is replaced."""
    try:
        st = os.stat(path())
        return (name(), st.st_dev, st.st_ino)
    except OSError:
        return (name(), None, None)


@contextlib.contextmanager
def cursor(*, budget: float | None = None, alias: str | None = None) -> Iterator:
    """A cursor on the state.db; with ``budget``, every statement gets that many seconds."""
    with query_budget(budget), connections[alias or current_alias()].cursor() as cur:
        yield cur


def rows(
    sql: str, params: Iterable = (), budget: float | None = None, *, alias: str | None = None
) -> list[tuple]:
    """Every row of one statement."""
    with cursor(budget=budget, alias=alias) as cur:
        cur.execute(sql, list(params))
        return cur.fetchall()


def one(
    sql: str, params: Iterable = (), *, budget: float | None = None, alias: str | None = None
) -> tuple | None:
    """The first row of one statement, or None."""
    with cursor(budget=budget, alias=alias) as cur:
        cur.execute(sql, list(params))
        return cur.fetchone()


def marks(values: Sized) -> str:
    """One ``%s`` placeholder per value, comma-separated (for ``IN (…)``)."""
    return ", ".join(["%s"] * len(values))


def present(table: str, wanted: Sequence[str]) -> list[str]:
    """The columns of ``wanted`` that this file's ``table`` has, in the order given."""
    s = shape()
    return [c for c in wanted if s.has_column(table, c)]


def close(alias: str | None = None) -> None:
    connections[alias or current_alias()].close()


class ChunkClock:
    """How big the next chunk of chunked work may be: rows, sessions, messages or ids.

    On a WAL file: ``start``, growing fourfold after a statement quicker than
    ``grow_below`` seconds, up to ``maximum``.  On a rollback-journal file: sized from the
    measured time per unit to take about ``SHORT_READ_SECONDS``; :meth:`run` stops a statement
    past ``SHORT_READ_CAP`` and retries a smaller chunk (one of ``minimum`` cannot be cut).
    """

    def __init__(
        self,
        start: int,
        *,
        minimum: int = 1,
        maximum: int | None = None,
        first: int | None = None,
        grow_below: float | None = None,
        alias: str | None = None,
        short: bool | None = None,
    ) -> None:
        # ``short``: whether to keep statements short; by default, whether the file needs it.
        self.short = readers_block_writer(alias) if short is None else short
        self.minimum = max(1, int(minimum))
        self.maximum = maximum
        self.grow_below = grow_below
        self.size = self._clamp(first if self.short and first is not None else start)

    def _clamp(self, n: float) -> int:
        n = max(self.minimum, int(n))
        return n if self.maximum is None else max(self.minimum, min(n, self.maximum))

    def run(self, work: Callable[[int], T]) -> tuple[int, T]:
        """``(n, work(n))`` for the next chunk size ``n``; then sizes the chunk after it."""
        while True:
            n = self.size
            cap = SHORT_READ_CAP if self.short and n > self.minimum else None
            began = time.monotonic()
            try:
                with statement_cap(cap):
                    result = work(n)
            except QueryTimeout as exc:
                if cap is None or not exc.capped:
                    raise
                self.size = self._clamp(n // SHRINK_AFTER_CAP)
                continue
            self.measured(n, time.monotonic() - began)
            return n, result

    def measured(self, n: int, seconds: float) -> None:
        """Size the next chunk from the ``seconds`` a chunk of ``n`` took (a chunk near the
        aim keeps its size, so a busy machine's hiccups do not make chunks erratic)."""
        if self.short:
            if seconds > SHORT_READ_SECONDS * 1.5:
                self.size = self._clamp(n * SHORT_READ_SECONDS / seconds)
            elif seconds < SHORT_READ_SECONDS / 2:
                self.size = self._clamp(n * SHORT_READ_GROWTH)
        elif self.grow_below is not None and seconds < self.grow_below:
            self.size = self._clamp(n * 4)


def while_unchanged(label: str, parts, compute, timeout: float):
    """``compute()``, cached under the file's signature and ``parts`` for ``timeout``
    seconds; an unreadable file is computed every time."""
    signature = file_signature()
    if signature is None:
        return compute()
    key = f"{label}:" + hashlib.sha256(repr((signature, parts)).encode()).hexdigest()
    return cache.get_or_set(key, compute, timeout)
