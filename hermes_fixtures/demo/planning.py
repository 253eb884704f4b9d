"""Planning a build: how many sessions of which channel, how long each is, when it starts,
how sessions link (compression chains, branches, resets, subagents), and which sessions carry
the awkward cases every build must contain.

Plans are made before any text is generated, so that the message total comes out exact.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

from .catalog import REQUIRED_SOURCES, SOURCE_LENGTH, SOURCE_WEIGHTS, ModelInfo, Route
from .draws import weighted


@dataclass(eq=False)  # identity semantics: plans link to each other both ways
class Plan:
    index: int
    source: str
    n_messages: int
    started_at: float = 0.0  # roots only; children start from their parent
    kind: str = "root"  # root, compression, branch, reset, subagent
    parent: Plan | None = None
    children: list[Plan] = field(default_factory=list)
    big: bool = False
    # Filled while generating.
    id: str = ""
    ended_at: float | None = None
    delegate_rows: list[dict[str, Any]] = field(default_factory=list)
    model: ModelInfo | None = None
    route: Route | None = None
    user: tuple[str, str] | None = None
    features: set[str] = field(default_factory=set)


HOUR_WEIGHTS = (
    1,
    0.5,
    0.3,
    0.2,
    0.2,
    0.4,
    1,
    3,
    6,
    9,
    10,
    10,
    7,
    9,
    10,
    10,
    9,
    8,
    6,
    5,
    5,
    4,
    3,
    2,
)


def start_time(rng: random.Random, now: float, days: int, source: str) -> float:
    """A start time in the window, biased to recent days, working hours and weekdays."""
    for _ in range(20):
        age_days = days * rng.random() ** 1.7
        local = time.localtime(now - age_days * 86400)
        if local.tm_wday >= 5 and rng.random() < 0.45:
            continue  # quieter weekends
        if source == "cron":  # scheduled jobs run at fixed times
            hour, minute, second = rng.choice((7, 8, 18)), rng.choice((0, 30)), rng.randint(0, 4)
        else:
            hour = rng.choices(range(24), weights=HOUR_WEIGHTS, k=1)[0]
            minute, second = rng.randint(0, 59), rng.randint(0, 59)
        ts = time.mktime(
            (local.tm_year, local.tm_mon, local.tm_mday, hour, minute, second, 0, 0, -1)
        )
        ts += rng.random()
        if now - days * 86400 <= ts <= now - 60:
            return ts
    return now - rng.uniform(3600, days * 86400 * 0.9)


def allocate(weights: list[float], total: int, minimum: int) -> list[int]:
    """Split ``total`` in proportion to ``weights``, each at least ``minimum``; sums exactly."""
    n = len(weights)
    minimum = min(minimum, total // max(1, n))
    rest = total - minimum * n
    wsum = sum(weights) or 1.0
    shares = [w / wsum * rest for w in weights]
    counts = [minimum + int(s) for s in shares]
    short = total - sum(counts)
    order = sorted(range(n), key=lambda i: shares[i] - int(shares[i]), reverse=True)
    for i in order[:short]:
        counts[i] += 1
    return counts


def plan_sessions(
    rng: random.Random, n_sessions: int, n_messages: int, now: float, days: int
) -> list[Plan]:
    sources = [weighted(rng, SOURCE_WEIGHTS) for _ in range(n_sessions)]
    # Small builds still get every main channel: replace sessions of the commonest ones.
    for required in REQUIRED_SOURCES[: n_sessions - 2]:
        if required not in sources:
            common = [i for i, s in enumerate(sources) if sources.count(s) > 2]
            if common:
                sources[rng.choice(common)] = required
    if "subagent" in sources and not any(s in ("cli", "api_server", "telegram") for s in sources):
        sources = ["cli" if s == "subagent" else s for s in sources]
    # The big session is a long coding session.
    big_index = next((i for i, s in enumerate(sources) if s == "cli"), 0)
    sources[big_index] = "cli"
    big_count = min(2000, n_messages // 10) if n_sessions > 1 else n_messages

    # A few sessions were opened and never used.
    empty = set(rng.sample(range(n_sessions), k=n_sessions // 150)) - {big_index}
    used = [i for i in range(n_sessions) if i not in empty and i != big_index]
    weights = [rng.lognormvariate(0, 1.0) * SOURCE_LENGTH[sources[i]] for i in used]
    counts = [0] * n_sessions
    if used:
        for i, c in zip(used, allocate(weights, n_messages - big_count, 2), strict=True):
            counts[i] = c
        counts[big_index] = big_count
    else:
        counts[big_index] = n_messages
    plans = [Plan(i, s, counts[i]) for i, s in enumerate(sources)]
    plans[big_index].big = True

    # Relationships. Chain links, branches and resets are taken from a pool of ordinary
    # sessions (so the totals stay as asked); subagents attach to an interactive session.
    free = [
        p for p in plans if not p.big and p.source not in ("cron", "subagent") and p.n_messages > 0
    ]
    rng.shuffle(free)
    n_chains = max(1, n_sessions // 25) if n_sessions >= 10 else 0
    for _ in range(n_chains):
        if len(free) < 2:
            break
        head = link = free.pop()
        for _ in range(rng.randint(1, 3)):  # 2-4 sessions per chain
            if not free:
                break
            child = free.pop()
            child.kind, child.parent, child.source = "compression", link, head.source
            link.children.append(child)
            link = child
    for kind, share, pool in (("branch", 60, ("cli", "api_server")), ("reset", 100, ("telegram",))):
        wanted = max(1, n_sessions // share) if n_sessions >= 20 else 0
        for parent in [p for p in free if p.source in pool][:wanted]:
            if parent not in free:  # already taken as a child above
                continue
            free.remove(parent)
            if not free:
                break
            child = free.pop()
            child.kind, child.parent, child.source = kind, parent, parent.source
            parent.children.append(child)
    parents_ok = [p for p in plans if p.source in ("cli", "telegram", "api_server")]
    for p in plans:
        if p.source == "subagent" and parents_ok:
            parent = rng.choice(parents_ok)
            p.kind, p.parent = "subagent", parent
            parent.children.append(p)
        elif p.source == "subagent":
            p.source = "cli"
    for p in plans:
        if p.kind == "root":
            p.started_at = start_time(rng, now, days, p.source)
    big = plans[big_index]
    if big.kind == "root":
        big.started_at = min(big.started_at, now - days * 86400 * 0.15)
    return plans


def assign_features(rng: random.Random, plans: list[Plan], legacy_era_end: float) -> None:
    """Make sure every build, however small, has each of the awkward cases at least once."""
    roots = [
        p for p in plans if p.kind == "root" and not p.children and not p.big and p.n_messages > 0
    ]
    rng.shuffle(roots)
    # Every cost_status needs a session of the current era (older ones have none).
    recent = [p for p in roots if p.started_at >= legacy_era_end]
    for name in ("cost_unknown", "cost_included", "cost_actual", "cost_estimated"):
        if recent:
            plan = recent.pop()
            plan.features.add(name)
            roots.remove(plan)
    wanted = [
        ("xss_title", 3),
        ("null_title", 2),
        ("open", 2),
        ("drift", max(1, len(plans) // 250)),
        ("switch", max(1, len(plans) // 100)),
    ]
    for name, k in wanted:
        for _ in range(k):
            if roots:
                roots.pop().features.add(name)
    # History edits need a long enough session in the current era; mark several and let the
    # transcript editor apply them where they fit.
    long_ones = [
        p
        for p in plans
        if p.n_messages >= 60 and not p.big and p.kind == "root" and p.started_at >= legacy_era_end
    ]
    rng.shuffle(long_ones)
    edits = ("hidden", "rewound", "compacted") * 2
    for name, plan in zip(edits, long_ones, strict=False):
        plan.features.add(name)
