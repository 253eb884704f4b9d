"""The build: plan the sessions, generate each (with its children right after it), write the
rows in batches, then build the full-text indexes in one pass.

Each session goes through the same steps, and the parts that take them live in their own
modules: route and identity (here), transcript rows (:mod:`.transcript`), history edits
(:mod:`.history`), message ids and per-call usage (here), the session row
(:mod:`.sessions`), usage rows (:mod:`.usage`) and writing (:mod:`.writer`). They all draw
from one seeded ``Random`` in a fixed order, which is what makes a build reproducible.
"""

from __future__ import annotations

import os
import random
import sqlite3
import time
from typing import Any

from .. import ddl
from .catalog import (
    ANTHROPIC_MAX,
    LOCAL,
    MODEL_BY_NAME,
    MODELS,
    OPENAI,
    OPENROUTER,
    USERS,
    ModelInfo,
)
from .context import Context, legacy_era_end
from .history import HistoryEdits
from .planning import Plan, assign_features, plan_sessions
from .sessions import SessionRows
from .transcript import Transcripts
from .usage import Pricing, Usage, UsageRows, cost, local_day, model_for_call
from .writer import BatchWriter, Progress

# Features that pin a session to a model and route, so that each cost status occurs.
_FORCED_ROUTES = {
    "cost_unknown": (MODEL_BY_NAME["hermes-4-70b"], LOCAL),
    "cost_included": (MODEL_BY_NAME["anthropic/claude-sonnet-4.5"], ANTHROPIC_MAX),
    "cost_actual": (MODEL_BY_NAME["anthropic/claude-sonnet-4.5"], OPENROUTER),
    "cost_estimated": (MODEL_BY_NAME["openai/gpt-5"], OPENAI),
}


class Builder:
    """Generates sessions one after another and hands their rows to the writer."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        shape: str,
        rng: random.Random,
        now: float,
        days: int,
        n_messages: int,
        progress: Progress | None,
    ) -> None:
        self.ctx = ctx = Context.start(rng, shape, now, days)
        self.rng = rng
        tables = ("sessions", "messages")
        if ctx.has_usage:
            tables += ("session_model_usage",)
        if ctx.current:
            tables += ("session_daily_usage",)
        self.writer = BatchWriter(conn, tables, progress)
        self.transcripts = Transcripts(ctx, n_messages)
        self.history = HistoryEdits(ctx)
        self.sessions = SessionRows(ctx, self.writer.system_prompt)
        self.usage_rows = UsageRows(ctx)
        self.next_message_id = 1
        # Rows a session could not use go to the next one, so the total comes out exact.
        self.carry = 0

    def generate(self, plan: Plan) -> None:
        rng, ctx = self.rng, self.ctx
        parent = plan.parent
        if parent is not None:
            if plan.kind == "subagent":
                # It starts right after the parent's delegate_task call, when there is one.
                if parent.delegate_rows:
                    plan.started_at = parent.delegate_rows.pop(0)["timestamp"] + rng.uniform(0.5, 3)
                else:
                    plan.started_at = parent.started_at + rng.uniform(10, 600)
            else:
                parent_end = (
                    parent.ended_at if parent.ended_at is not None else parent.started_at + 600
                )
                plan.started_at = max(parent_end, parent.started_at) + rng.uniform(2, 30)
            plan.started_at = min(plan.started_at, ctx.now - 60)
        # Route and identity.
        if parent is not None and plan.kind != "subagent":
            plan.model, plan.route, plan.user = parent.model, parent.route, parent.user
        else:
            plan.model = rng.choices(MODELS, weights=[m.weight for m in MODELS], k=1)[0]
            plan.route = rng.choices(
                [r for r, _ in plan.model.routes], weights=[w for _, w in plan.model.routes], k=1
            )[0]
            users = USERS.get(plan.source)
            plan.user = rng.choice(users) if users else None
        for feature, (model, route) in _FORCED_ROUTES.items():
            if feature in plan.features:
                plan.model, plan.route = model, route
        if plan.kind == "subagent":
            plan.user = None
        plan.id = self.sessions.session_id(plan)
        n = max(0, plan.n_messages + self.carry) if plan.n_messages else 0
        edits = self.history.plan(plan, n) if ctx.current and ctx.era_current(plan) else set()
        extra = ("hidden" in edits) + 2 * ("compacted" in edits)
        rows = self.transcripts.session_rows(plan, n - extra)
        if edits:
            rows = self.history.apply(plan, rows, edits)
        self.carry = n - len(rows) if plan.n_messages else self.carry
        plan.n_messages = len(rows)
        self.history.fit_in_time(plan, rows)
        # Model switch: the second half of the calls go to another model.
        switch_at: float | None = None
        second: ModelInfo | None = None
        if len(rows) >= 10 and ("switch" in plan.features or rng.random() < 0.06):
            second = rng.choice([m for m in MODELS if m is not plan.model])
            switch_at = rows[len(rows) // 2]["timestamp"]
        self._finish_session(plan, rows, switch_at, second)
        for child in plan.children:
            self.generate(child)

    def _finish_session(
        self,
        plan: Plan,
        rows: list[dict[str, Any]],
        switch_at: float | None,
        second: ModelInfo | None,
    ) -> None:
        """Number the rows, count each API call's tokens and cost, and write the session."""
        rng, ctx = self.rng, self.ctx
        model = plan.model
        assert model is not None
        era_current = ctx.era_current(plan)
        with_daily = ctx.with_daily(plan)
        prompts = ctx.corpus.system_prompts
        prompt = prompts[rng.randrange(len(prompts))]
        context_tokens = len(prompt) // 4
        prev_ctx = 0
        per_model: dict[str, Usage] = {}
        per_day: dict[str, Usage] = {}
        tool_calls_total = 0
        for r in rows:
            r["id"] = self.next_message_id
            self.next_message_id += 1
            r["session_id"] = plan.id
            content = r["content"]
            tokens = (len(content) if content else 0) + (
                len(r["tool_calls"]) if r["tool_calls"] else 0
            )
            r["token_count"] = tokens // 4 + (1 if r["role"] == "assistant" else 0)
            if ctx.current and era_current:
                r["message_uid"] = f"{rng.getrandbits(128):032x}"
            if r["role"] == "assistant":
                use = model_for_call(model, second, switch_at, r["timestamp"])
                tool_calls_total += r.get("_n_calls", 0)
                # One API call per assistant row: the context so far, mostly cached.
                total_in = min(context_tokens, 180_000)
                cr = cw = 0
                if use.cache and prev_ctx:
                    cr = int(min(prev_ctx, total_in) * rng.uniform(0.75, 0.95))
                    if use.cache == "read_write":
                        cw = max(0, total_in - prev_ctx)
                inp = max(0, total_in - cr - cw)
                rs = 0
                if r["reasoning"]:
                    rs = len(r["reasoning"]) // 4
                elif use.reasoning == "hidden":
                    rs = rng.randint(32, 900)
                out = r["token_count"] + rs
                spent = cost(use.price, inp, out, cr, cw)
                per_model.setdefault(use.name, Usage()).add(
                    r["timestamp"], inp, out, cr, cw, rs, spent
                )
                if with_daily:
                    per_day.setdefault(local_day(r["timestamp"]), Usage()).add(
                        r["timestamp"], inp, out, cr, cw, rs, spent
                    )
                prev_ctx = total_in
            context_tokens += r["token_count"]

        total = Usage.total(per_model.values())
        pricing = Pricing.draw(rng, plan, era_current)
        srow = self.sessions.row(plan, rows, prompt, total, pricing, tool_calls_total)
        model_usage: list[dict[str, Any]] = []
        daily_usage: list[dict[str, Any]] = []
        if ctx.has_usage:
            model_usage = self.usage_rows.model_rows(plan, per_model, total, pricing, era_current)
            daily_usage = self.usage_rows.daily_rows(plan, per_day, pricing)
        self.writer.session(srow, rows, model_usage, daily_usage, tool_calls_total)


def build_demo_db(
    path: str | os.PathLike[str],
    *,
    sessions: int = 300,
    messages: int = 15000,
    seed: int = 42,
    shape: str = "current",
    days: int = 120,
    now: float | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Write a new demo ``state.db`` at ``path`` (which must not exist) and return counts.

    Deterministic for (``seed``, ``now``, ``shape``, sizes) on a machine (session ids and
    daily buckets use local time, as Hermes does).
    """
    if shape not in ddl.SHAPES:
        raise ValueError(f"unknown shape {shape!r}")
    if sessions < 1 or messages < 0:
        raise ValueError("need at least one session and a non-negative message count")
    path = os.fspath(path)
    if os.path.exists(path):
        raise FileExistsError(path)
    now = float(round(time.time()) if now is None else now)
    started = time.monotonic()
    rng = random.Random(seed)

    conn = sqlite3.connect(path)
    try:
        # Speed while building; the finished file gets WAL like a real one. No rollback
        # journal at all: a half-built file is thrown away anyway.
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("PRAGMA cache_size = -262144")
        conn.execute("PRAGMA temp_store = MEMORY")
        ddl.create_schema(conn, shape)
        ddl.drop_fts_triggers(conn, shape)

        plans = plan_sessions(rng, sessions, messages, now, days)
        assign_features(rng, plans, legacy_era_end=legacy_era_end(now, days))
        builder = Builder(conn, shape, rng, now, days, messages, progress)
        for plan in sorted((p for p in plans if p.kind == "root"), key=lambda p: p.started_at):
            builder.generate(plan)
        builder.writer.flush()

        if progress:
            progress("building full-text indexes…")
        ddl.rebuild_fts(conn, shape)
        ddl.create_fts_triggers(conn, shape)
        conn.commit()
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()

    big = next(p for p in plans if p.big)
    chains = sum(
        1 for p in plans if p.kind == "root" and any(c.kind == "compression" for c in p.children)
    )
    transcripts, writer = builder.transcripts, builder.writer
    result: dict[str, Any] = {
        "path": path,
        "shape": shape,
        "seed": seed,
        "now": now,
        **writer.counts,
        "by_source": dict(sorted(writer.by_source.items(), key=lambda kv: -kv[1])),
        "big_session_id": big.id,
        "big_session_messages": big.n_messages,
        "compression_chains": chains,
        "rare_words": {
            token: [r["id"] for r in rows] for token, rows in transcripts.rare_rows.items()
        },
        "megabyte_message_ids": [r["id"] for r in transcripts.megabyte_rows],
        "file_bytes": os.path.getsize(path),
        "elapsed_s": round(time.monotonic() - started, 2),
    }
    if progress:
        progress(
            f"done: {result['sessions']:,} sessions, {result['messages']:,} messages"
            f" in {result['elapsed_s']}s"
        )
    return result
