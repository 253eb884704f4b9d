"""The random draws the generators share (every one takes the build's seeded ``Random``)."""

from __future__ import annotations

import math
import random


def lognormal_int(rng: random.Random, median: float, sigma: float, lo: int, hi: int) -> int:
    """A long-tailed size around ``median``, clamped to ``[lo, hi]``."""
    return int(min(hi, max(lo, rng.lognormvariate(math.log(median), sigma))))


def weighted(rng: random.Random, weights: dict[str, float]) -> str:
    """One key of ``weights``, drawn in proportion to its weight."""
    return rng.choices(list(weights), weights=list(weights.values()), k=1)[0]
