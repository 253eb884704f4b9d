"""CREATE TABLE and CREATE INDEX statements of each shape (the full-text layout is in
:mod:`.fts`)."""

from __future__ import annotations

from .columns import (
    MESSAGES_COLUMNS,
    SCHEMA_VERSIONS,
    SESSION_DAILY_USAGE_COLUMNS,
    SESSION_MODEL_USAGE_COLUMNS,
    SESSIONS_COLUMNS,
    columns_sql,
    rank,
)


def tables_sql(shape: str) -> list[str]:
    statements = [
        "CREATE TABLE schema_version (version INTEGER NOT NULL)",
        f"INSERT INTO schema_version (version) VALUES ({SCHEMA_VERSIONS[shape]})",
        f"CREATE TABLE sessions (\n    {columns_sql(SESSIONS_COLUMNS, shape)}\n)",
        f"CREATE TABLE messages (\n    {columns_sql(MESSAGES_COLUMNS, shape)}\n)",
    ]
    if rank(shape) >= rank("legacy"):
        statements.append(
            "CREATE TABLE session_model_usage (\n"
            f"    {columns_sql(SESSION_MODEL_USAGE_COLUMNS, shape)},\n"
            "    PRIMARY KEY (session_id, model, billing_provider, billing_base_url,"
            " billing_mode, task)\n)"
        )
    if shape == "current":
        statements += [
            "CREATE TABLE system_prompts (hash TEXT PRIMARY KEY, prompt TEXT NOT NULL)",
            "CREATE TABLE session_daily_usage (\n"
            f"    {columns_sql(SESSION_DAILY_USAGE_COLUMNS, shape)},\n"
            "    PRIMARY KEY (session_id, day)\n)",
            "CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT)",
        ]
    return statements


def indexes_sql(shape: str) -> list[str]:
    statements = [
        "CREATE INDEX idx_sessions_started_at ON sessions (started_at DESC)",
        "CREATE INDEX idx_sessions_source ON sessions (source)",
        "CREATE INDEX idx_messages_session_timestamp ON messages (session_id, timestamp)",
    ]
    if rank(shape) >= rank("legacy"):
        statements += [
            "CREATE INDEX idx_sessions_parent ON sessions (parent_session_id)",
            "CREATE INDEX idx_sessions_source_id ON sessions (source, id)",
            # Titles are unique when not NULL, as Hermes enforces.
            "CREATE UNIQUE INDEX idx_sessions_title_unique ON sessions (title)"
            " WHERE title IS NOT NULL",
            "CREATE INDEX idx_messages_session_id ON messages (session_id, id)",
        ]
    if shape == "current":
        statements += [
            "CREATE INDEX idx_sessions_session_key ON sessions (session_key, started_at)",
            "CREATE INDEX idx_sessions_route ON sessions"
            " (source, user_id, chat_id, chat_type, thread_id, started_at)",
            "CREATE INDEX idx_sessions_last_activity ON sessions"
            " (COALESCE(last_activity_at, started_at))",
            "CREATE INDEX idx_messages_tool_calls ON messages (session_id, id)"
            " WHERE role = 'assistant' AND tool_calls IS NOT NULL",
            "CREATE INDEX idx_messages_session_active_timestamp ON messages"
            " (session_id, active, timestamp)",
        ]
    return statements
