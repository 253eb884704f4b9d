"""The columns of each Hermes table, each declared once with the first shape that has it.

An older shape is always a prefix of a newer one, as it is on real files (Hermes only ever adds
columns with ``ALTER TABLE ADD COLUMN``).
"""

from __future__ import annotations

from typing import NamedTuple

SHAPES = ("doc", "legacy", "current")
SCHEMA_VERSIONS = {"doc": 12, "legacy": 21, "current": 31}


class Column(NamedTuple):
    name: str
    decl: str
    since: str  # first shape that has the column


def rank(shape: str) -> int:
    """The age of ``shape`` (0 is the oldest); raises ValueError for an unknown name."""
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; expected one of {SHAPES}")
    return SHAPES.index(shape)


SESSIONS_COLUMNS: tuple[Column, ...] = (
    Column("id", "TEXT PRIMARY KEY", "doc"),
    Column("source", "TEXT NOT NULL", "doc"),
    Column("user_id", "TEXT", "doc"),
    Column("model", "TEXT", "doc"),
    Column("title", "TEXT", "doc"),
    Column("started_at", "REAL NOT NULL", "doc"),
    Column("ended_at", "REAL", "doc"),
    Column("message_count", "INTEGER DEFAULT 0", "doc"),
    Column("input_tokens", "INTEGER DEFAULT 0", "doc"),
    Column("output_tokens", "INTEGER DEFAULT 0", "doc"),
    Column("estimated_cost_usd", "REAL", "doc"),
    # Lineage and route (legacy files already have them).
    Column("model_config", "TEXT", "legacy"),
    Column("system_prompt", "TEXT", "legacy"),
    Column("parent_session_id", "TEXT", "legacy"),
    Column("end_reason", "TEXT", "legacy"),
    # Billing.
    Column("tool_call_count", "INTEGER DEFAULT 0", "legacy"),
    Column("api_call_count", "INTEGER DEFAULT 0", "legacy"),
    Column("cache_read_tokens", "INTEGER DEFAULT 0", "legacy"),
    Column("cache_write_tokens", "INTEGER DEFAULT 0", "legacy"),
    Column("reasoning_tokens", "INTEGER DEFAULT 0", "legacy"),
    Column("billing_provider", "TEXT", "legacy"),
    Column("billing_base_url", "TEXT", "legacy"),
    Column("billing_mode", "TEXT", "legacy"),
    Column("actual_cost_usd", "REAL", "legacy"),
    Column("cost_status", "TEXT", "legacy"),
    Column("cost_source", "TEXT", "legacy"),
    Column("pricing_version", "TEXT", "legacy"),
    # v22+ additions, all present in current files.
    Column("system_prompt_hash", "TEXT", "current"),
    Column("title_source", "TEXT", "current"),
    Column("last_activity_at", "REAL", "current"),
    Column("archived", "INTEGER NOT NULL DEFAULT 0", "current"),
    Column("auto_archived", "INTEGER NOT NULL DEFAULT 0", "current"),
    Column("pinned", "INTEGER NOT NULL DEFAULT 0", "current"),
    Column("hidden", "INTEGER NOT NULL DEFAULT 0", "current"),
    Column("profile_name", "TEXT", "current"),
    Column("created_source", "TEXT", "current"),
    Column("session_key", "TEXT", "current"),
    Column("chat_id", "TEXT", "current"),
    Column("chat_type", "TEXT", "current"),
    Column("thread_id", "TEXT", "current"),
    Column("display_name", "TEXT", "current"),
    Column("origin_json", "TEXT", "current"),
    Column("cwd", "TEXT", "current"),
    Column("git_branch", "TEXT", "current"),
    Column("git_repo_root", "TEXT", "current"),
    # A handful of the operational columns readers never look at; they exist so that the
    # explorer is exercised against a wide row, as on real files.
    Column("handoff_state", "TEXT", "current"),
    Column("handoff_target", "TEXT", "current"),
    Column("handoff_requested_at", "REAL", "current"),
    Column("compression_count", "INTEGER DEFAULT 0", "current"),
    Column("compression_last_at", "REAL", "current"),
    Column("compression_tokens_before", "INTEGER", "current"),
    Column("compression_tokens_after", "INTEGER", "current"),
)

MESSAGES_COLUMNS: tuple[Column, ...] = (
    Column("id", "INTEGER PRIMARY KEY AUTOINCREMENT", "doc"),
    Column("session_id", "TEXT NOT NULL REFERENCES sessions(id)", "doc"),
    Column("role", "TEXT NOT NULL", "doc"),
    Column("content", "TEXT", "doc"),
    Column("tool_name", "TEXT", "doc"),
    Column("tool_calls", "TEXT", "doc"),
    Column("timestamp", "REAL NOT NULL", "doc"),
    Column("token_count", "INTEGER", "doc"),
    Column("reasoning", "TEXT", "doc"),
    Column("tool_call_id", "TEXT", "legacy"),
    Column("finish_reason", "TEXT", "legacy"),
    Column("reasoning_content", "TEXT", "current"),
    Column("reasoning_details", "TEXT", "current"),
    Column("codex_reasoning_items", "TEXT", "current"),
    Column("active", "INTEGER NOT NULL DEFAULT 1", "current"),
    Column("compacted", "INTEGER NOT NULL DEFAULT 0", "current"),
    Column("_compressed_summary", "INTEGER NOT NULL DEFAULT 0", "current"),
    Column("display_kind", "TEXT", "current"),
    Column("api_content", "TEXT", "current"),
    Column("display_metadata", "TEXT", "current"),
    Column("message_uid", "TEXT", "current"),
)

_USAGE_COUNTERS: tuple[Column, ...] = (
    Column("api_call_count", "INTEGER NOT NULL DEFAULT 0", "legacy"),
    Column("input_tokens", "INTEGER NOT NULL DEFAULT 0", "legacy"),
    Column("output_tokens", "INTEGER NOT NULL DEFAULT 0", "legacy"),
    Column("cache_read_tokens", "INTEGER NOT NULL DEFAULT 0", "legacy"),
    Column("cache_write_tokens", "INTEGER NOT NULL DEFAULT 0", "legacy"),
    Column("reasoning_tokens", "INTEGER NOT NULL DEFAULT 0", "legacy"),
    Column("estimated_cost_usd", "REAL", "legacy"),
    Column("actual_cost_usd", "REAL", "legacy"),
    Column("cost_status", "TEXT", "legacy"),
    Column("cost_source", "TEXT", "legacy"),
)

# The route columns are part of the primary key, so they are NOT NULL with '' for "none":
# SQLite would otherwise let NULLs make two "identical" keys distinct.
SESSION_MODEL_USAGE_COLUMNS: tuple[Column, ...] = (
    Column("session_id", "TEXT NOT NULL", "legacy"),
    Column("model", "TEXT NOT NULL", "legacy"),
    Column("billing_provider", "TEXT NOT NULL DEFAULT ''", "legacy"),
    Column("billing_base_url", "TEXT NOT NULL DEFAULT ''", "legacy"),
    Column("billing_mode", "TEXT NOT NULL DEFAULT ''", "legacy"),
    Column("task", "TEXT NOT NULL DEFAULT ''", "legacy"),
    *_USAGE_COUNTERS,
    Column("first_seen", "REAL", "legacy"),
    Column("last_seen", "REAL", "legacy"),
)

SESSION_DAILY_USAGE_COLUMNS: tuple[Column, ...] = (
    Column("session_id", "TEXT NOT NULL", "current"),
    Column("day", "TEXT NOT NULL", "current"),
    *(c._replace(since="current") for c in _USAGE_COUNTERS),
)
