"""Layouts of a state.db: which tables, columns, indexes and full-text tables a file has.

A :class:`Layout` is everything needed to write an empty file of that kind. There are three
families:

* the **shapes** the explorer's tests and demo have always used — ``doc``, ``legacy`` and
  ``current`` (see :mod:`hermes_fixtures.ddl`);
* **release layouts**, files as a given Hermes release created them — ``v1`` (the first
  release), ``v5``, ``v10`` and ``v20`` (see ``docs/hermes-layouts.md``);
* **random layouts** (:func:`random_layout`): the current layout with a seeded random subset
  of its optional columns and tables removed, for tests that must not depend on any one
  column being there.

Every layout has at least the columns of the first release: a real file never has fewer.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from . import releases
from .columns import (
    MESSAGES_COLUMNS,
    SCHEMA_VERSIONS,
    SESSION_DAILY_USAGE_COLUMNS,
    SESSION_MODEL_USAGE_COLUMNS,
    SESSIONS_COLUMNS,
    SHAPES,
    Column,
    rank,
)

# Full-text layouts (``Layout.fts``).
FTS_MESSAGES = "messages"  # v1–v10: one column read back from messages.content
FTS_INLINE = "inline"  # v11–v22: one column holding its own copy of content, tool name, calls
FTS_VIEW = "view"  # v23+: three columns read through the view messages_fts_src

MODEL_USAGE_KEY = (
    "session_id",
    "model",
    "billing_provider",
    "billing_base_url",
    "billing_mode",
    "task",
)


@dataclass(frozen=True)
class Index:
    """A CREATE INDEX statement and the columns it needs (a layout without them skips it)."""

    sql: str
    table: str
    columns: tuple[str, ...]


@dataclass(frozen=True)
class Layout:
    name: str
    schema_version: int | None  # None: no schema_version table at all
    sessions: tuple[Column, ...]
    messages: tuple[Column, ...]
    model_usage: tuple[Column, ...] = ()  # empty: no session_model_usage table
    model_usage_key: tuple[str, ...] = MODEL_USAGE_KEY
    daily_usage: tuple[Column, ...] = ()  # empty: no session_daily_usage table
    system_prompts: bool = False
    state_meta: bool = False
    fts: str | None = FTS_INLINE  # None: no full-text table
    trigram: bool = False
    cjk: bool = False  # an unloadable messages_fts_cjk is planted
    indexes: tuple[Index, ...] = ()
    # What a random layout left out of the current one, for test ids and reports.
    removed: tuple[str, ...] = field(default=(), compare=False)

    def columns(self, table: str) -> tuple[str, ...]:
        cols = {
            "sessions": self.sessions,
            "messages": self.messages,
            "session_model_usage": self.model_usage,
            "session_daily_usage": self.daily_usage,
        }.get(table, ())
        return tuple(c.name for c in cols)

    def has(self, table: str, column: str | None = None) -> bool:
        if column is not None:
            return column in self.columns(table)
        return table in self.tables

    @property
    def tables(self) -> frozenset[str]:
        present = {
            "sessions": True,
            "messages": True,
            "schema_version": self.schema_version is not None,
            "session_model_usage": bool(self.model_usage),
            "session_daily_usage": bool(self.daily_usage),
            "system_prompts": self.system_prompts,
            "state_meta": self.state_meta,
            "messages_fts": self.fts is not None,
            "messages_fts_trigram": self.fts is not None and self.trigram,
            "messages_fts_cjk": self.cjk,
        }
        return frozenset(name for name, there in present.items() if there)

    def usable_indexes(self) -> tuple[Index, ...]:
        return tuple(i for i in self.indexes if all(self.has(i.table, c) for c in i.columns))


# --- The shapes -------------------------------------------------------------------------

_DOC_INDEXES = (
    Index(
        "CREATE INDEX idx_sessions_started_at ON sessions (started_at DESC)",
        "sessions",
        ("started_at",),
    ),
    Index("CREATE INDEX idx_sessions_source ON sessions (source)", "sessions", ("source",)),
    Index(
        "CREATE INDEX idx_messages_session_timestamp ON messages (session_id, timestamp)",
        "messages",
        ("session_id", "timestamp"),
    ),
)
_LEGACY_INDEXES = (
    Index(
        "CREATE INDEX idx_sessions_parent ON sessions (parent_session_id)",
        "sessions",
        ("parent_session_id",),
    ),
    Index(
        "CREATE INDEX idx_sessions_source_id ON sessions (source, id)", "sessions", ("source", "id")
    ),
    # Titles are unique when not NULL, as Hermes enforces.
    Index(
        "CREATE UNIQUE INDEX idx_sessions_title_unique ON sessions (title) WHERE title IS NOT NULL",
        "sessions",
        ("title",),
    ),
    Index(
        "CREATE INDEX idx_messages_session_id ON messages (session_id, id)",
        "messages",
        ("session_id", "id"),
    ),
)
_CURRENT_INDEXES = (
    Index(
        "CREATE INDEX idx_sessions_session_key ON sessions (session_key, started_at)",
        "sessions",
        ("session_key", "started_at"),
    ),
    Index(
        "CREATE INDEX idx_sessions_route ON sessions"
        " (source, user_id, chat_id, chat_type, thread_id, started_at)",
        "sessions",
        ("source", "user_id", "chat_id", "chat_type", "thread_id", "started_at"),
    ),
    Index(
        "CREATE INDEX idx_sessions_last_activity ON sessions"
        " (COALESCE(last_activity_at, started_at))",
        "sessions",
        ("last_activity_at", "started_at"),
    ),
    Index(
        "CREATE INDEX idx_messages_tool_calls ON messages (session_id, id)"
        " WHERE role = 'assistant' AND tool_calls IS NOT NULL",
        "messages",
        ("session_id", "id", "role", "tool_calls"),
    ),
    Index(
        "CREATE INDEX idx_messages_session_active_timestamp ON messages"
        " (session_id, active, timestamp)",
        "messages",
        ("session_id", "active", "timestamp"),
    ),
)


def _shape_layout(shape: str) -> Layout:
    age = rank(shape)

    def pick(columns: tuple[Column, ...]) -> tuple[Column, ...]:
        return tuple(c for c in columns if rank(c.since) <= age)

    current = shape == "current"
    return Layout(
        name=shape,
        schema_version=SCHEMA_VERSIONS[shape],
        sessions=pick(SESSIONS_COLUMNS),
        messages=pick(MESSAGES_COLUMNS),
        model_usage=pick(SESSION_MODEL_USAGE_COLUMNS),
        daily_usage=pick(SESSION_DAILY_USAGE_COLUMNS),
        system_prompts=current,
        state_meta=current,
        fts=FTS_VIEW if current else FTS_INLINE,
        trigram=current,
        cjk=current,
        indexes=_DOC_INDEXES
        + (_LEGACY_INDEXES if age >= rank("legacy") else ())
        + (_CURRENT_INDEXES if current else ()),
    )


# --- Hermes releases --------------------------------------------------------------------

_V1_INDEXES = (
    Index("CREATE INDEX idx_sessions_source ON sessions (source)", "sessions", ("source",)),
    Index(
        "CREATE INDEX idx_sessions_parent ON sessions (parent_session_id)",
        "sessions",
        ("parent_session_id",),
    ),
    Index(
        "CREATE INDEX idx_sessions_started ON sessions (started_at DESC)",
        "sessions",
        ("started_at",),
    ),
    Index(
        "CREATE INDEX idx_messages_session ON messages (session_id, timestamp)",
        "messages",
        ("session_id", "timestamp"),
    ),
)
# v4: titles unique when set.
_V4_INDEXES = (*_V1_INDEXES, _LEGACY_INDEXES[2])
_V20_INDEXES = (
    *_V4_INDEXES,
    _LEGACY_INDEXES[1],
    _LEGACY_INDEXES[3],
    _CURRENT_INDEXES[0],
    _CURRENT_INDEXES[1],
)

_RELEASES: dict[str, Layout] = {
    "v1": Layout(
        name="v1",
        schema_version=1,
        sessions=releases.SESSIONS_V1,
        messages=releases.MESSAGES_V1,
        fts=FTS_MESSAGES,
        indexes=_V1_INDEXES,
    ),
    "v5": Layout(
        name="v5",
        schema_version=5,
        sessions=releases.SESSIONS_V5,
        messages=releases.MESSAGES_V5,
        fts=FTS_MESSAGES,
        indexes=_V4_INDEXES,
    ),
    "v10": Layout(
        name="v10",
        schema_version=10,
        sessions=releases.SESSIONS_V10,
        messages=releases.MESSAGES_V10,
        fts=FTS_MESSAGES,
        trigram=True,
        indexes=_V4_INDEXES,
    ),
    "v20": Layout(
        name="v20",
        schema_version=20,
        sessions=releases.SESSIONS_V20,
        messages=releases.MESSAGES_V10,
        model_usage=releases.MODEL_USAGE_V20,
        model_usage_key=releases.MODEL_USAGE_V20_KEY,
        fts=FTS_INLINE,
        trigram=True,
        indexes=_V20_INDEXES,
    ),
}

# Every named layout: the shapes, then the releases from the oldest.
LAYOUTS: dict[str, Layout] = {
    **{shape: _shape_layout(shape) for shape in SHAPES},
    **_RELEASES,
}
# The layouts docs/hermes-layouts.md describes, oldest first.
RELEASE_LAYOUTS = ("v1", "v5", "v10", "v20", "current")


def get_layout(layout: str | Layout) -> Layout:
    """The layout of that name (a Layout is returned as it is); ValueError when unknown."""
    if isinstance(layout, Layout):
        return layout
    if layout in LAYOUTS:
        return LAYOUTS[layout]
    if layout.startswith("random-") and layout[7:].isdigit():
        return random_layout(int(layout[7:]))
    if layout.startswith("drop-") and layout[5:].isdigit() and int(layout[5:]) < DROP_LAYOUTS:
        return drop_layout(int(layout[5:]))
    raise ValueError(
        f"unknown layout {layout!r}; expected one of {tuple(LAYOUTS)}, drop-N or random-N"
    )


# --- Random subsets of the current layout -----------------------------------------------

_ALWAYS = {
    "sessions": {c.name for c in releases.SESSIONS_V1},
    "messages": {c.name for c in releases.MESSAGES_V1},
}


def _without_some(
    rng: random.Random, table: str, columns: tuple[Column, ...], removed: list[str]
) -> tuple[Column, ...]:
    optional = [c.name for c in columns if c.name not in _ALWAYS[table]]
    # Any number from none to all: small and large removals are equally likely.
    drop = set(rng.sample(optional, rng.randint(0, len(optional))))
    removed.extend(f"{table}.{name}" for name in optional if name in drop)
    return tuple(c for c in columns if c.name not in drop)


def random_layout(seed: int) -> Layout:
    """The current layout without a random (seeded) subset of its optional parts.

    Optional are the columns the first release did not have, and every table but
    ``sessions`` and ``messages``; the full-text layout is drawn from all of Hermes's
    (or none).
    """
    rng = random.Random(seed)
    base = LAYOUTS["current"]
    removed: list[str] = []
    sessions = _without_some(rng, "sessions", base.sessions, removed)
    messages = _without_some(rng, "messages", base.messages, removed)

    def keep(table: str, chance: float = 0.6) -> bool:
        kept = rng.random() < chance
        if not kept:
            removed.append(table)
        return kept

    model_usage, key = base.model_usage, base.model_usage_key
    if not keep("session_model_usage"):
        model_usage = ()
    elif rng.random() < 0.3:  # the pre-v22 table, without the task column
        model_usage = tuple(c for c in model_usage if c.name != "task")
        key = tuple(k for k in key if k != "task")
        removed.append("session_model_usage.task")
    fts = rng.choices((FTS_VIEW, FTS_INLINE, FTS_MESSAGES, None), weights=(5, 2, 2, 1))[0]
    if fts != FTS_VIEW:
        removed.append(f"fts={fts}")
    layout = replace(
        base,
        name=f"random-{seed}",
        schema_version=base.schema_version if keep("schema_version", 0.8) else None,
        sessions=sessions,
        messages=messages,
        model_usage=model_usage,
        model_usage_key=key,
        daily_usage=base.daily_usage if keep("session_daily_usage") else (),
        system_prompts=keep("system_prompts"),
        state_meta=keep("state_meta"),
        fts=fts,
        trigram=fts is not None and keep("messages_fts_trigram"),
        cjk=keep("messages_fts_cjk", 0.5),
    )
    return replace(layout, removed=tuple(removed))


# --- Every optional part left out at least once ----------------------------------------------

# How many ``drop-N`` layouts share out the optional parts of the current layout.
DROP_LAYOUTS = 4
_FTS_BY_DROP = (None, FTS_INLINE, FTS_MESSAGES, FTS_VIEW)


def drop_layout(n: int) -> Layout:
    """The current layout without every ``DROP_LAYOUTS``-th optional column, starting at the
    ``n``-th, and a share of the optional tables: over ``drop-0`` … ``drop-3`` every optional
    column and table is left out at least once, and every full-text layout (and none) is used."""
    base = LAYOUTS["current"]
    removed: list[str] = []

    def without(table: str, columns: tuple[Column, ...]) -> tuple[Column, ...]:
        optional = [c.name for c in columns if c.name not in _ALWAYS[table]]
        drop = set(optional[n::DROP_LAYOUTS])
        removed.extend(f"{table}.{name}" for name in optional if name in drop)
        return tuple(c for c in columns if c.name not in drop)

    tables = (
        "session_model_usage",
        "session_daily_usage",
        "system_prompts",
        "state_meta",
        "schema_version",
        "messages_fts_trigram",
        "messages_fts_cjk",
        "session_model_usage.task",
    )
    gone = set(tables[n::DROP_LAYOUTS])
    removed.extend(sorted(gone))
    model_usage, key = base.model_usage, base.model_usage_key
    if "session_model_usage" in gone:
        model_usage = ()
    elif "session_model_usage.task" in gone:
        model_usage = tuple(c for c in model_usage if c.name != "task")
        key = tuple(k for k in key if k != "task")
    fts = _FTS_BY_DROP[n % len(_FTS_BY_DROP)]
    if fts != FTS_VIEW:
        removed.append(f"fts={fts}")
    layout = replace(
        base,
        name=f"drop-{n}",
        schema_version=None if "schema_version" in gone else base.schema_version,
        sessions=without("sessions", base.sessions),
        messages=without("messages", base.messages),
        model_usage=model_usage,
        model_usage_key=key,
        daily_usage=() if "session_daily_usage" in gone else base.daily_usage,
        system_prompts="system_prompts" not in gone,
        state_meta="state_meta" not in gone,
        fts=fts,
        trigram=fts is not None and "messages_fts_trigram" not in gone,
        cjk="messages_fts_cjk" not in gone,
    )
    return replace(layout, removed=tuple(removed))
