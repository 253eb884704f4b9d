"""Throughput of the secret redactor over a store's text, as an export sees it.

    .venv/bin/python manage.py make_demo_db var/red-demo.db --sessions 400 --messages 20000
    .venv/bin/python bench/redaction.py var/red-demo.db [--megabytes 50] [--rounds 3]

Reads every text column a transcript or an export redacts (content, tool calls, reasoning, the
system prompt), repeats it up to ``--megabytes``, and times :func:`redact_many` over it in
export-sized batches (best of ``--rounds``), once as read ("clean") and once with a secret
planted in one value of every 25, in the places Hermes puts them (plain text, after a JSON
``\\n``, inside double-encoded tool-call arguments).  Prints MB/s of CPU time (other load on
the machine counts less than in wall-clock time).  A measurement, not a test.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hermes_explorer.settings")
os.environ.setdefault("DJANGO_DEBUG", "1")

import django  # noqa: E402

django.setup()

from redaction import redact_many  # noqa: E402

# Fake values in the shapes of real ones.
PLANTED = (
    "OPENAI_API_KEY=sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z_Ab3dEf6hIj",
    '{"output": "ok\\nghp_a1B2c3D4e5a1B2c3D4e5a1B2c3D4e5a1B2c3D4\\n"}',
    '[{"function": {"arguments": "{\\"command\\": \\"export DB_PASSWORD=\\\\\\"hunter2 x\\\\\\"\\"}"}}]',
    "Authorization: Bearer abcDEF0123456789ghiJKL.xyz",
    '{"output": "AKIAIOSFODNN7EXAMPLE\\n"}',
)
COLUMNS = ("content", "tool_calls", "reasoning")
CHUNK = 1000  # values per redact_many call, as an export chunk


def texts(path: str, megabytes: int) -> list[str]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    have = {row[1] for row in db.execute("PRAGMA table_info(messages)")}
    values: list[str] = []
    for column in COLUMNS:
        if column in have:
            values += [v for (v,) in db.execute(f"SELECT {column} FROM messages") if v]
    values += [v for (v,) in db.execute("SELECT system_prompt FROM sessions") if v]
    size = sum(map(len, values))
    return values * max(1, round(megabytes * 1_000_000 / size))


def rate(values: list[str], rounds: int) -> float:
    size = sum(map(len, values)) / 1e6
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        for start in range(0, len(values), CHUNK):
            redact_many(values[start : start + CHUNK])
        best = min(best, time.process_time() - started)
    return size / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store")
    parser.add_argument("--megabytes", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    clean = texts(args.store, args.megabytes)
    planted = list(clean)
    for i in range(0, len(planted), 25):
        planted[i] = planted[i] + "\n" + PLANTED[(i // 25) % len(PLANTED)]
    size = sum(map(len, clean)) / 1e6
    print(f"{len(clean):,} values, {size:.1f} MB")
    print(f"clean:        {rate(clean, args.rounds):7.1f} MB/s")
    print(f"with secrets: {rate(planted, args.rounds):7.1f} MB/s")


if __name__ == "__main__":
    main()
