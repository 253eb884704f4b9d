"""The rows of one session's transcript: user turns, assistant turns with tool-call rounds,
tool results, reasoning and multimodal parts, and the rows planted for tests to find.

Planted rows (rare words, megabyte tool outputs, malformed ``tool_calls``) are chosen by
ordinal among the eligible rows as they are generated, and reported back by the build.
"""

from __future__ import annotations

import json
import math
from typing import Any

from .catalog import (
    CODEX,
    DEFAULT_TOOLS,
    OPENROUTER,
    RARE_TOKENS,
    SOURCE_TOOL_ROUNDS,
    TOOLS_BY_SOURCE,
    USER_SCRIPT,
)
from .context import Context
from .draws import lognormal_int, weighted
from .planning import Plan
from .texts import CJK, EMOJI, RTL, XSS
from .tools import ToolCalls

MSG_DEFAULTS: dict[str, Any] = {
    "content": None,
    "tool_name": None,
    "tool_calls": None,
    "reasoning": None,
    "tool_call_id": None,
    "finish_reason": None,
    "reasoning_content": None,
    "reasoning_details": None,
    "codex_reasoning_items": None,
    "active": 1,
    "compacted": 0,
    "_compressed_summary": 0,
    "display_kind": None,
    "api_content": None,
    "display_metadata": None,
    "message_uid": None,
}

MALFORMED_TOOL_CALLS = (
    # Cut off mid-write.
    '[{"id": "call_trunc", "type": "function", "function": {"name": "terminal", '
    '"arguments": "{\\"command\\": \\"ls -la',
    # A Python repr instead of JSON.
    "[{'id': 'call_repr', 'type': 'function', 'function': {'name': 'read_file', "
    "'arguments': {'path': 'README.md'}}}]",
    "tool_calls: terminal(ls)",
    '{"id": "call_obj", "function": {"name": "terminal"}}',
)


def message_row(role: str, ts: float, **values: Any) -> dict[str, Any]:
    """A ``messages`` row with every column at its default, as a dict."""
    row = dict(MSG_DEFAULTS)
    row["role"] = role
    row["timestamp"] = ts
    row.update(values)
    return row


class Transcripts:
    """Generates the rows of one session after another (ids and counters come later)."""

    def __init__(self, ctx: Context, n_messages: int) -> None:
        rng = ctx.rng
        self.ctx, self.rng, self.corpus, self.current = ctx, rng, ctx.corpus, ctx.current
        self.tools = ToolCalls(rng, ctx.corpus)
        # Planted rows, chosen by ordinal among eligible rows as they are generated.
        self.user_ordinal = 0
        self.tool_ordinal = 0
        self.tool_call_ordinal = 0
        self.rare_targets: dict[int, str] = {}
        eligible = max(10, int(n_messages * 0.08))
        picks = rng.sample(range(eligible), k=min(eligible, sum(RARE_TOKENS.values())))
        for token, k in RARE_TOKENS.items():
            for _ in range(k):
                if picks:
                    self.rare_targets[picks.pop()] = token
        self.rare_rows: dict[str, list[dict[str, Any]]] = {t: [] for t in RARE_TOKENS}
        self.rare_pending: list[str] = []
        tool_span = max(4, int(n_messages * 0.2))
        self.megabyte_targets = set(
            rng.sample(range(tool_span), k=min(tool_span, max(2, n_messages // 250_000)))
        )
        self.megabyte_rows: list[dict[str, Any]] = []
        call_span = max(4, int(n_messages * 0.15))
        self.malformed_targets = set(
            rng.sample(range(call_span), k=min(call_span, max(3, n_messages // 100_000)))
        )

    def _user_text(self, plan: Plan) -> str:
        rng, corpus = self.rng, self.corpus
        script = USER_SCRIPT.get(plan.user[0]) if plan.user else None
        if script == "cjk" and rng.random() < 0.6:
            return " ".join(rng.choices(CJK, k=rng.randint(1, 3)))
        if script == "rtl" and rng.random() < 0.5:
            return " ".join(rng.choices(RTL, k=rng.randint(1, 3)))
        r = rng.random()
        if r < 0.05:  # a pasted log or file
            text = (
                corpus.prose(corpus.user_sentences, 60)
                + "\n\n```\n"
                + corpus.slice(corpus.log_blob, lognormal_int(rng, 1500, 0.8, 200, 12_000))
                + "\n```"
            )
        else:
            text = corpus.prose(corpus.user_sentences, lognormal_int(rng, 110, 0.9, 20, 3000))
        r = rng.random()
        if r < 0.006:
            text += " " + rng.choice(XSS)
        elif r < 0.02:
            text += " " + rng.choice(EMOJI)
        elif r < 0.03:
            text += " " + rng.choice(CJK + RTL)
        return text

    def _assistant_text(self, n_bytes: int) -> str:
        rng, corpus = self.rng, self.corpus
        text = corpus.prose(corpus.assistant_sentences, n_bytes)
        r = rng.random()
        if r < 0.15:
            text += (
                "\n\n```python\n" + corpus.slice(corpus.code_blob, rng.randint(200, 1500)) + "\n```"
            )
        elif r < 0.25:
            items = rng.sample(corpus.assistant_sentences, rng.randint(2, 5))
            text += "\n\n" + "\n".join(f"- {item}" for item in items)
        if rng.random() < 0.2:
            text += f" (ref {rng.getrandbits(28):07x}, {corpus.term()})"
        if rng.random() < 0.004:
            text += " " + rng.choice(XSS)
        return text

    def _gap(self, plan: Plan, after_role: str) -> float:
        rng = self.rng
        if after_role == "user_turn":
            if plan.source in ("telegram", "discord", "slack", "whatsapp") and rng.random() < 0.05:
                return rng.uniform(3600, 20 * 3600)  # came back hours later
            if rng.random() < 0.02:
                return rng.uniform(1800, 3 * 3600)
            return rng.lognormvariate(math.log(60), 1.0)
        if after_role == "tool":
            return rng.uniform(0.05, 20) if rng.random() < 0.95 else rng.uniform(20, 300)
        return rng.uniform(2, 40)

    def session_rows(self, plan: Plan, n: int) -> list[dict[str, Any]]:
        rng = self.rng
        rows: list[dict[str, Any]] = []
        t = plan.started_at
        rounds_mean = SOURCE_TOOL_ROUNDS[plan.source]
        tools = TOOLS_BY_SOURCE.get(plan.source, DEFAULT_TOOLS)
        model = plan.model
        assert model is not None
        cli_like = plan.source == "cli"
        era_current = self.ctx.era_current(plan)
        if plan.kind == "compression" and n > 0:
            summary = "[CONTEXT SUMMARY] Continued from a compressed session. " + self.corpus.prose(
                self.corpus.assistant_sentences, 1200
            )
            rows.append(message_row("user", t, content=summary, _compressed_summary=1))
        elif (
            self.current
            and era_current
            and plan.source in ("telegram", "discord", "slack")
            and rng.random() < 0.1
        ):
            meta = {
                "event": "session_start",
                "platform": plan.source,
                "user_id": plan.user[0] if plan.user else None,
            }
            rows.append(message_row("session_meta", t, content=json.dumps(meta)))
        pending_delegations = sum(1 for c in plan.children if c.kind == "subagent")
        while len(rows) < n:
            t += self._gap(plan, "user_turn")
            rows.append(self._user_row(plan, t))
            rounds = min(12, int(rng.expovariate(1 / rounds_mean))) if rounds_mean else 0
            for _ in range(rounds):
                if len(rows) >= n:
                    break
                t += self._gap(plan, "assistant")
                n_calls = rng.choices((1, 2, 3), weights=(75, 18, 7), k=1)[0]
                calls, outputs = [], []
                for _ in range(n_calls):
                    if pending_delegations:
                        name, pending_delegations = "delegate_task", pending_delegations - 1
                    else:
                        name = weighted(rng, tools)
                    call, output = self.tools.make(name)
                    calls.append(call)
                    outputs.append(output)
                content = (
                    None if rng.random() < 0.6 else rng.choice(self.corpus.assistant_sentences)
                )
                tool_calls = json.dumps(calls, ensure_ascii=False)
                n_valid = len(calls)
                if self.tool_call_ordinal in self.malformed_targets:
                    tool_calls = MALFORMED_TOOL_CALLS[
                        len(self.malformed_targets) % len(MALFORMED_TOOL_CALLS)
                    ]
                    self.malformed_targets.discard(self.tool_call_ordinal)
                    n_valid = 0  # what a reader parsing the JSON will find
                self.tool_call_ordinal += 1
                arow = self._assistant_row(plan, t, content, tool_calls, "tool_calls")
                arow["_n_calls"] = n_valid
                rows.append(arow)
                if any(c["function"]["name"] == "delegate_task" for c in calls):
                    plan.delegate_rows.append(arow)
                for call, output in zip(calls, outputs, strict=True):
                    if len(rows) >= n:
                        break
                    t += self._gap(plan, "tool")
                    name = call["function"]["name"]
                    if self.tool_ordinal in self.megabyte_targets:
                        output = self.corpus.slice(
                            self.corpus.log_blob, rng.randint(1_000_000, 3_000_000)
                        )
                    trow = message_row(
                        "tool",
                        t,
                        content=output,
                        tool_call_id=call["id"],
                        # CLI tool rows often have no tool_name.
                        tool_name=None if cli_like and rng.random() < 0.6 else name,
                    )
                    if self.tool_ordinal in self.megabyte_targets:
                        self.megabyte_rows.append(trow)
                    self.tool_ordinal += 1
                    rows.append(trow)
            if len(rows) >= n:
                break
            t += self._gap(plan, "assistant")
            finish = rng.choices(
                ("stop", "length", "error", "content_filter"), weights=(97, 1.5, 1, 0.5), k=1
            )[0]
            text = self._assistant_text(lognormal_int(rng, 500, 0.9, 20, 6000))
            rows.append(self._assistant_row(plan, t, text, None, finish))
        del rows[n:]
        return rows

    def _user_row(self, plan: Plan, t: float) -> dict[str, Any]:
        rng = self.rng
        if plan.source == "cron":
            job = rng.choice(
                (
                    "Summarise unread email and post the digest to telegram.",
                    "Check the price of the flight to Tokyo and tell me if it dropped.",
                    "Run the backup check and report failures.",
                )
            )
            return message_row("user", t, content=f"[Scheduled job] {job}")
        if plan.source == "subagent":
            return message_row(
                "user", t, content=self.corpus.prose(self.corpus.user_sentences, 300)
            )
        text = self._user_text(plan)
        hit = self.rare_targets.pop(self.user_ordinal, None)
        if hit:
            self.rare_pending.append(hit)
        self.user_ordinal += 1
        # A planted token must end up in one live row: not in a session whose history is
        # going to be rewound or compacted (the token then waits for the next user row).
        token = None
        if self.rare_pending and not plan.features & {"rewound", "compacted"}:
            token = self.rare_pending.pop(0)
        if token:
            text += f" Have you ever heard of {token}?"
        row = message_row("user", t, content=text)
        if token:
            row["_planted"] = True  # history edits must not archive or duplicate it
            self.rare_rows[token].append(row)
        elif (
            plan.source in ("telegram", "api_server", "discord", "whatsapp") and rng.random() < 0.03
        ):
            parts = [
                {"type": "text", "text": text},
                {
                    "type": "image_url",
                    "image_url": {
                        "url": f"https://files.example.org/{rng.getrandbits(48):012x}.jpg"
                    },
                },
            ]
            row["content"] = "\x00json:" + json.dumps(parts, ensure_ascii=False)
            plan.features.add("vision")
        elif rng.random() < 0.005:
            row["api_content"] = (
                text + "\n\n[attached: notes.txt]\n" + self.corpus.slice(self.corpus.log_blob, 400)
            )
        return row

    def _assistant_row(
        self, plan: Plan, t: float, content: str | None, tool_calls: str | None, finish: str
    ) -> dict[str, Any]:
        rng = self.rng
        model = plan.model
        assert model is not None
        row = message_row(
            "assistant", t, content=content, tool_calls=tool_calls, finish_reason=finish
        )
        if model.reasoning == "visible" and rng.random() < 0.3:
            reasoning = " ".join(rng.choices(self.corpus.reasoning_sentences, k=rng.randint(1, 4)))
            row["reasoning"] = reasoning
            if self.current and rng.random() < 0.5:
                row["reasoning_content"] = reasoning
            if self.current and plan.route is OPENROUTER:
                row["reasoning_details"] = json.dumps(
                    [{"type": "reasoning.text", "text": reasoning}]
                )
        elif (
            model.reasoning == "hidden"
            and self.current
            and plan.route is CODEX
            and rng.random() < 0.5
        ):
            row["codex_reasoning_items"] = json.dumps(
                [{"type": "reasoning", "encrypted_content": f"gAAAA{rng.getrandbits(256):064x}"}]
            )
        if plan.source == "telegram" and self.current and rng.random() < 0.02:
            row["display_metadata"] = json.dumps(
                {"reactions": [rng.choice(("👍", "❤️", "🔥", "😂"))]}, ensure_ascii=False
            )
        return row
