"""The ``sessions`` row of a demo session: its id, title, end, route, counters and cost, and
on current-era sessions of the current shape the newer columns (prompt hash, flags, gateway
routing, workspace, compression bookkeeping)."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from typing import Any

from .catalog import PRICING_VERSION, REPOS
from .context import Context
from .planning import Plan
from .texts import CJK, EMOJI, RTL, WORDS, XSS
from .usage import Pricing, Usage, local_day


class SessionRows:
    """Makes session rows; remembers the ids and titles taken and the prompts written."""

    def __init__(self, ctx: Context, write_prompt: Callable[[str, str], None]) -> None:
        self.ctx, self.rng, self.corpus, self.now = ctx, ctx.rng, ctx.corpus, ctx.now
        self.write_prompt = write_prompt
        self.titles: set[str] = set()
        self.session_ids: set[str] = set()
        self.prompt_hashes: dict[str, str] = {}

    def _unique_title(self, title: str) -> str:
        title = title[:100]
        candidate, k = title, 2
        while candidate in self.titles:
            suffix = f" ({k})"
            candidate = title[: 100 - len(suffix)] + suffix
            k += 1
        self.titles.add(candidate)
        return candidate

    def session_id(self, plan: Plan) -> str:
        rng = self.rng
        while True:
            if plan.source == "api_server" and rng.random() < 0.5:
                sid = f"api-{rng.getrandbits(64):016x}"
            else:
                stamp = time.strftime("%Y%m%d_%H%M%S", time.localtime(plan.started_at))
                sid = f"{stamp}_{rng.getrandbits(24):06x}"
            if sid not in self.session_ids:
                self.session_ids.add(sid)
                return sid

    def _title(self, plan: Plan) -> str | None:
        rng = self.rng
        if "xss_title" in plan.features:
            # Only the payloads that are markup: the point is a title that must be escaped.
            return self._unique_title(f"{rng.choice(XSS[:4])} {rng.choice(WORDS['thing'])}")
        if "null_title" in plan.features or plan.n_messages == 0:
            return None
        if plan.source == "cron":
            if rng.random() < 0.6:
                return None
            job = rng.choice(("Daily digest", "Inbox triage", "Price watch", "Backup check"))
            return self._unique_title(f"Cron: {job} {local_day(plan.started_at)}")
        if rng.random() < 0.1:
            return None
        r = rng.random()
        if r < 0.04:
            return self._unique_title(rng.choice(CJK)[:30])
        if r < 0.07:
            return self._unique_title(rng.choice(RTL)[:40])
        if r < 0.11:
            return self._unique_title(rng.choice(EMOJI))
        verb = rng.choice(
            ("Fix", "Debug", "Review", "Plan", "Summarise", "Explain", "Speed up", "Test")
        )
        return self._unique_title(f"{verb} {rng.choice(WORDS['thing'])} ({self.corpus.term()})")

    def row(
        self,
        plan: Plan,
        rows: list[dict[str, Any]],
        prompt: str,
        total: Usage,
        pricing: Pricing,
        tool_calls_total: int,
    ) -> dict[str, Any]:
        """The session's row; also sets ``plan.ended_at`` for the sessions that follow it."""
        rng = self.rng
        model, route = plan.model, plan.route
        assert model is not None and route is not None
        era_current = self.ctx.era_current(plan)
        last_ts = max((r["timestamp"] for r in rows), default=plan.started_at)
        status = pricing.status

        # End of the session.
        if "drift" in plan.features:
            ended_at: float | None = plan.started_at - rng.uniform(5, 900)
        elif "open" in plan.features or (
            plan.source in ("telegram", "discord", "slack", "api_server")
            and self.now - last_ts < 3 * 86400
            and rng.random() < 0.4
        ):
            ended_at = None
        else:
            ended_at = min(self.now - 1, last_ts + rng.uniform(1, 300))
        kinds = {c.kind for c in plan.children}
        if "compression" in kinds:
            end_reason: str | None = "compression"
        elif "branch" in kinds:
            end_reason = "branched"
        elif "reset" in kinds:
            end_reason = "session_reset"
        elif ended_at is None:
            end_reason = None
        else:
            end_reason = {
                "cli": rng.choice(("cli_close", "user_exit")),
                "cron": "completed",
                "subagent": "completed",
            }.get(plan.source, "idle")
        if kinds - {"subagent"} and ended_at is None:
            ended_at = min(self.now - 1, last_ts + 1)
        plan.ended_at = ended_at if ended_at is not None else last_ts

        title = self._title(plan)
        config: dict[str, Any] = {
            "model": model.name,
            "provider": route.provider,
            "base_url": route.base_url,
        }
        marker = {
            "subagent": "_delegate_from",
            "branch": "_branched_from",
            "reset": "_reset_from",
        }.get(plan.kind)
        if marker and plan.parent is not None:
            config[marker] = plan.parent.id
        srow: dict[str, Any] = {
            "id": plan.id,
            "source": plan.source,
            "user_id": plan.user[0] if plan.user else None,
            "model": model.name,
            "title": title,
            "started_at": plan.started_at,
            "ended_at": ended_at,
            "message_count": len(rows),
            "input_tokens": total.input_tokens,
            "output_tokens": total.output_tokens,
            "estimated_cost_usd": pricing.money(total.cost),
            "model_config": json.dumps(config) if era_current or rng.random() < 0.9 else None,
            "parent_session_id": plan.parent.id if plan.parent is not None else None,
            "end_reason": end_reason,
            "tool_call_count": tool_calls_total,
            "api_call_count": total.api_call_count,
            "cache_read_tokens": total.cache_read_tokens,
            "cache_write_tokens": total.cache_write_tokens,
            "reasoning_tokens": total.reasoning_tokens,
            "billing_provider": route.provider if era_current else None,
            "billing_base_url": route.base_url if era_current else None,
            "billing_mode": route.mode if era_current else None,
            "actual_cost_usd": pricing.actual(total.cost),
            "cost_status": status,
            "cost_source": pricing.source,
            "pricing_version": PRICING_VERSION if status in ("estimated", "actual") else None,
            "archived": 0,
            "auto_archived": 0,
            "pinned": 0,
            "hidden": 0,
            "compression_count": 0,
        }
        if self.ctx.current and era_current:
            self._current_columns(plan, srow, prompt, last_ts, title)
        else:
            srow["system_prompt"] = prompt
        return srow

    def _current_columns(
        self, plan: Plan, srow: dict[str, Any], prompt: str, last_ts: float, title: str | None
    ) -> None:
        rng = self.rng
        digest = hashlib.sha256(prompt.encode()).hexdigest()
        if digest not in self.prompt_hashes:
            self.prompt_hashes[digest] = prompt
            self.write_prompt(digest, prompt)
        srow["system_prompt_hash"] = digest
        srow["system_prompt"] = None
        srow["title_source"] = (
            None
            if title is None
            else rng.choices(("llm", "derived", "user"), weights=(70, 20, 10))[0]
        )
        srow["last_activity_at"] = last_ts
        age = self.now - plan.started_at
        srow["pinned"] = int(rng.random() < 0.02)
        srow["archived"] = int(rng.random() < 0.03)
        srow["auto_archived"] = int(age > 45 * 86400 and not srow["pinned"] and rng.random() < 0.15)
        srow["hidden"] = int(rng.random() < 0.01)
        srow["profile_name"] = rng.choices(("default", "work", "research"), weights=(85, 10, 5))[0]
        srow["created_source"] = {"api_server": "workspace", "cli": "cli", "cron": "scheduler"}.get(
            plan.source, "gateway"
        )
        if plan.source == "cli":
            repo, branch = rng.choice(REPOS)
            srow["cwd"] = repo if rng.random() < 0.7 else repo + "/src"
            srow["git_repo_root"], srow["git_branch"] = repo, branch
        if plan.user and plan.source not in ("cli", "cron", "subagent"):
            chat_type = (
                "dm"
                if rng.random() < 0.75
                else ("group" if plan.source in ("telegram", "whatsapp") else "channel")
            )
            chat_id = plan.user[0] if chat_type == "dm" else f"-100{rng.randint(10**9, 10**10 - 1)}"
            thread_id = (
                f"{rng.randint(10**9, 2 * 10**9)}.{rng.randint(0, 999999):06d}"
                if plan.source == "slack" and rng.random() < 0.5
                else None
            )
            key = f"agent:{srow['profile_name']}:{plan.source}:{chat_type}:{chat_id}" + (
                f":{thread_id}" if thread_id else ""
            )
            srow.update(
                session_key=key,
                chat_id=chat_id,
                chat_type=chat_type,
                thread_id=thread_id,
                display_name=plan.user[1],
                origin_json=json.dumps(
                    {
                        "platform": plan.source,
                        "chat_id": chat_id,
                        "chat_type": chat_type,
                        "user_id": plan.user[0],
                        "user_name": plan.user[1],
                        "thread_id": thread_id,
                    },
                    ensure_ascii=False,
                ),
            )
            if plan.source == "telegram" and rng.random() < 0.02:
                srow.update(
                    handoff_state="completed",
                    handoff_target="cli",
                    handoff_requested_at=last_ts - 30,
                )
        if "compaction_done" in plan.features or any(
            c.kind == "compression" for c in plan.children
        ):
            srow["compression_count"] = 1
            srow["compression_last_at"] = last_ts
            srow["compression_tokens_before"] = rng.randint(90_000, 180_000)
            srow["compression_tokens_after"] = rng.randint(4_000, 20_000)
