"""A realistic, seeded Hermes ``state.db`` for the demo and for benchmarks.

:func:`build_demo_db` writes a file of any shape (see :mod:`hermes_fixtures.ddl`) whose data
looks like a busy install: several channels, compression chains, branches and subagent
delegations, model switches, auxiliary usage, every ``cost_status``, tool calls paired with
their results, reasoning, multimodal parts, malformed JSON, hostile HTML, CJK/RTL/emoji, clock
drift, compacted and rewound rows, and a Zipf-like vocabulary with a few planted rare tokens
whose messages are reported back.

It is deterministic for a seed and a ``now``, and fast: the benchmark store (20,000 sessions,
1,000,000 messages, a few GB) is written in a few minutes. Text is assembled from pools of
pre-generated sentences and slices of large pre-generated blobs (:mod:`.corpus`) rather than
word by word, rows go in with ``executemany`` in big batches with the FTS triggers dropped
(:mod:`.writer`), and the FTS indexes are built in one pass at the end.
"""

from __future__ import annotations

from .builder import build_demo_db
from .catalog import RARE_TOKENS

__all__ = ["RARE_TOKENS", "build_demo_db"]
