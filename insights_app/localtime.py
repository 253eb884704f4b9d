"""Local wall-clock time inside SQL, exact across daylight-saving changes.

SQLite knows only UTC and the server's ``'localtime'``, so the zone's UTC offsets and the
instants they change between the window's first and last session are found here (a few a
year) and written into the SQL as a ``CASE`` over the epoch: every bucket is then a plain
``GROUP BY``.
"""

from __future__ import annotations

import datetime as dt
import itertools
from dataclasses import dataclass
from zoneinfo import ZoneInfo

# Timestamps outside this range (garbage, milliseconds) take the nearest end's offset.
EPOCH_MIN = 0.0
EPOCH_MAX = 4_102_444_800.0  # 2100-01-01
# Offsets never change twice within a day, so probing daily and bisecting finds every change.
PROBE_STEP = 86_400


@dataclass(frozen=True)
class OffsetSegments:
    """The zone's UTC offset (seconds) from ``changes[i][0]`` on; ``first`` before that."""

    first: int
    changes: tuple[tuple[int, int], ...] = ()

    def local_sql(self, expr: str) -> str:
        """SQL for ``expr`` (epoch seconds) shifted to local wall-clock seconds (only numbers
        computed here go into the text)."""
        if not self.changes:
            return f"({expr} + {self.first})"
        parts = [f"WHEN {expr} < {self.changes[0][0]} THEN {expr} + {self.first}"]
        for (_start, offset), (next_start, _next) in itertools.pairwise(self.changes):
            parts.append(f"WHEN {expr} < {next_start} THEN {expr} + {offset}")
        parts.append(f"ELSE {expr} + {self.changes[-1][1]}")
        return "(CASE " + " ".join(parts) + " END)"


def _offset(zone: dt.tzinfo, epoch: float) -> int:
    epoch = min(max(epoch, EPOCH_MIN), EPOCH_MAX)
    offset = dt.datetime.fromtimestamp(epoch, zone).utcoffset()
    return int(offset.total_seconds()) if offset is not None else 0


def offset_segments(zone: dt.tzinfo | str, lo: float | None, hi: float | None) -> OffsetSegments:
    """The offsets of ``zone`` over ``[lo, hi]`` and the exact seconds where they change."""
    if isinstance(zone, str):
        zone = ZoneInfo(zone)
    if lo is None or hi is None:
        return OffsetSegments(first=_offset(zone, lo if lo is not None else 0.0))
    lo = min(max(float(lo), EPOCH_MIN), EPOCH_MAX)
    hi = min(max(float(hi), EPOCH_MIN), EPOCH_MAX)
    first = _offset(zone, lo)
    changes: list[tuple[int, int]] = []
    t, current = int(lo), first
    end = int(hi) + 1
    while t < end:
        probe = min(t + PROBE_STEP, end)
        offset = _offset(zone, probe)
        if offset != current:
            # The change happens in (t, probe]: bisect to the first second of the new offset.
            a, b = t, probe
            while b - a > 1:
                mid = (a + b) // 2
                if _offset(zone, mid) == current:
                    a = mid
                else:
                    b = mid
            changes.append((b, offset))
            current = offset
        t = probe
    return OffsetSegments(first=first, changes=tuple(changes))
