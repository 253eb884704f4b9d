"""What Hermes's own releases put in ``sessions`` and ``messages``, one schema version at a time.

The first release wrote a small table of each; later releases added columns with
``ALTER TABLE ADD COLUMN`` (so a file made by an old release and opened by a newer one has
the newer columns at the end). A file *created* by a release declares them in the order its
``CREATE TABLE`` lists them, which is the order used here. The facts come from the release
history written up in ``docs/hermes-layouts.md``; the statements are our own.
"""

from __future__ import annotations

from .columns import Column

SESSIONS_V1: tuple[Column, ...] = (
    Column("id", "TEXT PRIMARY KEY", "v1"),
    Column("source", "TEXT NOT NULL", "v1"),
    Column("user_id", "TEXT", "v1"),
    Column("model", "TEXT", "v1"),
    Column("model_config", "TEXT", "v1"),
    Column("system_prompt", "TEXT", "v1"),
    Column("parent_session_id", "TEXT", "v1"),
    Column("started_at", "REAL NOT NULL", "v1"),
    Column("ended_at", "REAL", "v1"),
    Column("end_reason", "TEXT", "v1"),
    Column("message_count", "INTEGER DEFAULT 0", "v1"),
    Column("tool_call_count", "INTEGER DEFAULT 0", "v1"),
    Column("input_tokens", "INTEGER DEFAULT 0", "v1"),
    Column("output_tokens", "INTEGER DEFAULT 0", "v1"),
)

# v5: token detail and cost tracking.
SESSIONS_V5_BILLING: tuple[Column, ...] = (
    Column("cache_read_tokens", "INTEGER DEFAULT 0", "v5"),
    Column("cache_write_tokens", "INTEGER DEFAULT 0", "v5"),
    Column("reasoning_tokens", "INTEGER DEFAULT 0", "v5"),
    Column("billing_provider", "TEXT", "v5"),
    Column("billing_base_url", "TEXT", "v5"),
    Column("billing_mode", "TEXT", "v5"),
    Column("estimated_cost_usd", "REAL", "v5"),
    Column("actual_cost_usd", "REAL", "v5"),
    Column("cost_status", "TEXT", "v5"),
    Column("cost_source", "TEXT", "v5"),
    Column("pricing_version", "TEXT", "v5"),
)

# v3 added the title; a v5 file lists it after the billing columns.
SESSIONS_V5: tuple[Column, ...] = (
    *SESSIONS_V1,
    *SESSIONS_V5_BILLING,
    Column("title", "TEXT", "v3"),
)

# v8: API calls per session.
SESSIONS_V10: tuple[Column, ...] = (
    *SESSIONS_V5,
    Column("api_call_count", "INTEGER DEFAULT 0", "v8"),
)

# Gateway routing, backfilled from the gateway's own index by v18.
SESSIONS_V20: tuple[Column, ...] = (
    *SESSIONS_V10,
    Column("session_key", "TEXT", "v18"),
    Column("chat_id", "TEXT", "v18"),
    Column("chat_type", "TEXT", "v18"),
    Column("thread_id", "TEXT", "v18"),
    Column("display_name", "TEXT", "v18"),
    Column("origin_json", "TEXT", "v18"),
)

MESSAGES_V1: tuple[Column, ...] = (
    Column("id", "INTEGER PRIMARY KEY AUTOINCREMENT", "v1"),
    Column("session_id", "TEXT NOT NULL REFERENCES sessions(id)", "v1"),
    Column("role", "TEXT NOT NULL", "v1"),
    Column("content", "TEXT", "v1"),
    Column("tool_call_id", "TEXT", "v1"),
    Column("tool_calls", "TEXT", "v1"),
    Column("tool_name", "TEXT", "v1"),
    Column("timestamp", "REAL NOT NULL", "v1"),
    Column("token_count", "INTEGER", "v1"),
)

MESSAGES_V5: tuple[Column, ...] = (*MESSAGES_V1, Column("finish_reason", "TEXT", "v2"))

MESSAGES_V10: tuple[Column, ...] = (
    *MESSAGES_V5,
    Column("reasoning", "TEXT", "v6"),
    Column("reasoning_details", "TEXT", "v6"),
    Column("codex_reasoning_items", "TEXT", "v6"),
    Column("reasoning_content", "TEXT", "v7"),
    Column("codex_message_items", "TEXT", "v9"),
)

# v20's per-model usage, before v22 made ``task`` part of the key.
MODEL_USAGE_V20: tuple[Column, ...] = (
    Column("session_id", "TEXT NOT NULL", "v20"),
    Column("model", "TEXT NOT NULL", "v20"),
    Column("billing_provider", "TEXT NOT NULL DEFAULT ''", "v20"),
    Column("billing_base_url", "TEXT NOT NULL DEFAULT ''", "v20"),
    Column("billing_mode", "TEXT NOT NULL DEFAULT ''", "v20"),
    Column("api_call_count", "INTEGER NOT NULL DEFAULT 0", "v20"),
    Column("input_tokens", "INTEGER NOT NULL DEFAULT 0", "v20"),
    Column("output_tokens", "INTEGER NOT NULL DEFAULT 0", "v20"),
    Column("cache_read_tokens", "INTEGER NOT NULL DEFAULT 0", "v20"),
    Column("cache_write_tokens", "INTEGER NOT NULL DEFAULT 0", "v20"),
    Column("reasoning_tokens", "INTEGER NOT NULL DEFAULT 0", "v20"),
    Column("estimated_cost_usd", "REAL", "v20"),
    Column("actual_cost_usd", "REAL", "v20"),
    Column("cost_status", "TEXT", "v20"),
    Column("cost_source", "TEXT", "v20"),
    Column("first_seen", "REAL", "v20"),
    Column("last_seen", "REAL", "v20"),
)
MODEL_USAGE_V20_KEY = (
    "session_id",
    "model",
    "billing_provider",
    "billing_base_url",
    "billing_mode",
)
