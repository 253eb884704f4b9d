"""Hermes profiles kept in PostgreSQL, for the tests: one throwaway server per test session.

Import the fixture into a test module (``from tests.hermes_pg import hermes_pg  # noqa: F401``)
and ask for ``hermes_pg``: a :class:`HermesPostgres` whose server (:class:`tests.servers.
PostgresServer`) holds the standard nasty fixture of each shape (``tests/builders.py``), loaded
by :func:`hermes_fixtures.postgres.load` into the schema ``hermes_<shape>``, and a SELECT-only
role (:data:`READER`) that may read them. The server is started once for the whole session,
however many modules import the fixture, and stopped at its end; tests skip when PostgreSQL is
not installed (``make servers`` installs it).

Tests that write (as the superuser, :attr:`HermesPostgres.url`) must restore what they change
or write to a schema of their own (:meth:`HermesPostgres.load`). :meth:`HermesPostgres.standby`
starts a streaming hot standby of the server (once) for replica tests.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from hermes_fixtures.ddl import SHAPES
from hermes_fixtures.postgres import grant_read_only, load
from tests import servers
from tests.builders import NastyFacts, build_nasty_db

READER = "hermes_reader"


def schema_for(shape: str) -> str:
    return f"hermes_{shape}"


@dataclass
class HermesPostgres:
    server: servers.PostgresServer
    workdir: Path
    # shape -> facts about the SQLite file loaded into schema_for(shape)
    stores: dict[str, NastyFacts] = field(default_factory=dict)
    _standby: servers.PostgresStandby | None = None

    @property
    def url(self) -> str:
        """The superuser's URL (owner of every schema)."""
        return self.server.url

    @property
    def reader_url(self) -> str:
        """The SELECT-only role's URL (read-only transactions by default)."""
        return self.server.url.replace(f"//{servers.PG_USER}@", f"//{READER}@", 1)

    def schema(self, shape: str) -> str:
        return schema_for(shape)

    def load(self, sqlite_path: str | Path, schema: str) -> dict[str, int]:
        """Load another state.db into ``schema`` (replacing it) and let the reader read it."""
        counts = load(sqlite_path, self.url, schema, replace=True)
        grant_read_only(self.url, READER, schema)
        return counts

    def standby(self) -> servers.PostgresStandby:
        """A streaming hot standby of the server, started on first use, caught up on return."""
        if self._standby is None:
            self._standby = servers.PostgresStandby(self.server).start()
        self._standby.catch_up()
        return self._standby

    def stop(self) -> None:
        if self._standby is not None:
            self._standby.stop()
        self.server.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


_shared: list[HermesPostgres] = []


@pytest.fixture(scope="session")
def hermes_pg(request) -> HermesPostgres:
    why = servers.postgres_missing()
    if why:
        pytest.skip(why)
    if not _shared:
        hpg = HermesPostgres(servers.PostgresServer(), Path(tempfile.mkdtemp(prefix="hermes-pg-")))
        request.config.add_cleanup(hpg.stop)
        hpg.server.start()
        for shape in SHAPES:
            path = hpg.workdir / f"{shape}.db"
            hpg.stores[shape] = build_nasty_db(path, shape)
            hpg.load(path, schema_for(shape))
        _shared.append(hpg)  # only once it is complete
    return _shared[0]
