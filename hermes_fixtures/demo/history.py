"""History edits of current-shape transcripts (hidden notes, rewinds, in-place compaction)
and fitting a session into the time left before ``now``."""

from __future__ import annotations

from typing import Any

from .context import Context
from .planning import Plan
from .texts import HIDDEN_NOTES
from .transcript import message_row


class HistoryEdits:
    """Decides and applies the history edits of current-era sessions."""

    def __init__(self, ctx: Context) -> None:
        self.ctx, self.rng, self.corpus, self.now = ctx, ctx.rng, ctx.corpus, ctx.now

    def plan(self, plan: Plan, n: int) -> set[str]:
        """Which history edits a current-era session gets (decided before generating it, so
        that the rows they add can be reserved from its budget)."""
        rng = self.rng
        edits: set[str] = set()
        if n < 12:
            return edits
        if "hidden" in plan.features or rng.random() < 0.015:
            edits.add("hidden")
        if "rewound" in plan.features or rng.random() < 0.03:
            edits.add("rewound")
        if n >= 40 and ("compacted" in plan.features or rng.random() < 0.04):
            edits.add("compacted")
        return edits

    def apply(
        self, plan: Plan, rows: list[dict[str, Any]], edits: set[str]
    ) -> list[dict[str, Any]]:
        """Current-shape history edits: hidden notes, rewinds and in-place compaction."""
        rng = self.rng
        if any("_planted" in r for r in rows):
            return rows  # a planted row must stay live and unique
        user_idx = [
            i for i, r in enumerate(rows) if r["role"] == "user" and not r["_compressed_summary"]
        ]
        if "hidden" in edits and user_idx:
            i = rng.choice(user_idx)
            note = message_row(
                "user",
                rows[i]["timestamp"] + 0.01,
                content=rng.choice(HIDDEN_NOTES),
                display_kind="hidden",
            )
            rows.insert(i + 1, note)
            user_idx = [
                j for j, r in enumerate(rows) if r["role"] == "user" and r["display_kind"] is None
            ]
        if "rewound" in edits and len(user_idx) >= 3:
            k = rng.randrange(1, len(user_idx) - 1)
            for r in rows[user_idx[k] : user_idx[k + 1]]:
                r["active"], r["compacted"] = 0, 0  # undone by the user
        if "compacted" in edits and user_idx:
            # Cut before a user turn about 60% in, or mid-turn when the session is one turn.
            cut = next((i for i in user_idx if i >= len(rows) * 0.6 and i > user_idx[0]), None)
            if cut is None:
                cut = max(user_idx[0] + 1, int(len(rows) * 0.6))
            last_user = max(i for i in user_idx if i < cut)
            for r in rows[:cut]:
                if r["active"]:
                    r["compacted"] = 1
                r["active"] = 0
            ts = rows[cut - 1]["timestamp"] + 0.5
            summary = message_row(
                "user",
                ts,
                content="[CONTEXT COMPACTION] Earlier turns were summarised: "
                + self.corpus.prose(self.corpus.assistant_sentences, 900),
                _compressed_summary=1,
            )
            # The live copy of the last user turn duplicates an archived row (same time).
            copy = dict(rows[last_user], active=1, compacted=0)
            rows[cut:cut] = [summary, copy]
            plan.features.add("compaction_done")
        return rows

    def fit_in_time(self, plan: Plan, rows: list[dict[str, Any]]) -> None:
        """Squeeze a session that would run past ``now`` into the time left."""
        if not rows:
            return
        end = max(r["timestamp"] for r in rows)
        limit = self.now - 5
        if end <= limit:
            return
        start = plan.started_at
        span = end - start
        factor = max(0.0, (limit - start)) / span if span > 0 else 0.0
        for r in rows:
            r["timestamp"] = start + (r["timestamp"] - start) * factor
