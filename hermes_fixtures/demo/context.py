"""What every part of one demo build shares: the seeded ``Random``, the text pools, the clock
and the eras of the simulated installation."""

from __future__ import annotations

import random
from dataclasses import dataclass

from .catalog import DAILY_ERA_SHARE, LEGACY_ERA_SHARE
from .corpus import Corpus
from .planning import Plan


@dataclass(frozen=True)
class Context:
    rng: random.Random
    corpus: Corpus
    now: float
    # The shape has the newest columns (history edits, reasoning payloads, gateway routing…).
    current: bool
    # The shape has session_model_usage.
    has_usage: bool
    # The oldest sessions predate cost tracking and the newer columns; only the newest have
    # daily usage (it was not backfilled).
    legacy_era_end: float
    daily_era_start: float

    @classmethod
    def start(cls, rng: random.Random, shape: str, now: float, days: int) -> Context:
        """The context of a build; makes the text pools (the first draws after planning)."""
        return cls(
            rng=rng,
            corpus=Corpus(rng),
            now=now,
            current=shape == "current",
            has_usage=shape != "doc",
            legacy_era_end=legacy_era_end(now, days),
            daily_era_start=now - days * 86400 * DAILY_ERA_SHARE,
        )

    def era_current(self, plan: Plan) -> bool:
        return plan.started_at >= self.legacy_era_end

    def with_daily(self, plan: Plan) -> bool:
        return self.current and plan.started_at >= self.daily_era_start


def legacy_era_end(now: float, days: int) -> float:
    return now - days * 86400 * LEGACY_ERA_SHARE
