"""A deterministic store for the differential tests against Datasette.

Built to exercise what Datasette's API is about rather than the pages: ties in every sortable
column (sources, roles, equal start times and counters), NULLs where sorts and ``_next``
tokens must handle them, values that need tilde-encoding in a token (commas, spaces, ``~``,
``/``, non-ASCII), ``%``/``_`` for ``LIKE``, session ids whose order differs from insertion
order (``api-…`` ids), JSON arrays for ``__arraycontains`` and ``_facet_array``, words and
phrases for ``_search``, and one secret the explorer redacts.
"""

from __future__ import annotations

import random

from tests.builders import NASTY_NOW, StateDB, tool_call

SECRET = "sk-proj-" + "Q7w8E9r0T1y2U3i4O5p6A7s8D9f0G1h2"
SOURCES = ["telegram", "cli", "api_server", "cron", "discord"]
MODELS = ["openai/gpt-5", "anthropic/claude-opus-4.1", None, "x-ai/grok-4"]
WORDS = [
    "telegram", "deploy", "database", "migration", "report", "weather", "invoice", "backup",
    "schedule", "python", "kubernetes", "東京", "café", "naïve", "rollback", "latency",
]  # fmt: skip
TITLES = [
    "Deploy plan, part 1",
    "Deploy plan, part 2",
    "Budget ~ review",
    "100% done_ok",
    "東京 trip",
    "Ünïcödé title",
    "a/b/c path",
    "plus+sign & co",
    "",
]


def build_diff_store(path, shape: str, *, seed: int = 20260101) -> dict:
    """Write the store and return a few facts the corpus needs (ids, words)."""
    rng = random.Random(seed)
    db = StateDB.create(path, shape)
    sessions = []
    for n in range(48):
        if n % 11 == 7:
            sid = f"api-{rng.randrange(16**8):08x}"
        else:
            day = 1 + n // 3
            sid = f"202512{day:02d}_{10 + n % 12:02d}{n % 60:02d}00_{rng.randrange(16**6):06x}"
        started = NASTY_NOW - 86_400 * (40 - n // 2) + (0 if n % 5 == 0 else 37.5 * n)
        title = None if n % 6 == 0 else f"{TITLES[n % len(TITLES)]} #{n}".strip()
        if n == 8:
            title = ""
        if n == 10:
            title = "=HYPERLINK(1) -formula title"
        db.session(
            sid,
            source=SOURCES[n % len(SOURCES)] if n % 13 else "telegram",
            user_id=None if n % 4 == 0 else ("" if n % 9 == 0 else str(1000 + n % 5)),
            model=MODELS[n % len(MODELS)],
            title=title,
            started_at=started,
            ended_at=None if n % 7 == 0 else started + 600 + n,
            input_tokens=(n % 6) * 1000,
            output_tokens=(n % 4) * 250,
            estimated_cost_usd=None if n % 5 == 1 else round((n % 7) * 0.0125, 6),
            end_reason=[None, "idle", "compression", "user_exit"][n % 4],
            cost_status=[None, "estimated", "included", "unknown"][n % 4],
            parent_session_id=sessions[-1] if n % 10 == 3 and sessions else None,
            model_config={"model": MODELS[n % len(MODELS)], "temperature": n % 3},
            system_prompt=f"You are agent {n % 3}." if n % 3 else None,
        )
        sessions.append(sid)
    # Inserted after the others but sorting first by id.
    late = "20251130_235959_000001"
    db.session(late, source="cli", title="Late arrival", started_at=NASTY_NOW - 86_400 * 41)
    sessions.append(late)

    clock = NASTY_NOW - 86_400 * 30
    for i, sid in enumerate(sessions):
        for j in range(rng.randrange(4, 22)):
            role = ["user", "assistant", "tool", "assistant"][j % 4]
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(2, 9)))
            content = None if (i + j) % 17 == 0 else f"{words} ({i}.{j})"
            if i == 5 and j == 1:
                content = f"set OPENAI_API_KEY={SECRET} then deploy"
            if i == 9 and j == 0:
                content = '"exact phrase" with deploy plan and a comma, here'
            extra = {}
            if role == "assistant" and j % 3 == 1:
                extra["tool_calls"] = [
                    tool_call(rng.choice(["terminal", "web_search"]), {"q": words})
                ]
            if role == "tool":
                extra["tool_name"] = rng.choice(["terminal", "web_search", "read_file"])
                extra["tool_call_id"] = f"call_{i}_{j}"
            clock += rng.choice([0, 0, 1, 2.5, 10])  # ties on timestamp
            db.message(
                sid,
                role,
                content,
                timestamp=clock,
                token_count=None if j % 9 == 4 else (j * 7) % 50,
                finish_reason=["stop", None, "tool_calls"][j % 3] if role == "assistant" else None,
                **extra,
            )
    for i, sid in enumerate(sessions[:20]):
        for task in ("", "title", "compression")[: 1 + i % 3]:
            db.model_usage(
                sid,
                MODELS[i % 3] or "unknown/model",
                task,
                input_tokens=i * 10,
                output_tokens=i * 3,
                estimated_cost_usd=None if i % 4 == 0 else i * 0.001,
                billing_provider=["openrouter", "", "anthropic"][i % 3],
            )
    for i, sid in enumerate(sessions[:15]):
        db.daily_usage(sid, f"2025-12-{1 + i % 9:02d}", input_tokens=i * 5, output_tokens=i)
    db.meta("fts_stale", "0")
    db.meta("tags", '["alpha", "beta"]')
    db.meta("tags_2", '["beta", "gamma", "beta"]')
    db.meta("empty", "")
    db.meta("tags_3", "[]")
    db.system_prompt("h1", "You are agent 1.")
    db.system_prompt("h2", "You are agent 2, with a,comma")
    db.refresh_counters()
    db.close()
    return {"sessions": sessions, "late": late, "secret": SECRET}
