"""Small explicit builders of Hermes ``state.db`` files for tests (no mocks).

Files are made with the project's own DDL (:mod:`hermes_fixtures.ddl`), so every layout
(the shapes, Hermes's release layouts, random subsets of the current one) has its real tables,
indexes, FTS layout and triggers: rows inserted here are searchable.

``StateDB`` inserts one row per call. Columns the layout does not have are dropped silently
(and so are calls on tables the layout lacks), so one fixture script can build every layout::

    db = StateDB.create(tmp_path / "state.db", "legacy")
    db.session("s1", source="telegram", title="Hello")
    db.message("s1", "user", "hi there")
    db.message("s1", "assistant", None, tool_calls=[tool_call("terminal", {"command": "ls"})])
    db.close()

``build_nasty_db`` builds the standard fixture of the page tests, the same on every layout as
far as the layout allows, and returns :class:`NastyFacts`: the ids the tests need.
All times are fixed offsets from ``now`` (``NASTY_NOW`` by default), so results are
deterministic.
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass
from typing import Any

from hermes_fixtures.ddl import Layout, create_schema, get_layout
from hermes_fixtures.demo.usage import local_day

NASTY_NOW = 1_767_225_600.0  # 2026-01-01 00:00:00 UTC
DAY = 86_400.0
HOUR = 3_600.0

# JSON-valued columns: a list or dict passed for them is stored as JSON text.
_JSON_COLUMNS = {
    "tool_calls",
    "model_config",
    "origin_json",
    "reasoning_details",
    "codex_reasoning_items",
    "display_metadata",
}


def insert_columns(conn: sqlite3.Connection, table: str) -> set[str]:
    """Names of the columns ``table`` has on this file (``PRAGMA table_info``)."""
    return {row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')}


def table_names(conn: sqlite3.Connection) -> set[str]:
    """Tables and views named in ``sqlite_master`` (safe: opens none of them)."""
    return {
        row[0]
        for row in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
    }


def tool_call(name: str, arguments: dict[str, Any], call_id: str | None = None) -> dict[str, Any]:
    """One entry of ``messages.tool_calls`` as Hermes stores it (arguments as a JSON string)."""
    return {
        "id": call_id or f"call_{name}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


class StateDB:
    """A state.db being written by a test, one explicit row at a time."""

    DEFAULT_STARTED_AT = NASTY_NOW - DAY

    def __init__(self, conn: sqlite3.Connection, shape: str, path: str) -> None:
        self.conn = conn
        self.shape = shape  # the layout's name
        self.path = path
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        self.columns = {
            table: insert_columns(conn, table)
            for table in (
                "sessions",
                "messages",
                "session_model_usage",
                "session_daily_usage",
                "state_meta",
                "system_prompts",
            )
            if table in tables
        }
        # Default message times: each session's clock advances 10 s per message.
        self._clock: dict[str, float] = {}

    @classmethod
    def create(cls, path: str | os.PathLike[str], layout: str | Layout) -> StateDB:
        """A new file of ``layout``: a shape, a release layout, ``random-N`` or a Layout."""
        path = os.fspath(path)
        if os.path.exists(path):
            raise FileExistsError(path)
        lay = get_layout(layout)
        conn = sqlite3.connect(path)
        create_schema(conn, lay)
        return cls(conn, lay.name, path)

    def has(self, table: str, column: str | None = None) -> bool:
        """Whether this layout has ``table`` (and ``column`` in it)."""
        cols = self.columns.get(table)
        return cols is not None and (column is None or column in cols)

    def _insert(self, table: str, values: dict[str, Any]) -> int | None:
        if table not in self.columns:
            return None
        kept = {
            k: json.dumps(v, ensure_ascii=False)
            if k in _JSON_COLUMNS and isinstance(v, list | dict)
            else v
            for k, v in values.items()
            if k in self.columns[table]
        }
        names = ", ".join(kept)
        marks = ", ".join("?" * len(kept))
        cur = self.conn.execute(
            f"INSERT INTO {table} ({names}) VALUES ({marks})", tuple(kept.values())
        )
        return cur.lastrowid

    def session(self, id: str, **cols: Any) -> str:
        """Insert a session; defaults: source 'cli', a fixed ``started_at``, counters 0."""
        values: dict[str, Any] = {
            "id": id,
            "source": "cli",
            "started_at": self.DEFAULT_STARTED_AT,
            "message_count": 0,
            "tool_call_count": 0,
            "api_call_count": 0,
            "input_tokens": 0,
            "output_tokens": 0,
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
            "reasoning_tokens": 0,
        }
        values.update(cols)
        self._insert("sessions", values)
        self._clock[id] = values["started_at"]
        return id

    def message(self, session_id: str, role: str, content: str | None = None, **cols: Any) -> int:
        """Insert a message and return its id; ``timestamp`` defaults to the session clock."""
        if "timestamp" not in cols:
            cols["timestamp"] = self._clock.get(session_id, self.DEFAULT_STARTED_AT) + 10
        self._clock[session_id] = cols["timestamp"]
        if "token_count" not in cols:
            cols["token_count"] = len(content or "") // 4
        message_id = self._insert(
            "messages", {"session_id": session_id, "role": role, "content": content, **cols}
        )
        assert message_id is not None
        return message_id

    def model_usage(self, session_id: str, model: str, task: str = "", **cols: Any) -> None:
        """A ``session_model_usage`` row (ignored on layouts without that table)."""
        values = {
            "session_id": session_id,
            "model": model,
            "task": task,
            "billing_provider": "",
            "billing_base_url": "",
            "billing_mode": "",
        }
        self._insert("session_model_usage", {**values, **cols})

    def daily_usage(self, session_id: str, day: str, **cols: Any) -> None:
        """A ``session_daily_usage`` row (ignored on layouts without that table)."""
        self._insert("session_daily_usage", {"session_id": session_id, "day": day, **cols})

    def meta(self, key: str, value: str) -> None:
        """A ``state_meta`` row (ignored on layouts without that table)."""
        self._insert("state_meta", {"key": key, "value": value})

    def system_prompt(self, hash: str, prompt: str) -> None:
        """A ``system_prompts`` row (ignored on layouts without that table)."""
        self._insert("system_prompts", {"hash": hash, "prompt": prompt})

    def refresh_counters(self, session_id: str | None = None) -> None:
        """Set ``message_count`` (and ``tool_call_count``, ``api_call_count`` where they exist)
        from the messages, like Hermes's own bookkeeping: all rows count, tool calls are the
        entries of valid ``tool_calls`` JSON lists, API calls are assistant rows."""
        sets = [
            "message_count = (SELECT count(*) FROM messages m WHERE m.session_id = sessions.id)"
        ]
        if self.has("sessions", "tool_call_count"):
            sets.append(
                "tool_call_count = (SELECT coalesce(sum(json_array_length(m.tool_calls)), 0)"
                " FROM messages m WHERE m.session_id = sessions.id AND m.role = 'assistant'"
                # CASE, not AND: SQLite may evaluate json_type() on invalid JSON and fail.
                " AND CASE WHEN json_valid(m.tool_calls)"
                " THEN json_type(m.tool_calls) = 'array' ELSE 0 END)"
            )
        if self.has("sessions", "api_call_count"):
            sets.append(
                "api_call_count = (SELECT count(*) FROM messages m"
                " WHERE m.session_id = sessions.id AND m.role = 'assistant')"
            )
        where, params = ("WHERE id = ?", (session_id,)) if session_id else ("", ())
        self.conn.execute(f"UPDATE sessions SET {', '.join(sets)} {where}", params)

    def commit(self) -> None:
        self.conn.commit()

    def close(self) -> None:
        self.conn.commit()
        self.conn.close()

    def __enter__(self) -> StateDB:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --- The nasty fixture -------------------------------------------------------------------


@dataclass(frozen=True)
class ToolPair:
    """An assistant tool call and the ``tool`` row that answers it."""

    call_id: str
    name: str
    assistant_message_id: int
    tool_message_id: int


@dataclass(frozen=True)
class NastyFacts:
    """What ``build_nasty_db`` put where. Ids are the same on every shape unless noted."""

    path: str
    shape: str  # the layout's name
    now: float
    session_ids: tuple[str, ...]  # every session, in insertion order
    message_count: int  # rows in messages
    # Hostile markup: the title and a message carry payloads that must be escaped.
    xss_session_id: str
    xss_title: str
    xss_message_id: int
    xss_payloads: tuple[str, ...]
    # CJK, Arabic, Hebrew and emoji in title and contents.
    unicode_session_id: str
    unicode_title: str
    untitled_session_id: str  # title NULL
    open_session_id: str  # ended_at NULL
    negative_duration_session_id: str  # ended_at < started_at
    old_session_id: str  # 75 days before now: outside 30-day windows
    # Tool calls answered by tool rows (one with tool_name NULL, CLI style), skill use and a
    # model switch (two main-loop usage rows) in one session.
    tool_session_id: str
    tool_pairs: tuple[ToolPair, ...]
    null_tool_name_message_id: int
    skill_name: str
    switched_models: tuple[str, str]
    megabyte_session_id: str
    megabyte_message_id: int
    megabyte_bytes: int
    # A word only after the first 8,192 characters of the megabyte output: the current
    # shape's FTS does not index it, the inline layouts do.
    megabyte_tail_word: str
    malformed_session_id: str
    malformed_message_ids: tuple[int, ...]  # tool_calls that are not valid JSON lists
    chain_ids: tuple[str, str, str]  # root -> middle -> tip (compression); lineage not in doc
    big_session_id: str
    big_session_messages: int
    multimodal_session_id: str
    multimodal_message_id: int
    cron_session_id: str
    subagent_session_id: str  # delegated from tool_session_id
    rare_word: str
    rare_message_id: int
    rare_session_id: str
    common_word: str
    common_word_message_ids: tuple[int, ...]  # every message whose indexed text has it
    # History edits (on layouts with the visibility columns; None / empty on the others).
    history_session_id: str
    hidden_message_id: int | None
    compacted_message_ids: tuple[int, ...]
    rewound_message_ids: tuple[int, ...]
    summary_message_id: int | None


_XSS_TITLE = '<script>alert("title")</script> & <b>bold</b> plans'
_XSS_PAYLOADS = (
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '"><svg onload=alert(document.cookie)>',
)
_UNICODE_TITLE = "東京 🚀 مرحبا שלום 👩‍💻"
_LOREM = (
    "the quick review of the query plan shows a scan over the sessions table",
    "please check the backup job and the disk usage on the server",
    "the index on started_at makes the list page fast even on big files",
    "we should stream the export in pages instead of one long read",
    "the pull request adds tests for the search page and the transcript",
)


def build_nasty_db(
    path: str | os.PathLike[str],
    layout: str | Layout,
    *,
    now: float = NASTY_NOW,
    lean: bool = False,
) -> NastyFacts:
    """Build the standard nasty fixture at ``path`` for ``layout`` and say what is where.

    ``lean`` keeps every case but shrinks the two big ones (the "megabyte" tool output to
    about 20 KB, still past the FTS prefix, and the long session to 120 messages, still two
    transcript pages) for tests that request every page of many files.
    """
    db = StateDB.create(path, layout)
    shape = db.shape
    sessions: list[str] = []
    common: list[int] = []

    def session(sid: str, started_at: float, **cols: Any) -> str:
        sessions.append(db.session(sid, started_at=started_at, **cols))
        return sid

    # 1. Hostile markup in the title and the contents (telegram).
    xss = session(
        "20251230_101500_a1b2c3",
        now - 2 * DAY,
        source="telegram",
        user_id="5127340981",
        model="anthropic/claude-sonnet-4.5",
        title=_XSS_TITLE,
        ended_at=now - 2 * DAY + 600,
        end_reason="idle",
        input_tokens=1200,
        output_tokens=300,
        estimated_cost_usd=0.0081,
        cost_status="estimated",
        billing_provider="anthropic",
        billing_mode="official_docs_snapshot",
        chat_id="5127340981",
        chat_type="dm",
        display_name="Alice <b>",
        session_key="agent:main:telegram:dm:5127340981",
    )
    xss_message = db.message(xss, "user", f"look at this {_XSS_PAYLOADS[1]} from telegram")
    common.append(xss_message)
    db.message(xss, "assistant", f"That is an HTML payload: {_XSS_PAYLOADS[0]} {_XSS_PAYLOADS[2]}")
    db.message(xss, "user", "{{ 7*7 }} {% debug %} '; DROP TABLE sessions; --")
    common.append(db.message(xss, "assistant", "Posted the summary to the telegram group."))
    db.model_usage(
        xss,
        "anthropic/claude-sonnet-4.5",
        billing_provider="anthropic",
        billing_mode="official_docs_snapshot",
        api_call_count=2,
        input_tokens=1200,
        output_tokens=300,
        estimated_cost_usd=0.0081,
        cost_status="estimated",
    )
    db.model_usage(
        xss,
        "google/gemini-2.5-flash",
        task="title_generation",
        api_call_count=1,
        input_tokens=500,
        output_tokens=12,
        estimated_cost_usd=0.00018,
        cost_status="estimated",
    )

    # 2. CJK, RTL and emoji.
    uni = session(
        "20251229_093000_d4e5f6",
        now - 3 * DAY,
        source="cli",
        model="google/gemini-2.5-pro",
        title=_UNICODE_TITLE,
        ended_at=now - 3 * DAY + 900,
        end_reason="cli_close",
        input_tokens=800,
        output_tokens=200,
        cwd="/home/dev/src/東京",
        git_branch="main",
    )
    db.message(uni, "user", "请帮我检查一下服务器的日志。東京の天気は？ 데이터베이스 백업")
    db.message(uni, "assistant", "مرحبا، هذا ملخص السجلات. שלום, הכל תקין.")
    db.message(uni, "user", "👍🔥 family: 👨‍👩‍👧‍👦 flag: 🇯🇵 mixed: abc مرحبا def")
    db.message(uni, "assistant", "Done ✅")

    # 3. No title, never closed (discord).
    untitled = session(
        "20251231_220000_0a0b0c",
        now - 2 * HOUR,
        source="discord",
        user_id="318273645510098944",
        model="deepseek/deepseek-chat",
        title=None,
        ended_at=None,
    )
    db.message(untitled, "user", "are you there?")
    db.message(untitled, "assistant", "Yes, still here.")
    db.message(untitled, "user", "ok, later then")

    # 4. Clock drift: ended before it started (slack), and an unknown price.
    drift = session(
        "20251228_120000_1d2e3f",
        now - 4 * DAY,
        source="slack",
        user_id="U04AB12CD",
        model="hermes-4-70b",
        title="Clock drift",
        ended_at=now - 4 * DAY - 120,
        end_reason="idle",
        input_tokens=400,
        output_tokens=100,
        estimated_cost_usd=None,
        cost_status="unknown",
        billing_provider="custom",
        billing_mode="unknown",
    )
    db.message(drift, "user", "what time is it?")
    db.message(drift, "assistant", "My clock says it is earlier than when we started.")

    # 5. Tool calls paired with results, skills, a delegation and a model switch (cli).
    tools = session(
        "20251230_140000_7a8b9c",
        now - 2 * DAY + 4 * HOUR,
        source="cli",
        model="anthropic/claude-sonnet-4.5",
        title="Tidy the backup scripts",
        ended_at=now - DAY + 6 * HOUR,
        end_reason="user_exit",
        input_tokens=9000,
        output_tokens=1500,
        cache_read_tokens=20000,
        cache_write_tokens=3000,
        reasoning_tokens=200,
        estimated_cost_usd=0.06,
        actual_cost_usd=0.055,
        cost_status="actual",
        cost_source="provider_reported",
        billing_provider="openrouter",
        billing_base_url="https://openrouter.ai/api/v1",
        billing_mode="official_models_api",
        model_config={"model": "anthropic/claude-sonnet-4.5", "provider": "openrouter"},
        system_prompt="You are Hermes. " * 200,
        system_prompt_hash="hash-tools",
        cwd="/home/dev/src/infra",
        git_branch="main",
        git_repo_root="/home/dev/src/infra",
    )
    db.system_prompt("hash-tools", "You are Hermes. " * 200)
    rare_word = "quokkafjord"
    rare_message = db.message(tools, "user", f"Find the {rare_word} notes and tidy the scripts.")
    pairs: list[ToolPair] = []
    calls = [
        tool_call("terminal", {"command": "ls ~/notes"}, "call_term_1"),
        tool_call("read_file", {"path": "scripts/backup.sh"}, "call_read_1"),
    ]
    first = db.message(
        tools,
        "assistant",
        None,
        tool_calls=calls,
        finish_reason="tool_calls",
        reasoning="I should list the notes folder first.",
    )
    # CLI tool rows often lack tool_name.
    null_name = db.message(
        tools, "tool", "notes.md\nbackup.sh\n", tool_call_id="call_term_1", tool_name=None
    )
    pairs.append(ToolPair("call_term_1", "terminal", first, null_name))
    read = db.message(
        tools,
        "tool",
        "#!/bin/sh\nrsync -a ~/src /mnt/backup\n",
        tool_call_id="call_read_1",
        tool_name="read_file",
    )
    pairs.append(ToolPair("call_read_1", "read_file", first, read))
    skill = "github-pr-workflow"
    for name, args, call_id, output in (
        ("skill_view", {"name": skill}, "call_skill_1", f"# {skill}\n1. branch\n2. test\n"),
        ("skill_manage", {"action": "patch", "name": skill}, "call_skill_2", '{"success": true}'),
        ("delegate_task", {"goal": "check the mirror"}, "call_delegate_1", '{"status": "done"}'),
    ):
        ask = db.message(
            tools,
            "assistant",
            f"Using {name}.",
            tool_calls=[tool_call(name, args, call_id)],
            finish_reason="tool_calls",
        )
        answer = db.message(tools, "tool", output, tool_call_id=call_id, tool_name=name)
        pairs.append(ToolPair(call_id, name, ask, answer))
    # The user came back the next day (over 24 h later) on another model: two main-loop
    # usage rows that add up to the session counters, and two daily rows.
    db.message(
        tools,
        "assistant",
        "The scripts are tidy now.",
        finish_reason="stop",
        timestamp=now - DAY + 5 * HOUR,
    )
    switched = ("anthropic/claude-sonnet-4.5", "openai/gpt-5")
    first_day_usage = {
        "api_call_count": 4,
        "input_tokens": 6000,
        "output_tokens": 1000,
        "cache_read_tokens": 14000,
        "cache_write_tokens": 2000,
        "reasoning_tokens": 200,
        "estimated_cost_usd": 0.04,
        "actual_cost_usd": 0.037,
        "cost_status": "actual",
    }
    second_day_usage = {
        "api_call_count": 1,
        "input_tokens": 3000,
        "output_tokens": 500,
        "cache_read_tokens": 6000,
        "cache_write_tokens": 1000,
        "reasoning_tokens": 0,
        "estimated_cost_usd": 0.02,
        "actual_cost_usd": 0.018,
        "cost_status": "actual",
    }
    for model, usage, ts in (
        (switched[0], first_day_usage, now - 2 * DAY + 4 * HOUR),
        (switched[1], second_day_usage, now - DAY + 5 * HOUR),
    ):
        db.model_usage(
            tools,
            model,
            billing_provider="openrouter",
            billing_base_url="https://openrouter.ai/api/v1",
            billing_mode="official_models_api",
            **usage,
        )
        db.daily_usage(tools, local_day(ts), **usage)
    db.model_usage(
        tools,
        "google/gemini-2.5-flash",
        task="compression",
        api_call_count=1,
        input_tokens=30000,
        output_tokens=1200,
        estimated_cost_usd=0.012,
        cost_status="estimated",
    )

    # 6. A subagent delegated from the tool session.
    subagent = session(
        "20251230_150500_5e6f70",
        now - 2 * DAY + 5 * HOUR,
        source="subagent",
        user_id=None,
        model="openai/gpt-5-mini",
        title=None,
        parent_session_id=tools,
        model_config={"model": "openai/gpt-5-mini", "_delegate_from": tools},
        ended_at=now - 2 * DAY + 5 * HOUR + 300,
        end_reason="completed",
    )
    db.message(subagent, "user", "Check the mirror and report back.")
    db.message(subagent, "assistant", "The mirror is in sync.")

    # 7. A megabyte tool output.
    mega = session(
        "20251231_080000_8c9d0e",
        now - 16 * HOUR,
        source="cli",
        model="openai/gpt-5",
        title="Read the big log",
        ended_at=now - 15 * HOUR,
        end_reason="cli_close",
    )
    db.message(mega, "user", "cat the whole build log")
    ask = db.message(
        mega,
        "assistant",
        None,
        tool_calls=[tool_call("terminal", {"command": "cat build.log"}, "call_big_1")],
        finish_reason="tool_calls",
    )
    line = "2025-12-31T08:00:01Z INFO build step ok, cache hit ratio 0.97\n"
    tail_word = "zanzibarquux"
    big_output = line * ((20_000 if lean else 1_200_000) // len(line)) + f"final line {tail_word}\n"
    mega_message = db.message(
        mega, "tool", big_output, tool_call_id="call_big_1", tool_name="terminal"
    )
    db.message(mega, "assistant", "The build log is long but clean.")
    del ask

    # 8. Malformed tool_calls (api_server).
    malformed = session(
        "api-9f8e7d6c5b4a",
        now - 5 * DAY,
        source="api_server",
        user_id="workspace:alice",
        model="nousresearch/hermes-4-405b",
        title="Broken JSON",
        ended_at=now - 5 * DAY + 200,
        end_reason="idle",
    )
    db.message(malformed, "user", "run it")
    bad = (
        db.message(
            malformed,
            "assistant",
            None,
            tool_calls='[{"id": "call_x", "type": "function", "function": {"name": "terminal", '
            '"arguments": "{\\"command\\": \\"ls',
        ),
        db.message(
            malformed,
            "assistant",
            "retrying",
            tool_calls="[{'id': 'call_y', 'function': {'name': 'read_file'}}]",
        ),
        db.message(malformed, "assistant", None, tool_calls="tool_calls: terminal(ls)"),
    )
    db.message(malformed, "assistant", "Gave up on the tool, sorry.")

    # 9-11. A compression chain of three sessions, 40 days back (cli). The root predates
    # cost tracking and has no usage rows; the middle has a partial row (residual).
    chain: list[str] = []
    for i, sid in enumerate(
        ("20251122_090000_c0c0c0", "20251122_110000_c1c1c1", "20251122_130000_c2c2c2")
    ):
        start = now - 40 * DAY + i * 2 * HOUR
        session(
            sid,
            start,
            source="cli",
            model="anthropic/claude-opus-4.1",
            title=f"Migration plan, part {i + 1}",
            ended_at=start + 1.5 * HOUR,
            end_reason="compression" if i < 2 else "cli_close",
            parent_session_id=chain[-1] if chain else None,
            input_tokens=50_000,
            output_tokens=5_000,
            estimated_cost_usd=1.125 if i else None,
            cost_status=None if i == 0 else "estimated",
        )
        if chain:
            db.message(
                sid,
                "user",
                f"[CONTEXT SUMMARY] Continued from session {chain[-1]}.",
                _compressed_summary=1,
            )
        db.message(sid, "user", f"Let's continue the migration, step {i + 1}.")
        db.message(sid, "assistant", f"Step {i + 1} is done; the schema is migrated.")
        chain.append(sid)
    db.model_usage(
        chain[1],
        "anthropic/claude-opus-4.1",
        billing_provider="anthropic",
        api_call_count=1,
        input_tokens=20_000,
        output_tokens=2_000,
        estimated_cost_usd=0.45,
        cost_status="estimated",
    )
    db.model_usage(
        chain[2],
        "anthropic/claude-opus-4.1",
        billing_provider="anthropic",
        api_call_count=1,
        input_tokens=50_000,
        output_tokens=5_000,
        estimated_cost_usd=1.125,
        cost_status="estimated",
    )

    # 12. A long session for transcript pagination: 450 messages, 120 when lean (api_server).
    long_count = 120 if lean else 450
    big = session(
        "api-00b1ab1e5e55",
        now - 6 * DAY,
        source="api_server",
        user_id="workspace:bob",
        model="nousresearch/hermes-4-405b",
        title="Long planning session",
        ended_at=now - 6 * DAY + long_count * 30 + 60,
        end_reason="idle",
        input_tokens=90_000,
        output_tokens=22_500,
        estimated_cost_usd=0.0,
        cost_status="included",
        billing_provider="nous",
        billing_mode="subscription_included",
    )
    for i in range(long_count):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"{_LOREM[i % len(_LOREM)]} (turn {i // 2 + 1})"
        db.message(big, role, text, timestamp=now - 6 * DAY + i * 30)
    db.model_usage(
        big,
        "nousresearch/hermes-4-405b",
        billing_provider="nous",
        billing_mode="subscription_included",
        api_call_count=225,
        input_tokens=90_000,
        output_tokens=22_500,
        estimated_cost_usd=0.0,
        cost_status="included",
    )

    # 13. Multimodal user content (telegram photo).
    photo = session(
        "20251231_190000_ab12cd",
        now - 5 * HOUR,
        source="telegram",
        user_id="7012934455",
        model="google/gemini-2.5-pro",
        title="What is in this photo?",
        ended_at=now - 5 * HOUR + 120,
        end_reason="idle",
    )
    parts = [
        {"type": "text", "text": "What is in this photo? Sent from telegram."},
        {"type": "image_url", "image_url": {"url": "https://files.example.org/cat.jpg"}},
    ]
    multimodal = db.message(photo, "user", "\x00json:" + json.dumps(parts))
    common.append(multimodal)
    db.message(photo, "assistant", "A cat sleeping on a keyboard.")
    db.model_usage(
        photo,
        "google/gemini-2.5-flash",
        task="vision",
        api_call_count=1,
        input_tokens=1500,
        output_tokens=80,
        estimated_cost_usd=0.0007,
        cost_status="estimated",
    )

    # 14. A cron job (no user, no title) that reports to telegram.
    cron = session(
        "20251231_070000_c7c7c7",
        now - 17 * HOUR,
        source="cron",
        user_id=None,
        model="deepseek/deepseek-chat",
        title=None,
        ended_at=now - 17 * HOUR + 45,
        end_reason="completed",
    )
    db.message(cron, "user", "[Scheduled job] Summarise unread email.")
    common.append(db.message(cron, "assistant", "Digest posted to telegram: 3 new emails."))

    # 15. History edits, where the layout records them: compacted and rewound rows (with the
    # visibility columns), a summary row and a hidden note.
    history = session(
        "20251231_100000_e1e2e3",
        now - 14 * HOUR,
        source="cli",
        model="anthropic/claude-sonnet-4.5",
        title="Edited history",
        ended_at=now - 13 * HOUR,
        end_reason="cli_close",
    )
    hidden = summary = None
    compacted: list[int] = []
    rewound: list[int] = []
    visibility = db.has("messages", "active") and db.has("messages", "compacted")
    if visibility:
        compacted.append(db.message(history, "user", "first question", active=0, compacted=1))
        compacted.append(db.message(history, "assistant", "first answer", active=0, compacted=1))
    if db.has("messages", "_compressed_summary"):
        summary = db.message(
            history,
            "user",
            "[CONTEXT COMPACTION] Earlier: a first question and its answer.",
            _compressed_summary=1,
        )
    if visibility:
        db.message(history, "user", "first question")  # live copy of an archived row
    if db.has("messages", "display_kind"):
        hidden = db.message(
            history,
            "user",
            "[System note: continue the task.]",
            display_kind="hidden",
        )
    if visibility:
        rewound.append(db.message(history, "user", "do the wrong thing", active=0, compacted=0))
        rewound.append(db.message(history, "assistant", "doing it", active=0, compacted=0))
    db.message(history, "user", "second question")
    db.message(history, "assistant", "second answer")

    # 16. An old session, outside a 30-day window.
    old = session(
        "20251017_150000_01d01d",
        now - 75 * DAY,
        source="telegram",
        user_id="5127340981",
        model="openai/gpt-5",
        title="Old times",
        ended_at=now - 75 * DAY + 300,
        end_reason="idle",
        input_tokens=100,
        output_tokens=50,
        estimated_cost_usd=0.000625,
        cost_status="estimated",
    )
    db.message(old, "user", "hello from long ago")
    db.message(old, "assistant", "hello")

    db.refresh_counters()
    (message_count,) = db.conn.execute("SELECT count(*) FROM messages").fetchone()
    db.close()
    return NastyFacts(
        path=db.path,
        shape=shape,
        now=now,
        session_ids=tuple(sessions),
        message_count=message_count,
        xss_session_id=xss,
        xss_title=_XSS_TITLE,
        xss_message_id=xss_message,
        xss_payloads=_XSS_PAYLOADS,
        unicode_session_id=uni,
        unicode_title=_UNICODE_TITLE,
        untitled_session_id=untitled,
        open_session_id=untitled,
        negative_duration_session_id=drift,
        old_session_id=old,
        tool_session_id=tools,
        tool_pairs=tuple(pairs),
        null_tool_name_message_id=null_name,
        skill_name=skill,
        switched_models=switched,
        megabyte_session_id=mega,
        megabyte_message_id=mega_message,
        megabyte_bytes=len(big_output),
        megabyte_tail_word=tail_word,
        malformed_session_id=malformed,
        malformed_message_ids=bad,
        chain_ids=(chain[0], chain[1], chain[2]),
        big_session_id=big,
        big_session_messages=long_count,
        multimodal_session_id=photo,
        multimodal_message_id=multimodal,
        cron_session_id=cron,
        subagent_session_id=subagent,
        rare_word=rare_word,
        rare_message_id=rare_message,
        rare_session_id=tools,
        common_word="telegram",
        common_word_message_ids=tuple(common),
        history_session_id=history,
        hidden_message_id=hidden,
        compacted_message_ids=tuple(compacted),
        rewound_message_ids=tuple(rewound),
        summary_message_id=summary,
    )
