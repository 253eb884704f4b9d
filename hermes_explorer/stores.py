"""Every Hermes store the explorer serves: one per profile, found on disk or listed
(``HERMES_STORES``, else ``HERMES_STATE_DB``, else every profile under ``HERMES_HOME``).

Each store is its own read-only Django alias copied from ``hermes`` (the same read-only
layers); :func:`using` makes one current.  A store that cannot be read is reported unavailable
with the reason; the others keep working.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml
from django.conf import settings
from django.db import DatabaseError, connections
from django.utils.formats import number_format
from django.utils.translation import gettext, gettext_noop

from . import hermes_pg
from . import store as one_store
from .hermes_db.current import DEFAULT_ALIAS, current_alias
from .hermes_db.current import using as using_alias
from .hermes_db.deadline import query_budget
from .middleware import describe_fault_at

DEFAULT_PROFILE = "default"
# Profile names as they appear in URLs; anything else on disk is not a profile.
PROFILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
# Seconds one probe of a store may run.
PROBE_BUDGET = 1.0


@dataclass(frozen=True)
class Store:
    name: str
    # A state.db path, or a ``postgresql://`` URL with its ``schema``.
    path: str
    alias: str
    # Why the configuration names no readable store ("" when it does).
    problem: str = ""

    def __str__(self) -> str:
        return self.name

    @property
    def postgres(self) -> bool:
        return hermes_pg.is_postgres(self.path)

    @property
    def location(self) -> str:
        """Where it is, fit to show (a URL without its password)."""
        return hermes_pg.shown(self.path)


@dataclass(frozen=True)
class Status:
    readable: bool
    reason: str = ""
    shape: str = ""
    size: int | None = None
    # How the PostgreSQL role could write to the store ("" when it cannot).
    writes: str = ""
    # A PostgreSQL hot standby's lag (``hermes_pg.base.Standby``); None on a primary or a file.
    standby: tuple | None = None


def parse_list(spec: str) -> list[tuple[str, str]]:
    """``name=/path,other=/path`` as pairs; malformed entries and repeated names are skipped."""
    found: dict[str, str] = {}
    for part in spec.split(","):
        name, eq, path = (piece.strip() for piece in part.partition("="))
        if eq and path and PROFILE_NAME.match(name):
            found.setdefault(name, path)
    return list(found.items())


def read_env(path: Path) -> dict[str, str]:
    """``NAME=value`` lines of a ``.env`` file (``export`` and quotes allowed); {} if absent."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return {}
    found = {}
    for line in lines:
        name, eq, value = line.strip().removeprefix("export ").partition("=")
        if eq and not name.startswith("#"):
            value = value.strip()
            if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            found[name.strip()] = value
    return found


def derived_schema(name: str, state_db: Path) -> str:
    """The schema Hermes derives for a profile: ``hermes_<name>_<12 hex of its state.db>``."""
    digest = hashlib.sha256(str(state_db.resolve()).encode()).hexdigest()[:12]
    return f"hermes_{re.sub(r'[^a-z0-9_]', '_', name.lower())[:35]}_{digest}"


def profile_source(name: str, directory: Path) -> tuple[str, str] | None:
    """``(source, problem)`` of the profile kept in ``directory``: its state.db, or the URL of
    its PostgreSQL schema as its ``config.yaml`` says; None when it has neither."""
    state_db = directory / "state.db"
    config = directory / "config.yaml"
    try:
        settings_ = yaml.safe_load(config.read_text(encoding="utf-8")) if config.is_file() else {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        return str(state_db), f"config.yaml cannot be read: {exc}"
    database = (settings_ or {}).get("database") if isinstance(settings_, dict) else None
    if settings_ and not isinstance(settings_, dict) or not isinstance(database, dict | None):
        return str(state_db), "config.yaml is malformed (database: is not a mapping)"
    if str((database or {}).get("backend", "sqlite")).lower() not in ("postgres", "postgresql"):
        return (str(state_db), "") if state_db.is_file() else None
    url = read_env(directory / ".env").get("HERMES_DATABASE_URL") or os.environ.get(
        "HERMES_DATABASE_URL", ""
    )
    schema = str(database.get("schema") or derived_schema(name, state_db))
    if not hermes_pg.is_postgres(url):
        return (
            f"postgresql:///?schema={schema}",
            "config.yaml says PostgreSQL but no HERMES_DATABASE_URL is set",
        )
    return f"{url}{'&' if '?' in url else '?'}schema={schema}", ""


def discover_home(home: str, problems: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """The root store (profile ``default``) and each ``profiles/<name>/``'s, by name: a
    state.db path or a PostgreSQL URL; ``problems`` gets what is wrong with any of them."""
    found: list[tuple[str, str]] = []
    dirs = [(DEFAULT_PROFILE, Path(home))]
    try:
        entries = sorted(os.scandir(Path(home) / "profiles"), key=lambda e: e.name)
    except OSError:
        entries = []
    for entry in entries:
        with contextlib.suppress(OSError):
            if entry.name != DEFAULT_PROFILE and PROFILE_NAME.match(entry.name) and entry.is_dir():
                dirs.append((entry.name, Path(entry.path)))
    for name, directory in dirs:
        source = profile_source(name, directory)
        if source is not None:
            found.append((name, source[0]))
            if source[1] and problems is not None:
                problems[name] = source[1]
    return found


def mode() -> str:
    """``list`` (HERMES_STORES), ``file`` (HERMES_STATE_DB) or ``home`` (HERMES_HOME)."""
    if settings.HERMES_STORES:
        return "list"
    if settings.HERMES_HOME and not settings.HERMES_SINGLE_FILE:
        return "home"
    return "file"


def _primary_name() -> str:
    return str(connections.settings[DEFAULT_ALIAS]["NAME"])


def _alias_for(name: str, path: str, problem: str = "") -> str:
    """The alias reading ``path``: ``hermes`` for the file it names, else one of its own."""
    postgres = problem or hermes_pg.is_postgres(path)
    if path == _primary_name() and not postgres:
        return DEFAULT_ALIAS
    alias = f"{DEFAULT_ALIAS}@{name}"
    config = connections.settings.get(alias)
    if config is None or config.get("HERMES_SOURCE") != (path, problem):
        fresh = copy.deepcopy(connections.settings[DEFAULT_ALIAS])
        if postgres:
            # A schema, or a profile whose configuration is wrong (its reads fail with why).
            fresh = hermes_pg.database_settings(path, fresh, problem)
        else:
            fresh["NAME"] = path
            # Like ``hermes``, a file Django's test machinery must never create nor flush.
            fresh["TEST"] = {**fresh.get("TEST", {}), "MIRROR": DEFAULT_ALIAS}
        fresh["HERMES_SOURCE"] = (path, problem)
        if config is not None:
            # The same profile now names another file (the configuration changed).
            with contextlib.suppress(Exception):
                connections[alias].close()
            with contextlib.suppress(AttributeError, KeyError):
                del connections[alias]
        connections.settings[alias] = fresh
    return alias


class Registry:
    """The stores served now, rescanned when stale; and what is known of their health."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple | None = None
        self._scanned_at = 0.0
        self._stores: tuple[Store, ...] = ()
        self._seen: dict[str, str] = {}
        self._status: dict[Store, tuple[float, Status]] = {}

    def stores(self) -> tuple[Store, ...]:
        key = (mode(), settings.HERMES_STORES, settings.HERMES_HOME, _primary_name())
        now = time.monotonic()
        # One file (the one the ``hermes`` alias names) is never scanned again.
        stale = key[0] != "file" and now - self._scanned_at > float(settings.HERMES_STORES_RESCAN)
        if key != self._key or stale:
            with self._lock:
                if key != self._key:
                    self._seen, self._status = {}, {}
                self._stores = self._scan(key[0])
                self._key, self._scanned_at = key, now
        return self._stores

    def _scan(self, how: str) -> tuple[Store, ...]:
        if how == "file":
            return (Store(DEFAULT_PROFILE, _primary_name(), DEFAULT_ALIAS),)
        problems: dict[str, str] = {}
        if how == "list":
            pairs = parse_list(settings.HERMES_STORES)
        else:
            pairs = discover_home(settings.HERMES_HOME, problems)
            # A profile seen before whose file went away stays listed, as unavailable.
            found = dict(pairs)
            pairs += [(n, p) for n, p in self._seen.items() if n not in found]
            pairs.sort(key=lambda pair: (pair[0] != DEFAULT_PROFILE, pair[0]))
        self._seen.update(pairs)
        served = []
        for name, path in pairs:
            problem = problems.get(name, "")
            served.append(Store(name, path, _alias_for(name, path, problem), problem))
        return tuple(served)

    def rescan(self) -> None:
        """Forget the last scan (tests, and a profile just created on purpose)."""
        with self._lock:
            self._key = None

    def status(self, store: Store, *, fresh: bool = False) -> Status:
        """Whether ``store`` reads now, and if not why; probed at most once per rescan period."""
        now = time.monotonic()
        known = self._status.get(store)
        if known is not None and not fresh and now - known[0] <= settings.HERMES_STORES_RESCAN:
            return known[1]
        found = probe(store)
        self._status[store] = (now, found)
        return found

    def failed(self, store: Store, exc: BaseException) -> Status:
        """Record that reading ``store`` just failed (a merged page goes on without it)."""
        found = Status(False, reason=fault_reason(exc, store))
        self._status[store] = (time.monotonic(), found)
        return found


REGISTRY = Registry()


def fault_reason(exc: BaseException, store: Store) -> str:
    return describe_fault_at(exc, store.path) or str(exc)


def probe(store: Store) -> Status:
    """Open ``store`` and read one row: readable, or the reason it is not."""
    if store.problem:
        return Status(False, reason=store.problem)
    if not store.postgres and not os.path.exists(store.path):
        return Status(False, reason=gettext_noop("The state.db file is missing."))
    try:
        with using_alias(store.alias), query_budget(PROBE_BUDGET):
            label = one_store.shape().label
            one_store.one("SELECT 1 FROM sessions LIMIT 1")
            writes = one_store.writes()
            standby = one_store.standby()
        size = None if store.postgres else os.path.getsize(store.path)
    except (DatabaseError, sqlite3.Error, OSError) as exc:
        return Status(False, reason=fault_reason(exc, store))
    return Status(True, shape=label, size=size, writes=writes, standby=standby)


def writes_warning(writes: str) -> str:
    """What a page says of a store whose PostgreSQL role could write, in the page's language."""
    return gettext(
        "The PostgreSQL role of this profile could write to it (%(how)s): "
        "give the explorer a SELECT-only role."
    ) % {"how": writes}


def standby_note(standby) -> str:
    """What a page says of a profile read from a hot standby, in the page's language."""
    lag = "?" if standby.lag_seconds is None else number_format(standby.lag_seconds, 1)
    if standby.replaying:
        return gettext("Read from a standby server, %(lag)s s behind its primary.") % {"lag": lag}
    return gettext(
        "Read from a standby server that has stopped replaying its primary's changes "
        "(%(lag)s s behind): the newest conversations may be missing."
    ) % {"lag": lag}


def unavailable_note(store: Store, reason: str) -> str:
    """What a page spanning several profiles says of one it left out, in the page's language."""
    return gettext("Profile %(profile)s is unavailable: %(reason)s") % {
        "profile": store.name,
        "reason": gettext(reason) if reason else "",
    }


def all_stores() -> tuple[Store, ...]:
    return REGISTRY.stores()


def multi() -> bool:
    """Whether more than one store is served (the pages then name the profile)."""
    return len(REGISTRY.stores()) > 1


def by_name(name: str, among: tuple[Store, ...] | list[Store] | None = None) -> Store | None:
    return next((s for s in (all_stores() if among is None else among) if s.name == name), None)


def default_store(among: tuple[Store, ...] | list[Store] | None = None) -> Store | None:
    """The store read when nothing says which: ``default``, else the first one."""
    return min(
        all_stores() if among is None else among,
        key=lambda s: 0 if s.alias == DEFAULT_ALIAS else 1 if s.name == DEFAULT_PROFILE else 2,
        default=None,
    )


def current() -> Store | None:
    """The store the running code reads."""
    alias = current_alias()
    return next((store for store in all_stores() if store.alias == alias), None)


@contextlib.contextmanager
def using(store: Store | None) -> Iterator[Store | None]:
    """Read ``store`` inside the block; None leaves the store read around it."""
    with using_alias(store.alias if store is not None else None):
        yield store


def per_store(items: list, call) -> list:
    """``call(store, its_items)`` inside each store; the results come back in items' order."""
    slots: dict[Store, list[int]] = {}
    for index, item in enumerate(items):
        slots.setdefault(item.store, []).append(index)
    results: list = [None] * len(items)
    for store, indexes in slots.items():
        with using(store):
            found = call(store, [items[i] for i in indexes])
        for i, value in zip(indexes, found, strict=True):
            results[i] = value
    return results
