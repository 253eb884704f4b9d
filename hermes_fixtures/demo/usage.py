"""Token and cost accounting of a demo session: what each call cost, the session's cost
status, and the ``session_model_usage`` / ``session_daily_usage`` rows that go with it."""

from __future__ import annotations

import random
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .catalog import AUX_MODEL, OPENROUTER, ModelInfo, Price, Route
from .context import Context
from .planning import Plan


@dataclass
class Usage:
    """Counters of a run of API calls (a session, a model within it, or a day)."""

    api_call_count: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost: float = 0.0
    first_seen: float | None = None
    last_seen: float | None = None

    def add(self, ts: float, inp: int, out: int, cr: int, cw: int, rs: int, cost: float) -> None:
        self.api_call_count += 1
        self.input_tokens += inp
        self.output_tokens += out
        self.cache_read_tokens += cr
        self.cache_write_tokens += cw
        self.reasoning_tokens += rs
        self.cost += cost
        if self.first_seen is None:
            self.first_seen = ts
        self.last_seen = ts

    @classmethod
    def total(cls, parts: Iterable[Usage]) -> Usage:
        """The sum of the counters (first and last seen stay unset)."""
        total = cls()
        for u in parts:
            total.api_call_count += u.api_call_count
            total.input_tokens += u.input_tokens
            total.output_tokens += u.output_tokens
            total.cache_read_tokens += u.cache_read_tokens
            total.cache_write_tokens += u.cache_write_tokens
            total.reasoning_tokens += u.reasoning_tokens
            total.cost += u.cost
        return total


def cost(price: Price | None, inp: int, out: int, cr: int, cw: int) -> float:
    if price is None:
        return 0.0
    return (
        inp * price.input + out * price.output + cr * price.cache_read + cw * price.cache_write
    ) / 1e6


def local_day(ts: float) -> str:
    """The local 'YYYY-MM-DD' that Hermes files daily usage under."""
    return time.strftime("%Y-%m-%d", time.localtime(ts))


@dataclass(frozen=True)
class Pricing:
    """How a session's cost is known: its ``cost_status`` and what that does to the money."""

    status: str | None
    source: str | None
    actual_factor: float | None  # provider-reported cost = estimate × this
    priced: bool  # the model has a known price

    @classmethod
    def draw(cls, rng: random.Random, plan: Plan, era_current: bool) -> Pricing:
        """What the route tells us, or nothing at all for sessions before cost tracking."""
        model, route = plan.model, plan.route
        assert model is not None and route is not None
        actual_factor: float | None = None
        if not era_current:
            status, cost_source = None, None
        elif route.mode == "subscription_included":
            status, cost_source = "included", "subscription"
        elif model.price is None:
            status, cost_source = "unknown", None
        elif route is OPENROUTER and ("cost_actual" in plan.features or rng.random() < 0.5):
            status, cost_source = "actual", "provider_reported"
            actual_factor = rng.uniform(0.85, 1.1)
        else:
            status, cost_source = (
                "estimated",
                "openrouter_models_api" if route is OPENROUTER else "docs_snapshot",
            )
        return cls(status, cost_source, actual_factor, model.price is not None)

    def money(self, amount: float) -> float | None:
        """The stored estimate for a computed cost."""
        if self.status == "included":
            return 0.0
        if self.status == "unknown" or (self.status is None and not self.priced):
            return None
        return round(amount, 6)

    def actual(self, amount: float) -> float | None:
        """The stored provider-reported cost, when the provider reports one."""
        return round(amount * self.actual_factor, 6) if self.actual_factor else None


class UsageRows:
    """The ``session_model_usage`` and ``session_daily_usage`` rows of a session."""

    def __init__(self, ctx: Context) -> None:
        self.rng = ctx.rng

    @staticmethod
    def counters(session_id: str, u: Usage, pricing: Pricing) -> dict[str, Any]:
        # The columns session_model_usage and session_daily_usage share.
        return {
            "session_id": session_id,
            "api_call_count": u.api_call_count,
            "input_tokens": u.input_tokens,
            "output_tokens": u.output_tokens,
            "cache_read_tokens": u.cache_read_tokens,
            "cache_write_tokens": u.cache_write_tokens,
            "reasoning_tokens": u.reasoning_tokens,
            "estimated_cost_usd": pricing.money(u.cost),
            "actual_cost_usd": pricing.actual(u.cost),
            "cost_status": pricing.status,
            "cost_source": pricing.source,
        }

    def _usage_row(
        self, plan: Plan, pricing: Pricing, model: str, task: str, u: Usage, r: Route
    ) -> dict[str, Any]:
        return {
            **self.counters(plan.id, u, pricing),
            "model": model,
            "billing_provider": r.provider,
            "billing_base_url": r.base_url,
            "billing_mode": r.mode,
            "task": task,
            "first_seen": u.first_seen,
            "last_seen": u.last_seen,
        }

    def model_rows(
        self,
        plan: Plan,
        per_model: dict[str, Usage],
        total: Usage,
        pricing: Pricing,
        era_current: bool,
    ) -> list[dict[str, Any]]:
        """Main-loop rows per model (partial for old sessions) and the auxiliary tasks."""
        rng = self.rng
        route = plan.route
        assert route is not None
        rows: list[dict[str, Any]] = []
        if era_current:
            rows += [
                self._usage_row(plan, pricing, name, "", u, route) for name, u in per_model.items()
            ]
        elif per_model and rng.random() < 0.5:
            # Old sessions: one row covering only part of the counters (the rest is residual).
            share = rng.uniform(0.3, 0.9)
            assert plan.model is not None
            part = Usage(
                api_call_count=max(1, int(total.api_call_count * share)),
                input_tokens=int(total.input_tokens * share),
                output_tokens=int(total.output_tokens * share),
                cache_read_tokens=int(total.cache_read_tokens * share),
                cache_write_tokens=int(total.cache_write_tokens * share),
                reasoning_tokens=int(total.reasoning_tokens * share),
                cost=total.cost * share,
                first_seen=total.first_seen,
                last_seen=total.last_seen,
            )
            rows.append(self._usage_row(plan, pricing, plan.model.name, "", part, route))
        if era_current and total.api_call_count:
            rows += self._auxiliary_rows(plan, pricing)
        return rows

    def _auxiliary_rows(self, plan: Plan, pricing: Pricing) -> list[dict[str, Any]]:
        """Auxiliary calls live only in usage rows, never in the session counters."""
        rng = self.rng
        aux_price = AUX_MODEL.price
        rows: list[dict[str, Any]] = []

        def aux(task: str, inp: int, out: int, calls: int = 1) -> None:
            u = Usage(
                calls,
                inp,
                out,
                0,
                0,
                0,
                cost(aux_price, inp, out, 0, 0),
                plan.started_at,
                plan.ended_at,
            )
            rows.append(self._usage_row(plan, pricing, AUX_MODEL.name, task, u, OPENROUTER))

        if rng.random() < 0.7:
            aux("title_generation", rng.randint(400, 2500), rng.randint(8, 30))
        if "compaction_done" in plan.features or any(
            c.kind == "compression" for c in plan.children
        ):
            aux("compression", rng.randint(20_000, 90_000), rng.randint(800, 3000))
        if "vision" in plan.features:
            aux("vision", rng.randint(1000, 4000), rng.randint(50, 400), rng.randint(1, 3))
        if rng.random() < 0.03:
            aux("background_review", rng.randint(2000, 9000), rng.randint(100, 600))
        return rows

    def daily_rows(
        self, plan: Plan, per_day: dict[str, Usage], pricing: Pricing
    ) -> list[dict[str, Any]]:
        return [{**self.counters(plan.id, u, pricing), "day": day} for day, u in per_day.items()]


def model_for_call(
    model: ModelInfo, second: ModelInfo | None, switch_at: float | None, ts: float
) -> ModelInfo:
    """The model that answered a call at ``ts`` in a session that may have switched."""
    return second if (switch_at is not None and second and ts >= switch_at) else model
