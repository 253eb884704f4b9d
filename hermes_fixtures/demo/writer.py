"""Writing the demo's rows: ``executemany`` in big batches, sessions before their messages,
with counts of what was written and progress reports."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from typing import Any

Progress = Callable[[str], None]


class BatchWriter:
    """Collects rows per table and writes them when a batch is full (or on :meth:`flush`)."""

    BATCH_MESSAGES = 25_000
    BATCH_BYTES = 96 * 1024 * 1024

    def __init__(
        self, conn: sqlite3.Connection, tables: tuple[str, ...], progress: Progress | None
    ) -> None:
        self.conn, self.progress = conn, progress
        # Values go in in the file's own column order, whatever the shape.
        self.cols = {t: self._ordered_columns(t) for t in tables}
        self.pending: dict[str, list[tuple[Any, ...]]] = {t: [] for t in self.cols}
        self.pending_bytes = 0
        self.counts = {
            "sessions": 0,
            "messages": 0,
            "tool_calls": 0,
            "model_usage_rows": 0,
            "daily_usage_rows": 0,
        }
        self.by_source: dict[str, int] = {}
        self.started = time.monotonic()

    def _ordered_columns(self, table: str) -> list[str]:
        return [row[1] for row in self.conn.execute(f"PRAGMA table_info({table})")]

    def system_prompt(self, digest: str, prompt: str) -> None:
        """A ``system_prompts`` row, written at once (each prompt is written only once)."""
        self.conn.execute(
            "INSERT INTO system_prompts (hash, prompt) VALUES (?, ?)", (digest, prompt)
        )

    def add(self, table: str, row: dict[str, Any]) -> None:
        self.pending[table].append(tuple(map(row.get, self.cols[table])))

    def session(
        self,
        srow: dict[str, Any],
        rows: list[dict[str, Any]],
        model_usage: list[dict[str, Any]],
        daily_usage: list[dict[str, Any]],
        tool_calls: int,
    ) -> None:
        """One session with its messages and usage rows; flushes when a batch is full."""
        self.add("sessions", srow)
        for r in rows:
            self.add("messages", r)
            self.pending_bytes += len(r["content"]) if r["content"] else 0
        for row in model_usage:
            self.add("session_model_usage", row)
        self.counts["model_usage_rows"] += len(model_usage)
        for row in daily_usage:
            self.add("session_daily_usage", row)
        self.counts["daily_usage_rows"] += len(daily_usage)
        self.counts["sessions"] += 1
        self.counts["messages"] += len(rows)
        self.counts["tool_calls"] += tool_calls
        source = srow["source"]
        self.by_source[source] = self.by_source.get(source, 0) + 1
        if (
            len(self.pending["messages"]) >= self.BATCH_MESSAGES
            or self.pending_bytes >= self.BATCH_BYTES
        ):
            self.flush()

    def flush(self) -> None:
        # Sessions first: the current shape's trigram trigger looks up the session's source.
        for table in ("sessions", "messages", "session_model_usage", "session_daily_usage"):
            rows = self.pending.get(table)
            if not rows:
                continue
            cols = self.cols[table]
            sql = f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
            self.conn.executemany(sql, rows)
            rows.clear()
        self.conn.commit()
        self.pending_bytes = 0
        if self.progress:
            self.progress(
                f"{self.counts['sessions']:,} sessions, {self.counts['messages']:,} messages "
                f"({time.monotonic() - self.started:.0f}s)"
            )
