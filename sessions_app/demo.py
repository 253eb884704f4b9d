"""A realistic, seeded Hermes ``state.db`` for the demo and for benchmarks.

``build_demo_db`` writes a file of any of the three shapes (see :mod:`hermes_fixtures.ddl`)
whose data looks like a busy install: several channels, compression chains, branches and
subagent delegations, model switches, auxiliary usage, every ``cost_status``, tool calls
paired with their results, reasoning, multimodal parts, malformed JSON, hostile HTML,
CJK/RTL/emoji, clock drift, compacted and rewound rows, and a Zipf-like vocabulary with a few
planted rare tokens whose messages are reported back.

It is deterministic for a seed and a ``now``, and fast: the benchmark store (20,000 sessions,
1,000,000 messages, a few GB) is written in a few minutes. Text is assembled from pools of
pre-generated sentences and slices of large pre-generated blobs (logs, code, web pages)
rather than word by word, rows go in with ``executemany`` in big batches with the FTS
triggers dropped, and the FTS indexes are built in one pass at the end.

This module has no Django dependency: the run command can call it before Django's database
is configured.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import sqlite3
import string
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from hermes_fixtures import ddl as hermes_ddl

Progress = Callable[[str], None]

# --- What the data is made of ------------------------------------------------------------

SOURCE_WEIGHTS: dict[str, float] = {
    "telegram": 30,
    "cli": 27,
    "api_server": 12,
    "cron": 8,
    "subagent": 7,
    "discord": 7,
    "slack": 6,
    "whatsapp": 1.5,
    "webhook": 1,
}

# Present in every build of at least nine sessions.
REQUIRED_SOURCES = ("cli", "telegram", "api_server", "cron", "subagent", "discord", "slack")

# Relative session length by source (cron jobs are short, coding sessions long).
SOURCE_LENGTH = {
    "telegram": 1.0,
    "cli": 2.0,
    "api_server": 1.6,
    "cron": 0.2,
    "subagent": 0.8,
    "discord": 0.7,
    "slack": 0.7,
    "whatsapp": 0.5,
    "webhook": 0.3,
}

# Tool-call rounds per user turn, on average.
SOURCE_TOOL_ROUNDS = {
    "cli": 3.0,
    "api_server": 2.5,
    "subagent": 4.0,
    "cron": 2.0,
    "telegram": 1.2,
    "discord": 0.8,
    "slack": 1.0,
    "whatsapp": 0.6,
    "webhook": 1.5,
}


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_read: float = 0.0
    cache_write: float = 0.0


@dataclass(frozen=True)
class Route:
    provider: str
    base_url: str
    mode: str  # billing_mode


OPENROUTER = Route("openrouter", "https://openrouter.ai/api/v1", "official_models_api")
ANTHROPIC = Route("anthropic", "https://api.anthropic.com", "official_docs_snapshot")
ANTHROPIC_MAX = Route("anthropic", "https://api.anthropic.com", "subscription_included")
OPENAI = Route("openai", "https://api.openai.com/v1", "official_docs_snapshot")
CODEX = Route("openai-codex", "https://chatgpt.com/backend-api/codex", "subscription_included")
GEMINI = Route(
    "gemini", "https://generativelanguage.googleapis.com/v1beta", "official_docs_snapshot"
)
NOUS = Route("nous", "https://inference-api.nousresearch.com/v1", "subscription_included")
DEEPSEEK = Route("deepseek", "https://api.deepseek.com/v1", "official_docs_snapshot")
LOCAL = Route("custom", "http://localhost:8000/v1", "unknown")


@dataclass(frozen=True)
class ModelInfo:
    name: str
    weight: float
    price: Price | None  # None: no known price (cost_status 'unknown')
    routes: tuple[tuple[Route, float], ...]
    cache: str  # '', 'read' or 'read_write'
    reasoning: str  # '', 'visible' (text) or 'hidden' (tokens only)


MODELS: tuple[ModelInfo, ...] = (
    ModelInfo(
        "anthropic/claude-sonnet-4.5",
        30,
        Price(3, 15, 0.3, 3.75),
        ((ANTHROPIC, 4), (OPENROUTER, 4), (ANTHROPIC_MAX, 2)),
        "read_write",
        "visible",
    ),
    ModelInfo(
        "openai/gpt-5",
        18,
        Price(1.25, 10, 0.125),
        ((OPENAI, 4), (OPENROUTER, 3), (CODEX, 3)),
        "read",
        "hidden",
    ),
    ModelInfo(
        "google/gemini-2.5-pro",
        12,
        Price(1.25, 10, 0.31),
        ((GEMINI, 5), (OPENROUTER, 5)),
        "read",
        "visible",
    ),
    ModelInfo(
        "nousresearch/hermes-4-405b", 12, Price(1, 3), ((NOUS, 6), (OPENROUTER, 4)), "", "visible"
    ),
    ModelInfo(
        "deepseek/deepseek-chat",
        10,
        Price(0.27, 1.1, 0.07),
        ((DEEPSEEK, 5), (OPENROUTER, 5)),
        "read",
        "",
    ),
    ModelInfo(
        "anthropic/claude-opus-4.1",
        5,
        Price(15, 75, 1.5, 18.75),
        ((ANTHROPIC, 5), (OPENROUTER, 5)),
        "read_write",
        "visible",
    ),
    ModelInfo(
        "openai/gpt-5-mini",
        5,
        Price(0.25, 2, 0.025),
        ((OPENAI, 5), (OPENROUTER, 5)),
        "read",
        "hidden",
    ),
    ModelInfo("x-ai/grok-4", 3, Price(3, 15, 0.75), ((OPENROUTER, 1),), "read", "hidden"),
    ModelInfo("qwen/qwen3-coder", 3, Price(0.4, 1.6), ((OPENROUTER, 1),), "", ""),
    # A local model behind a custom endpoint: no price, so every cost is unknown.
    ModelInfo("hermes-4-70b", 2, None, ((LOCAL, 1),), "", "visible"),
)
MODEL_BY_NAME = {m.name: m for m in MODELS}
AUX_MODEL = ModelInfo(
    "google/gemini-2.5-flash", 0, Price(0.3, 2.5, 0.075), ((OPENROUTER, 1),), "read", ""
)

PRICING_VERSION = "2025-10-01"

# The newest 70% of the window is the "current era" (cost tracking, the newer columns);
# the newest 25% also has daily usage.
LEGACY_ERA_SHARE = 0.7
DAILY_ERA_SHARE = 0.25

SKILLS = (
    "github-pr-workflow",
    "arxiv-search",
    "docker-compose-debug",
    "obsidian-notes",
    "himalaya-email",
    "google-calendar",
    "youtube-transcript",
    "pdf-extract",
    "home-assistant",
    "systematic-debugging",
    "test-driven-development",
    "writing-plans",
    "plan-review",
    "ascii-art",
    "spotify-control",
)

# Tool weights by source; sources not listed use the default mix.
DEFAULT_TOOLS = {
    "terminal": 30,
    "read_file": 15,
    "write_file": 7,
    "patch": 7,
    "search_files": 7,
    "web_search": 8,
    "browser_navigate": 4,
    "execute_code": 5,
    "skill_view": 5,
    "skill_manage": 1.5,
    "todo": 3,
    "memory": 2,
    "delegate_task": 0.5,
    "send_message": 1,
    "vision_analyze": 0.5,
}
CHAT_TOOLS = {
    "web_search": 22,
    "send_message": 10,
    "terminal": 10,
    "browser_navigate": 10,
    "skill_view": 7,
    "skill_manage": 1.5,
    "memory": 7,
    "vision_analyze": 4,
    "read_file": 5,
    "execute_code": 4,
    "cronjob": 3,
    "todo": 2,
}
CRON_TOOLS = {
    "web_search": 30,
    "send_message": 30,
    "browser_navigate": 15,
    "terminal": 10,
    "skill_view": 6,
}
TOOLS_BY_SOURCE = {
    "telegram": CHAT_TOOLS,
    "discord": CHAT_TOOLS,
    "slack": CHAT_TOOLS,
    "whatsapp": CHAT_TOOLS,
    "cron": CRON_TOOLS,
}

# Rare tokens planted in exactly this many user messages each (reported back by build).
RARE_TOKENS = {"zyxwvut": 3, "qorblefrantz": 1, "vimbleshank": 5}

USERS: dict[str, tuple[tuple[str, str], ...]] = {
    "telegram": (
        ("5127340981", "Alice"),
        ("7012934455", "Bob"),
        ("6623018877", "陈伟"),
        ("8834120077", "נועה"),
        ("5901238841", "عمر"),
    ),
    "discord": (("318273645510098944", "mara#0001"), ("402918273645510098", "devon")),
    "slack": (("U04AB12CD", "priya"), ("U02XYZ987", "tom")),
    "api_server": (
        ("workspace:alice", "Alice"),
        ("workspace:bob", "Bob"),
        ("openwebui:carol", "Carol"),
    ),
    "whatsapp": (("31612345678", "Sem"),),
    "webhook": (("github:hermes-bot", "GitHub"),),
}
# Telegram users who mostly write in their own script.
USER_SCRIPT = {"6623018877": "cjk", "8834120077": "rtl", "5901238841": "rtl"}

REPOS = (
    ("/home/dev/src/hermes-explorer", "main"),
    ("/home/dev/src/hermes-agent", "feature/fts-trigram"),
    ("/home/dev/src/infra", "main"),
    ("/home/dev/src/website", "fix/navbar"),
    ("/home/dev/notes", "master"),
)

XSS = (
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '"><svg onload=alert(document.cookie)>',
    "<a href=\"javascript:alert('x')\">click me</a>",
    "{{ 7*7 }} {% debug %}",
    "'; DROP TABLE sessions; --",
)
CJK = (
    "请帮我检查一下服务器的日志，看看为什么部署失败了。",
    "这个函数的返回值好像不对，能帮我看看吗？",
    "明天上午十点提醒我开会。",
    "把这段文字翻译成英文：我们下周发布新版本。",
    "日志里有很多超时错误，可能是网络问题。",
    "東京の天気はどうですか？週末に出かける予定です。",
    "このエラーメッセージの意味を教えてください。",
    "데이터베이스 백업이 제대로 되었는지 확인해 주세요.",
)
RTL = (
    "مرحبا، هل يمكنك مساعدتي في تلخيص هذا الملف؟",
    "أرسل التقرير إلى الفريق على تيليجرام من فضلك.",
    "שלום, תוכל לבדוק למה השרת לא עונה?",
    "תזכיר לי מחר בבוקר לשלוח את הדוח.",
    "The report is called تقرير_الربع_الثالث.pdf and it sits in the shared folder.",
)
EMOJI = (
    "Deployed 🚀 all green ✅",
    "That worked, thanks! 🙏",
    "🔥🔥🔥 the build is fast now",
    "👩‍💻 pairing on this today",
    "Weather tomorrow: ☀️ 24°C, 🌧️ in the evening",
    "🇯🇵 trip planning: flights, hotel, JR pass",
    "Got it 👍",
)

WORDS = {
    "service": (
        "nginx",
        "postgres",
        "redis",
        "the gateway",
        "the telegram bot",
        "gunicorn",
        "the cron runner",
        "caddy",
        "the worker pool",
        "minio",
        "grafana",
        "the billing job",
    ),
    "host": (
        "prod-1",
        "staging",
        "the raspberry pi",
        "hetzner-box",
        "the NAS",
        "build-02",
        "localhost",
    ),
    "path": (
        "src/gateway/telegram.py",
        "hermes_state.py",
        "tests/test_search.py",
        "deploy/Caddyfile",
        "README.md",
        "docker-compose.yml",
        "sessions_app/views.py",
        "scripts/backup.sh",
        "config.yaml",
        "~/.hermes/state.db",
    ),
    "lang": ("Python", "TypeScript", "Rust", "Go", "bash", "SQL"),
    "error": (
        "database is locked",
        "ModuleNotFoundError: No module named 'yaml'",
        "connection reset by peer",
        "KeyError: 'chat_id'",
        "401 Unauthorized",
        "timeout after 30s",
        "no such column: archived",
        "disk I/O error",
    ),
    "topic": (
        "SQLite WAL checkpoints",
        "FTS5 tokenizers",
        "prompt caching",
        "telegram webhooks",
        "rate limits",
        "the new pricing",
        "vector search",
        "Django admin",
        "home automation",
        "the Tokyo trip",
        "tax forms",
        "sourdough",
    ),
    "thing": (
        "the export",
        "the search page",
        "the backup script",
        "the login flow",
        "the nightly digest",
        "the insights chart",
        "the migration",
        "the rate limiter",
        "the telegram handler",
        "the README",
    ),
    "branch": ("main", "staging", "feature/search-snippets", "fix/wal-growth", "release-0.9"),
    "task": (
        "renew the domain",
        "call the dentist",
        "review the pull request",
        "water the plants",
        "send the invoice",
        "check the backups",
    ),
    "language": ("French", "German", "Japanese", "Spanish", "Dutch", "Hebrew", "Arabic", "Chinese"),
    "model": tuple(m.name for m in MODELS[:6]),
    "table": ("sessions", "messages", "session_model_usage", "users", "jobs", "events"),
}

USER_TEMPLATES = (
    "Can you check why {service} keeps failing on {host}? The logs mention {term}.",
    "Please summarise {thing} and send it to the team on telegram.",
    "What's the difference between {term} and {term2} in {lang}?",
    "Fix the failing test in {path}, it says {error}.",
    "Remind me to {task} tomorrow at {hour}.",
    "Search the web for {topic} and give me the top three results.",
    "Deploy the {branch} branch to {host} and tell me when it's done.",
    "Write a {lang} script that cleans up {thing} every night.",
    "How much did we spend on {model} this week?",
    "Translate this into {language}: the release moves to next Tuesday.",
    "The {service} dashboard shows {n} errors since this morning. What happened?",
    "Why is {path} so slow when the {table} table is big?",
    "Can you look at {thing}? I think {term} broke it.",
    "Open {path} and explain what the {term} function does.",
    "I got this in telegram: {error}. Any idea?",
    "Add a test for {thing} and make sure the old behaviour still works.",
    "Is {term} still used anywhere? If not, remove it.",
    "What's on my calendar today?",
    "Summarise the unread emails from yesterday.",
    "Check the weather in Tokyo for the weekend.",
    "ok",
    "thanks!",
    "yes, go ahead",
    "no, revert that",
    "continue",
    "looks good, ship it",
)
ASSISTANT_TEMPLATES = (
    "I looked at {path} and the problem is that {service} is started before {service2}.",
    "The {service} service is healthy again; the {term} job was holding a lock on the {table} table.",
    "Here is what I found about {topic}: the short answer is that it depends on {term}.",
    "Done. I pushed the fix to {branch} and the tests pass ({n} passed, {small} skipped).",
    "I sent the summary to the telegram group and pinned it.",
    "The error `{error}` comes from {path}, where {term} is read before it is set.",
    "There are {n} rows in {table}; the query does a full scan because there is no index on {term}.",
    "I can't reach {host} right now, so I checked the last backup instead: it finished at {hour}.",
    "The main difference is that {term} keeps its state on disk while {term2} keeps it in memory.",
    "I updated {path} so that {thing} no longer depends on {service}.",
    "Your {lang} script is below; it runs in about {small} seconds on the sample data.",
    "The week cost about ${small}.{n2} on {model}, most of it in the long {thing} session.",
    "I've set a reminder to {task} at {hour}.",
    "Three results stood out for {topic}; the second one is the most recent and the most useful.",
    "The telegram webhook was returning {error}, so messages were queued; they are flowing again.",
    "I rewrote {thing} to stream the rows instead of loading them all, which keeps memory flat.",
    "Note that the {table} counters can lag a few seconds behind the messages.",
    "That should be it. Let me know if {thing} misbehaves again.",
)
REASONING_TEMPLATES = (
    "The user wants {thing} fixed. Let me first read {path} to see how {term} is used.",
    "I should check the logs on {host} before changing anything.",
    "The error mentions {error}; that usually means {service} restarted mid-request.",
    "Two options: patch {path} directly, or add a guard in {term}. The guard is safer.",
    "The test fails only when the {table} table is empty, so the fix belongs in the query.",
)
HIDDEN_NOTES = (
    "[System note: the user's previous message arrived while you were busy; continue the task.]",
    "[System note: a background review suggested saving a skill for this workflow.]",
    "[System note: the tool output above was truncated to fit the context window.]",
)

SYLLABLES_ONSET = (
    "b c d f g h j k l m n p r s t v w z br cr dr fl gl kr pl pr sk st tr bl ch sh th".split()
)
SYLLABLES_VOWEL = "a e i o u ai ea ie oo ou".split()
SYLLABLES_CODA = ("", "", "", "n", "r", "l", "s", "t", "m", "x", "nd", "rk", "st")


# --- Text pools --------------------------------------------------------------------------


class _Corpus:
    """Pre-generated sentences and blobs that messages are assembled from."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.tail_words = self._tail_vocabulary(rng, 30_000)
        # Zipf-like: a few terms are everywhere, most appear a handful of times.
        self.tail_cum = list(accumulate(1.0 / (rank + 8) for rank in range(len(self.tail_words))))
        self.user_sentences = [self._fill(rng.choice(USER_TEMPLATES)) for _ in range(4000)]
        self.assistant_sentences = [
            self._fill(rng.choice(ASSISTANT_TEMPLATES)) for _ in range(6000)
        ]
        self.reasoning_sentences = [
            self._fill(rng.choice(REASONING_TEMPLATES)) for _ in range(1500)
        ]
        self.log_blob = self._log_blob(4_500_000)
        self.code_blob = self._code_blob(1_200_000)
        self.page_blob = self._page_blob(600_000)
        self.skill_docs = {name: self._skill_doc(name) for name in SKILLS}
        self.system_prompts = [self._system_prompt(i) for i in range(8)]

    @staticmethod
    def _tail_vocabulary(rng: random.Random, size: int) -> list[str]:
        words: list[str] = []
        seen = set(RARE_TOKENS) | {"quokkafjord"}
        while len(words) < size:
            word = "".join(
                rng.choice(SYLLABLES_ONSET)
                + rng.choice(SYLLABLES_VOWEL)
                + rng.choice(SYLLABLES_CODA)
                for _ in range(rng.choice((2, 2, 3, 3, 4)))
            )
            if word not in seen:
                seen.add(word)
                words.append(word)
        return words

    def term(self) -> str:
        return self.rng.choices(self.tail_words, cum_weights=self.tail_cum, k=1)[0]

    def _fill(self, template: str) -> str:
        rng = self.rng
        values: dict[str, str] = {}
        for _, name, _, _ in string.Formatter().parse(template):
            if not name or name in values:
                continue
            base = name.rstrip("0123456789")
            if base == "term":
                values[name] = self.term()
            elif base == "n":
                values[name] = (
                    str(rng.randint(2, 5000)) if name == "n" else f"{rng.randint(0, 99):02d}"
                )
            elif base == "small":
                values[name] = str(rng.randint(1, 40))
            elif base == "hour":
                values[name] = f"{rng.randint(7, 21)}:{rng.choice(('00', '15', '30', '45'))}"
            else:
                values[name] = rng.choice(WORDS[base])
        return template.format(**values)

    def _log_line(self) -> str:
        rng, term = self.rng, self.term
        kind = rng.random()
        clock = f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}"
        if kind < 0.35:
            level = rng.choice(("INFO ", "INFO ", "WARN ", "ERROR", "DEBUG"))
            verb = rng.choice(("completed in", "queued for", "retried after"))
            return (
                f"2025-10-{rng.randint(1, 28):02d}T{clock}:{rng.randint(0, 59):02d}Z {level} "
                f"{rng.choice(WORDS['service'])}: request {rng.getrandbits(32):08x} "
                f"{verb} {rng.randint(1, 9000)}ms {term()}"
            )
        if kind < 0.5:
            outcome = rng.choice(("PASSED", "PASSED", "PASSED", "FAILED", "SKIPPED"))
            suffix = rng.choice(("works", "fails", "is_escaped"))
            return f"{outcome} tests/test_{term()}.py::test_{term()}_{suffix}"
        if kind < 0.65:
            ext = rng.choice(("py", "md", "json", "log", "txt"))
            size = rng.randint(0, 999999)
            return (
                f"-rw-r--r-- 1 dev dev {size:>7} Oct {rng.randint(1, 28):>2} {clock} {term()}.{ext}"
            )
        if kind < 0.75:
            return (
                f"commit {rng.getrandbits(160):040x}\nAuthor: dev <dev@example.org>\n\n"
                f"    {term()}: {rng.choice(WORDS['thing'])}\n"
            )
        if kind < 0.85:
            return (
                f"Collecting {term()}=={rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}"
            )
        if kind < 0.93:
            return f'  File "/home/dev/src/{term()}.py", line {rng.randint(1, 900)}, in {term()}'
        return rng.choice(WORDS["error"])

    def _log_blob(self, size: int) -> str:
        out: list[str] = []
        total = 0
        while total < size:
            line = self._log_line()
            out.append(line)
            total += len(line) + 1
        return "\n".join(out)

    def _code_blob(self, size: int) -> str:
        rng = self.rng
        out: list[str] = []
        total = 0
        while total < size:
            name, arg, column = self.term(), self.term(), self.term()
            table = rng.choice(WORDS["table"])
            block = (
                f"def {name}({arg}, *, limit: int = {rng.randint(10, 500)}) -> list[str]:\n"
                f'    """Return the {table} rows for {arg}."""\n'
                f'    rows = db.execute("SELECT id FROM {table} WHERE {column} = ?", ({arg},))\n'
                f"    if not rows:\n        raise ValueError({rng.choice(WORDS['error'])!r})\n"
                f"    return [row[0] for row in rows][:limit]\n\n"
            )
            out.append(block)
            total += len(block)
        return "".join(out)

    def _page_blob(self, size: int) -> str:
        rng = self.rng
        out: list[str] = []
        total = 0
        while total < size:
            if rng.random() < 0.03:
                chunk = f'<div class="ad">{rng.choice(XSS)}</div>\n'
            else:
                chunk = (
                    f"<h2>{rng.choice(WORDS['topic'])}</h2>\n<p>"
                    + " ".join(
                        rng.choice(self.assistant_sentences) for _ in range(rng.randint(1, 4))
                    )
                    + "</p>\n"
                )
            out.append(chunk)
            total += len(chunk)
        return "".join(out)

    def _skill_doc(self, name: str) -> str:
        body = "\n".join(f"- {s}" for s in self.rng.sample(self.assistant_sentences, 12))
        description = self.rng.choice(self.assistant_sentences)
        return (
            f"---\nname: {name}\ndescription: {description}\n---\n\n# {name}\n\n## Steps\n{body}\n"
        )

    def _system_prompt(self, index: int) -> str:
        tools = ", ".join(sorted(DEFAULT_TOOLS))
        memory = " ".join(self.rng.sample(self.assistant_sentences, 20 + 6 * index))
        return (
            "You are Hermes, an autonomous agent made by Nous Research. Be concise and careful; "
            "ask before destructive actions.\n\n"
            f"# Tools\nYou can call: {tools}.\n\n# Memory\n{memory}\n\n"
            f"# Skills\n{', '.join(SKILLS)}\n\n# Profile {index}\nToday is a good day to ship.\n"
        )

    # Assembling message text.

    def prose(self, pool: list[str], n_bytes: int) -> str:
        k = max(1, n_bytes // 90)
        parts = self.rng.choices(pool, k=k)
        if k > 4:
            parts[k // 2] += "\n\n"
        return " ".join(parts)

    def slice(self, blob: str, n_bytes: int) -> str:
        start = self.rng.randrange(0, max(1, len(blob) - n_bytes))
        # Start on a line boundary so outputs read like real ones.
        nl = blob.find("\n", start, start + 400)
        if nl != -1:
            start = nl + 1
        return blob[start : start + n_bytes]


def _lognormal_int(rng: random.Random, median: float, sigma: float, lo: int, hi: int) -> int:
    return int(min(hi, max(lo, rng.lognormvariate(math.log(median), sigma))))


def _weighted(rng: random.Random, weights: dict[str, float]) -> str:
    return rng.choices(list(weights), weights=list(weights.values()), k=1)[0]


def _day(ts: float) -> str:
    return time.strftime("%Y-%m-%d", time.localtime(ts))


# --- Planning sessions -------------------------------------------------------------------


@dataclass(eq=False)  # identity semantics: plans link to each other both ways
class _Plan:
    index: int
    source: str
    n_messages: int
    started_at: float = 0.0  # roots only; children start from their parent
    kind: str = "root"  # root, compression, branch, reset, subagent
    parent: _Plan | None = None
    children: list[_Plan] = field(default_factory=list)
    big: bool = False
    # Filled while generating.
    id: str = ""
    ended_at: float | None = None
    delegate_rows: list[dict[str, Any]] = field(default_factory=list)
    model: ModelInfo | None = None
    route: Route | None = None
    user: tuple[str, str] | None = None
    features: set[str] = field(default_factory=set)


_HOUR_WEIGHTS = (
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


def _start_time(rng: random.Random, now: float, days: int, source: str) -> float:
    """A start time in the window, biased to recent days, working hours and weekdays."""
    for _ in range(20):
        age_days = days * rng.random() ** 1.7
        local = time.localtime(now - age_days * 86400)
        if local.tm_wday >= 5 and rng.random() < 0.45:
            continue  # quieter weekends
        if source == "cron":  # scheduled jobs run at fixed times
            hour, minute, second = rng.choice((7, 8, 18)), rng.choice((0, 30)), rng.randint(0, 4)
        else:
            hour = rng.choices(range(24), weights=_HOUR_WEIGHTS, k=1)[0]
            minute, second = rng.randint(0, 59), rng.randint(0, 59)
        ts = time.mktime(
            (local.tm_year, local.tm_mon, local.tm_mday, hour, minute, second, 0, 0, -1)
        )
        ts += rng.random()
        if now - days * 86400 <= ts <= now - 60:
            return ts
    return now - rng.uniform(3600, days * 86400 * 0.9)


def _allocate(weights: list[float], total: int, minimum: int) -> list[int]:
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


def _plan(
    rng: random.Random, n_sessions: int, n_messages: int, now: float, days: int
) -> list[_Plan]:
    sources = [_weighted(rng, SOURCE_WEIGHTS) for _ in range(n_sessions)]
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
        for i, c in zip(used, _allocate(weights, n_messages - big_count, 2), strict=True):
            counts[i] = c
        counts[big_index] = big_count
    else:
        counts[big_index] = n_messages
    plans = [_Plan(i, s, counts[i]) for i, s in enumerate(sources)]
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
            p.started_at = _start_time(rng, now, days, p.source)
    big = plans[big_index]
    if big.kind == "root":
        big.started_at = min(big.started_at, now - days * 86400 * 0.15)
    return plans


# --- Generating one session --------------------------------------------------------------

_MSG_DEFAULTS: dict[str, Any] = {
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

_MALFORMED_TOOL_CALLS = (
    # Cut off mid-write.
    '[{"id": "call_trunc", "type": "function", "function": {"name": "terminal", '
    '"arguments": "{\\"command\\": \\"ls -la',
    # A Python repr instead of JSON.
    "[{'id': 'call_repr', 'type': 'function', 'function': {'name': 'read_file', "
    "'arguments': {'path': 'README.md'}}}]",
    "tool_calls: terminal(ls)",
    '{"id": "call_obj", "function": {"name": "terminal"}}',
)


@dataclass
class _Usage:
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


def _cost(price: Price | None, inp: int, out: int, cr: int, cw: int) -> float:
    if price is None:
        return 0.0
    return (
        inp * price.input + out * price.output + cr * price.cache_read + cw * price.cache_write
    ) / 1e6


class _Builder:
    """Generates sessions and writes them in batches."""

    BATCH_MESSAGES = 25_000
    BATCH_BYTES = 96 * 1024 * 1024

    def __init__(
        self,
        conn: sqlite3.Connection,
        shape: str,
        rng: random.Random,
        now: float,
        days: int,
        n_messages: int,
        progress: Progress | None,
    ) -> None:
        self.conn, self.shape, self.rng, self.now, self.days = conn, shape, rng, now, days
        self.progress = progress
        self.corpus = _Corpus(rng)
        self.cols = {t: self._ordered_columns(t) for t in ("sessions", "messages")}
        self.has_usage = shape != "doc"
        self.current = shape == "current"
        if self.has_usage:
            self.cols["session_model_usage"] = self._ordered_columns("session_model_usage")
        if self.current:
            self.cols["session_daily_usage"] = self._ordered_columns("session_daily_usage")
        # Eras: the oldest sessions predate cost tracking and the newer columns; only the newest
        # have daily usage (it was not backfilled).
        self.legacy_era_end = now - days * 86400 * LEGACY_ERA_SHARE
        self.daily_era_start = now - days * 86400 * DAILY_ERA_SHARE
        self.next_message_id = 1
        self.carry = 0
        self.pending: dict[str, list[tuple[Any, ...]]] = {t: [] for t in self.cols}
        self.pending_bytes = 0
        self.titles: set[str] = set()
        self.session_ids: set[str] = set()
        self.prompt_hashes: dict[str, str] = {}
        self.counts = {
            "sessions": 0,
            "messages": 0,
            "tool_calls": 0,
            "model_usage_rows": 0,
            "daily_usage_rows": 0,
        }
        self.by_source: dict[str, int] = {}
        self.started = time.monotonic()
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
        self.plans: list[_Plan] = []

    def _ordered_columns(self, table: str) -> list[str]:
        return [row[1] for row in self.conn.execute(f"PRAGMA table_info({table})")]

    # Session-level attributes.

    def _unique_title(self, title: str) -> str:
        title = title[:100]
        candidate, k = title, 2
        while candidate in self.titles:
            suffix = f" ({k})"
            candidate = title[: 100 - len(suffix)] + suffix
            k += 1
        self.titles.add(candidate)
        return candidate

    def _session_id(self, plan: _Plan) -> str:
        rng = self.rng
        while True:
            if plan.source == "api_server" and rng.random() < 0.5:
                sid = f"api-{rng.getrandbits(64):016x}"
            else:
                stamp = time.strftime("%Y%m%d_%H%M%S", time.localtime(plan.started_at))
                sid = f"{stamp}_{rng.getrandbits(24):06x}"
            if sid not in self.session_ids:
                self.session_ids.add(sid)
                return sid

    def _title(self, plan: _Plan) -> str | None:
        rng = self.rng
        if "xss_title" in plan.features:
            # Only the payloads that are markup: the point is a title that must be escaped.
            return self._unique_title(f"{rng.choice(XSS[:4])} {rng.choice(WORDS['thing'])}")
        if "null_title" in plan.features or plan.n_messages == 0:
            return None
        if plan.source == "cron":
            if rng.random() < 0.6:
                return None
            job = rng.choice(("Daily digest", "Inbox triage", "Price watch", "Backup check"))
            return self._unique_title(f"Cron: {job} {_day(plan.started_at)}")
        if rng.random() < 0.1:
            return None
        r = rng.random()
        if r < 0.04:
            return self._unique_title(rng.choice(CJK)[:30])
        if r < 0.07:
            return self._unique_title(rng.choice(RTL)[:40])
        if r < 0.11:
            return self._unique_title(rng.choice(EMOJI))
        verb = rng.choice(
            ("Fix", "Debug", "Review", "Plan", "Summarise", "Explain", "Speed up", "Test")
        )
        return self._unique_title(f"{verb} {rng.choice(WORDS['thing'])} ({self.corpus.term()})")

    # Messages.

    def _row(self, role: str, ts: float, **values: Any) -> dict[str, Any]:
        row = dict(_MSG_DEFAULTS)
        row["role"] = role
        row["timestamp"] = ts
        row.update(values)
        return row

    def _user_text(self, plan: _Plan) -> str:
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
                + corpus.slice(corpus.log_blob, _lognormal_int(rng, 1500, 0.8, 200, 12_000))
                + "\n```"
            )
        else:
            text = corpus.prose(corpus.user_sentences, _lognormal_int(rng, 110, 0.9, 20, 3000))
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

    def _tool_call(self, plan: _Plan, name: str) -> tuple[dict[str, Any], str]:
        """One tool call (as stored in ``tool_calls``) and the output it produced."""
        rng, corpus = self.rng, self.corpus
        args: dict[str, Any]
        if name == "terminal":
            cmd = rng.choice(
                (
                    "git status",
                    "pytest -q",
                    "docker compose ps",
                    "tail -n 200 /var/log/syslog",
                    "ls -la",
                    "pip install -r requirements.txt",
                    "journalctl -u hermes-gateway --since today",
                )
            )
            args, output = {"command": cmd}, corpus.slice(corpus.log_blob, self._tool_size())
        elif name == "read_file":
            args, output = (
                {"path": rng.choice(WORDS["path"])},
                corpus.slice(corpus.code_blob, self._tool_size()),
            )
        elif name == "write_file":
            body = corpus.slice(corpus.code_blob, rng.randint(100, 2500))
            args = {"path": rng.choice(WORDS["path"]), "content": body}
            output = json.dumps({"success": True, "bytes_written": len(body)})
        elif name == "patch":
            args = {
                "path": rng.choice(WORDS["path"]),
                "old_string": corpus.term(),
                "new_string": corpus.term(),
            }
            output = json.dumps(
                {"success": True, "diff": corpus.slice(corpus.code_blob, rng.randint(100, 900))}
            )
        elif name == "search_files":
            args = {"pattern": corpus.term(), "path": "."}
            output = corpus.slice(corpus.log_blob, self._tool_size() // 2 + 50)
        elif name == "web_search":
            args = {"query": f"{rng.choice(WORDS['topic'])} {corpus.term()}"}
            results = [
                {
                    "title": rng.choice(corpus.assistant_sentences)[:70],
                    "url": f"https://{corpus.term()}.example.com/{corpus.term()}",
                    "description": rng.choice(corpus.assistant_sentences),
                }
                for _ in range(rng.randint(3, 8))
            ]
            output = json.dumps({"data": {"web": results}}, ensure_ascii=False)
        elif name == "browser_navigate":
            args = {"url": f"https://{corpus.term()}.example.org/"}
            output = corpus.slice(corpus.page_blob, self._tool_size())
        elif name == "execute_code":
            args = {"code": corpus.slice(corpus.code_blob, rng.randint(100, 800))}
            output = json.dumps(
                {
                    "status": "success",
                    "output": corpus.slice(corpus.log_blob, rng.randint(50, 2000)),
                }
            )
        elif name in ("skill_view", "skill_manage"):
            skill = rng.choice(SKILLS)
            if name == "skill_view":
                args, output = {"name": skill}, corpus.skill_docs[skill]
            else:
                args = {
                    "action": rng.choice(("patch", "edit", "create")),
                    "name": skill,
                    "content": rng.choice(corpus.assistant_sentences),
                }
                output = json.dumps({"success": True, "skill": skill})
        elif name == "send_message":
            target = "telegram" if rng.random() < 0.7 else rng.choice(("discord", "slack"))
            args = {"target": target, "message": rng.choice(corpus.assistant_sentences)}
            output = json.dumps(
                {"ok": True, "platform": target, "message_id": rng.randint(1000, 99999)}
            )
        elif name == "memory":
            args = {
                "action": "add",
                "target": "memory",
                "content": rng.choice(corpus.assistant_sentences),
            }
            output = json.dumps({"success": True, "entries": rng.randint(3, 40)})
        elif name == "todo":
            args = {
                "todos": [
                    {"id": str(i), "content": rng.choice(WORDS["task"]), "status": "pending"}
                    for i in range(rng.randint(1, 4))
                ]
            }
            output = json.dumps({"todos": args["todos"]})
        elif name == "vision_analyze":
            args = {
                "image_url": f"https://files.example.org/{rng.getrandbits(40):010x}.jpg",
                "question": "What is in this picture?",
            }
            output = json.dumps(
                {"success": True, "analysis": rng.choice(corpus.assistant_sentences)}
            )
        elif name == "delegate_task":
            args = {
                "goal": rng.choice(corpus.user_sentences),
                "toolsets": ["terminal", "file", "web"],
            }
            output = json.dumps(
                {"status": "completed", "summary": corpus.prose(corpus.assistant_sentences, 400)}
            )
        elif name == "cronjob":
            args = {
                "action": "create",
                "schedule": "0 7 * * *",
                "prompt": rng.choice(corpus.user_sentences),
            }
            output = json.dumps({"success": True, "job_id": f"{rng.getrandbits(32):08x}"})
        else:  # pragma: no cover - every name above is handled
            args, output = {}, ""
        call = {
            "id": f"call_{rng.getrandbits(96):024x}",
            "type": "function",
            # Hermes stores the arguments as a JSON string inside the JSON list.
            "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
        }
        return call, output

    def _tool_size(self) -> int:
        # Median ~1.2 KB, a long tail into tens of KB.
        return _lognormal_int(self.rng, 1200, 1.25, 40, 80_000)

    def _gap(self, plan: _Plan, after_role: str) -> float:
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

    def _session_rows(self, plan: _Plan, n: int) -> list[dict[str, Any]]:
        rng = self.rng
        rows: list[dict[str, Any]] = []
        t = plan.started_at
        rounds_mean = SOURCE_TOOL_ROUNDS[plan.source]
        tools = TOOLS_BY_SOURCE.get(plan.source, DEFAULT_TOOLS)
        model = plan.model
        assert model is not None
        cli_like = plan.source == "cli"
        era_current = plan.started_at >= self.legacy_era_end
        if plan.kind == "compression" and n > 0:
            summary = "[CONTEXT SUMMARY] Continued from a compressed session. " + self.corpus.prose(
                self.corpus.assistant_sentences, 1200
            )
            rows.append(self._row("user", t, content=summary, _compressed_summary=1))
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
            rows.append(self._row("session_meta", t, content=json.dumps(meta)))
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
                        name = _weighted(rng, tools)
                    call, output = self._tool_call(plan, name)
                    calls.append(call)
                    outputs.append(output)
                content = (
                    None if rng.random() < 0.6 else rng.choice(self.corpus.assistant_sentences)
                )
                tool_calls = json.dumps(calls, ensure_ascii=False)
                n_valid = len(calls)
                if self.tool_call_ordinal in self.malformed_targets:
                    tool_calls = _MALFORMED_TOOL_CALLS[
                        len(self.malformed_targets) % len(_MALFORMED_TOOL_CALLS)
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
                    trow = self._row(
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
            text = self._assistant_text(_lognormal_int(rng, 500, 0.9, 20, 6000))
            rows.append(self._assistant_row(plan, t, text, None, finish))
        del rows[n:]
        return rows

    def _user_row(self, plan: _Plan, t: float) -> dict[str, Any]:
        rng = self.rng
        if plan.source == "cron":
            job = rng.choice(
                (
                    "Summarise unread email and post the digest to telegram.",
                    "Check the price of the flight to Tokyo and tell me if it dropped.",
                    "Run the backup check and report failures.",
                )
            )
            return self._row("user", t, content=f"[Scheduled job] {job}")
        if plan.source == "subagent":
            return self._row("user", t, content=self.corpus.prose(self.corpus.user_sentences, 300))
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
        row = self._row("user", t, content=text)
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
        self, plan: _Plan, t: float, content: str | None, tool_calls: str | None, finish: str
    ) -> dict[str, Any]:
        rng = self.rng
        model = plan.model
        assert model is not None
        row = self._row(
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

    def _plan_edits(self, plan: _Plan, n: int) -> set[str]:
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

    def _edit_transcript(
        self, plan: _Plan, rows: list[dict[str, Any]], edits: set[str]
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
            note = self._row(
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
            summary = self._row(
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

    def _fit_in_time(self, plan: _Plan, rows: list[dict[str, Any]]) -> None:
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

    # Whole session.

    def generate(self, plan: _Plan) -> None:
        rng = self.rng
        parent = plan.parent
        if parent is not None:
            if plan.kind == "subagent":
                # It starts right after the parent's delegate_task call, when there is one.
                if parent.delegate_rows:
                    plan.started_at = parent.delegate_rows.pop(0)["timestamp"] + rng.uniform(0.5, 3)
                else:
                    plan.started_at = parent.started_at + rng.uniform(10, 600)
            else:
                parent_end = (
                    parent.ended_at if parent.ended_at is not None else parent.started_at + 600
                )
                plan.started_at = max(parent_end, parent.started_at) + rng.uniform(2, 30)
            plan.started_at = min(plan.started_at, self.now - 60)
        # Route and identity.
        if parent is not None and plan.kind != "subagent":
            plan.model, plan.route, plan.user = parent.model, parent.route, parent.user
        else:
            plan.model = rng.choices(MODELS, weights=[m.weight for m in MODELS], k=1)[0]
            plan.route = rng.choices(
                [r for r, _ in plan.model.routes], weights=[w for _, w in plan.model.routes], k=1
            )[0]
            users = USERS.get(plan.source)
            plan.user = rng.choice(users) if users else None
        forced = {
            "cost_unknown": (MODEL_BY_NAME["hermes-4-70b"], LOCAL),
            "cost_included": (MODEL_BY_NAME["anthropic/claude-sonnet-4.5"], ANTHROPIC_MAX),
            "cost_actual": (MODEL_BY_NAME["anthropic/claude-sonnet-4.5"], OPENROUTER),
            "cost_estimated": (MODEL_BY_NAME["openai/gpt-5"], OPENAI),
        }
        for feature, (model, route) in forced.items():
            if feature in plan.features:
                plan.model, plan.route = model, route
        if plan.kind == "subagent":
            plan.user = None
        plan.id = self._session_id(plan)
        # Rows a previous session could not use are carried over, so totals stay exact.
        n = max(0, plan.n_messages + self.carry) if plan.n_messages else 0
        era_current = plan.started_at >= self.legacy_era_end
        edits = self._plan_edits(plan, n) if self.current and era_current else set()
        extra = ("hidden" in edits) + 2 * ("compacted" in edits)
        rows = self._session_rows(plan, n - extra)
        if edits:
            rows = self._edit_transcript(plan, rows, edits)
        self.carry = n - len(rows) if plan.n_messages else self.carry
        plan.n_messages = len(rows)
        self._fit_in_time(plan, rows)
        # Model switch: the second half of the calls go to another model.
        switch_at: float | None = None
        second: ModelInfo | None = None
        if len(rows) >= 10 and ("switch" in plan.features or rng.random() < 0.06):
            second = rng.choice([m for m in MODELS if m is not plan.model])
            switch_at = rows[len(rows) // 2]["timestamp"]
        self._finish_session(plan, rows, switch_at, second)
        for child in plan.children:
            self.generate(child)

    def _finish_session(
        self,
        plan: _Plan,
        rows: list[dict[str, Any]],
        switch_at: float | None,
        second: ModelInfo | None,
    ) -> None:
        rng = self.rng
        model = plan.model
        assert model is not None
        era_current = plan.started_at >= self.legacy_era_end
        with_daily = self.current and plan.started_at >= self.daily_era_start
        prompt_index = rng.randrange(len(self.corpus.system_prompts))
        prompt = self.corpus.system_prompts[prompt_index]
        ctx = len(prompt) // 4
        prev_ctx = 0
        per_model: dict[str, _Usage] = {}
        per_day: dict[str, _Usage] = {}
        tool_calls_total = 0
        sid = plan.id
        for r in rows:
            r["id"] = self.next_message_id
            self.next_message_id += 1
            r["session_id"] = sid
            content = r["content"]
            tokens = (len(content) if content else 0) + (
                len(r["tool_calls"]) if r["tool_calls"] else 0
            )
            r["token_count"] = tokens // 4 + (1 if r["role"] == "assistant" else 0)
            if self.current and era_current:
                r["message_uid"] = f"{rng.getrandbits(128):032x}"
            if r["role"] == "assistant":
                use = (
                    second
                    if (switch_at is not None and second and r["timestamp"] >= switch_at)
                    else model
                )
                tool_calls_total += r.get("_n_calls", 0)
                # One API call per assistant row: the context so far, mostly cached.
                total_in = min(ctx, 180_000)
                cr = cw = 0
                if use.cache and prev_ctx:
                    cr = int(min(prev_ctx, total_in) * rng.uniform(0.75, 0.95))
                    if use.cache == "read_write":
                        cw = max(0, total_in - prev_ctx)
                inp = max(0, total_in - cr - cw)
                rs = 0
                if r["reasoning"]:
                    rs = len(r["reasoning"]) // 4
                elif use.reasoning == "hidden":
                    rs = rng.randint(32, 900)
                out = r["token_count"] + rs
                cost = _cost(use.price, inp, out, cr, cw)
                per_model.setdefault(use.name, _Usage()).add(
                    r["timestamp"], inp, out, cr, cw, rs, cost
                )
                if with_daily:
                    per_day.setdefault(_day(r["timestamp"]), _Usage()).add(
                        r["timestamp"], inp, out, cr, cw, rs, cost
                    )
                prev_ctx = total_in
            ctx += r["token_count"]
        self._emit_session(plan, rows, prompt, per_model, per_day, tool_calls_total, second)

    def _emit_session(
        self,
        plan: _Plan,
        rows: list[dict[str, Any]],
        prompt: str,
        per_model: dict[str, _Usage],
        per_day: dict[str, _Usage],
        tool_calls_total: int,
        second: ModelInfo | None,
    ) -> None:
        rng = self.rng
        model, route = plan.model, plan.route
        assert model is not None and route is not None
        era_current = plan.started_at >= self.legacy_era_end
        total = _Usage()
        for u in per_model.values():
            total.api_call_count += u.api_call_count
            total.input_tokens += u.input_tokens
            total.output_tokens += u.output_tokens
            total.cache_read_tokens += u.cache_read_tokens
            total.cache_write_tokens += u.cache_write_tokens
            total.reasoning_tokens += u.reasoning_tokens
            total.cost += u.cost
        last_ts = max((r["timestamp"] for r in rows), default=plan.started_at)

        # Cost status: what the route tells us, or nothing at all for old sessions.
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

        def money(cost: float) -> float | None:
            if status == "included":
                return 0.0
            if status == "unknown" or (status is None and model.price is None):
                return None
            return round(cost, 6)

        # End of the session.
        if "drift" in plan.features:
            ended_at: float | None = plan.started_at - rng.uniform(5, 900)
        elif "open" in plan.features or (
            plan.source in ("telegram", "discord", "slack", "api_server")
            and self.now - last_ts < 3 * 86400
            and rng.random() < 0.4
        ):
            ended_at = None
        else:
            ended_at = min(self.now - 1, last_ts + rng.uniform(1, 300))
        kinds = {c.kind for c in plan.children}
        if "compression" in kinds:
            end_reason: str | None = "compression"
        elif "branch" in kinds:
            end_reason = "branched"
        elif "reset" in kinds:
            end_reason = "session_reset"
        elif ended_at is None:
            end_reason = None
        else:
            end_reason = {
                "cli": rng.choice(("cli_close", "user_exit")),
                "cron": "completed",
                "subagent": "completed",
            }.get(plan.source, "idle")
        if kinds - {"subagent"} and ended_at is None:
            ended_at = min(self.now - 1, last_ts + 1)
        plan.ended_at = ended_at if ended_at is not None else last_ts

        title = self._title(plan)
        config: dict[str, Any] = {
            "model": model.name,
            "provider": route.provider,
            "base_url": route.base_url,
        }
        marker = {
            "subagent": "_delegate_from",
            "branch": "_branched_from",
            "reset": "_reset_from",
        }.get(plan.kind)
        if marker and plan.parent is not None:
            config[marker] = plan.parent.id
        srow: dict[str, Any] = {
            "id": plan.id,
            "source": plan.source,
            "user_id": plan.user[0] if plan.user else None,
            "model": model.name,
            "title": title,
            "started_at": plan.started_at,
            "ended_at": ended_at,
            "message_count": len(rows),
            "input_tokens": total.input_tokens,
            "output_tokens": total.output_tokens,
            "estimated_cost_usd": money(total.cost),
            "model_config": json.dumps(config) if era_current or rng.random() < 0.9 else None,
            "parent_session_id": plan.parent.id if plan.parent is not None else None,
            "end_reason": end_reason,
            "tool_call_count": tool_calls_total,
            "api_call_count": total.api_call_count,
            "cache_read_tokens": total.cache_read_tokens,
            "cache_write_tokens": total.cache_write_tokens,
            "reasoning_tokens": total.reasoning_tokens,
            "billing_provider": route.provider if era_current else None,
            "billing_base_url": route.base_url if era_current else None,
            "billing_mode": route.mode if era_current else None,
            "actual_cost_usd": round(total.cost * actual_factor, 6) if actual_factor else None,
            "cost_status": status,
            "cost_source": cost_source,
            "pricing_version": PRICING_VERSION if status in ("estimated", "actual") else None,
            "archived": 0,
            "auto_archived": 0,
            "pinned": 0,
            "hidden": 0,
            "compression_count": 0,
        }
        if self.current and era_current:
            self._current_columns(plan, srow, prompt, last_ts, title)
        else:
            srow["system_prompt"] = prompt
        self._add("sessions", srow)
        for r in rows:
            self._add("messages", r)
            self.pending_bytes += len(r["content"]) if r["content"] else 0

        if self.has_usage:
            self._emit_usage(
                plan,
                per_model,
                per_day,
                total,
                status,
                cost_source,
                money,
                actual_factor,
                era_current,
            )
        self.counts["sessions"] += 1
        self.counts["messages"] += len(rows)
        self.counts["tool_calls"] += tool_calls_total
        self.by_source[plan.source] = self.by_source.get(plan.source, 0) + 1
        if (
            len(self.pending["messages"]) >= self.BATCH_MESSAGES
            or self.pending_bytes >= self.BATCH_BYTES
        ):
            self.flush()

    def _current_columns(
        self, plan: _Plan, srow: dict[str, Any], prompt: str, last_ts: float, title: str | None
    ) -> None:
        rng = self.rng
        digest = hashlib.sha256(prompt.encode()).hexdigest()
        if digest not in self.prompt_hashes:
            self.prompt_hashes[digest] = prompt
            self.conn.execute(
                "INSERT INTO system_prompts (hash, prompt) VALUES (?, ?)", (digest, prompt)
            )
        srow["system_prompt_hash"] = digest
        srow["system_prompt"] = None
        srow["title_source"] = (
            None
            if title is None
            else rng.choices(("llm", "derived", "user"), weights=(70, 20, 10))[0]
        )
        srow["last_activity_at"] = last_ts
        age = self.now - plan.started_at
        srow["pinned"] = int(rng.random() < 0.02)
        srow["archived"] = int(rng.random() < 0.03)
        srow["auto_archived"] = int(age > 45 * 86400 and not srow["pinned"] and rng.random() < 0.15)
        srow["hidden"] = int(rng.random() < 0.01)
        srow["profile_name"] = rng.choices(("default", "work", "research"), weights=(85, 10, 5))[0]
        srow["created_source"] = {"api_server": "workspace", "cli": "cli", "cron": "scheduler"}.get(
            plan.source, "gateway"
        )
        if plan.source == "cli":
            repo, branch = rng.choice(REPOS)
            srow["cwd"] = repo if rng.random() < 0.7 else repo + "/src"
            srow["git_repo_root"], srow["git_branch"] = repo, branch
        if plan.user and plan.source not in ("cli", "cron", "subagent"):
            chat_type = (
                "dm"
                if rng.random() < 0.75
                else ("group" if plan.source in ("telegram", "whatsapp") else "channel")
            )
            chat_id = plan.user[0] if chat_type == "dm" else f"-100{rng.randint(10**9, 10**10 - 1)}"
            thread_id = (
                f"{rng.randint(10**9, 2 * 10**9)}.{rng.randint(0, 999999):06d}"
                if plan.source == "slack" and rng.random() < 0.5
                else None
            )
            key = f"agent:{srow['profile_name']}:{plan.source}:{chat_type}:{chat_id}" + (
                f":{thread_id}" if thread_id else ""
            )
            srow.update(
                session_key=key,
                chat_id=chat_id,
                chat_type=chat_type,
                thread_id=thread_id,
                display_name=plan.user[1],
                origin_json=json.dumps(
                    {
                        "platform": plan.source,
                        "chat_id": chat_id,
                        "chat_type": chat_type,
                        "user_id": plan.user[0],
                        "user_name": plan.user[1],
                        "thread_id": thread_id,
                    },
                    ensure_ascii=False,
                ),
            )
            if plan.source == "telegram" and rng.random() < 0.02:
                srow.update(
                    handoff_state="completed",
                    handoff_target="cli",
                    handoff_requested_at=last_ts - 30,
                )
        if "compaction_done" in plan.features or any(
            c.kind == "compression" for c in plan.children
        ):
            srow["compression_count"] = 1
            srow["compression_last_at"] = last_ts
            srow["compression_tokens_before"] = rng.randint(90_000, 180_000)
            srow["compression_tokens_after"] = rng.randint(4_000, 20_000)

    def _emit_usage(
        self,
        plan: _Plan,
        per_model: dict[str, _Usage],
        per_day: dict[str, _Usage],
        total: _Usage,
        status: str | None,
        cost_source: str | None,
        money: Callable[[float], float | None],
        actual_factor: float | None,
        era_current: bool,
    ) -> None:
        rng = self.rng
        route = plan.route
        assert route is not None

        def counters(u: _Usage) -> dict[str, Any]:
            # The columns session_model_usage and session_daily_usage share.
            return {
                "session_id": plan.id,
                "api_call_count": u.api_call_count,
                "input_tokens": u.input_tokens,
                "output_tokens": u.output_tokens,
                "cache_read_tokens": u.cache_read_tokens,
                "cache_write_tokens": u.cache_write_tokens,
                "reasoning_tokens": u.reasoning_tokens,
                "estimated_cost_usd": money(u.cost),
                "actual_cost_usd": round(u.cost * actual_factor, 6) if actual_factor else None,
                "cost_status": status,
                "cost_source": cost_source,
            }

        def usage_row(model: str, task: str, u: _Usage, r: Route) -> dict[str, Any]:
            return {
                **counters(u),
                "model": model,
                "billing_provider": r.provider,
                "billing_base_url": r.base_url,
                "billing_mode": r.mode,
                "task": task,
                "first_seen": u.first_seen,
                "last_seen": u.last_seen,
            }

        rows: list[dict[str, Any]] = []
        if era_current:
            rows += [usage_row(name, "", u, route) for name, u in per_model.items()]
        elif per_model and rng.random() < 0.5:
            # Old sessions: one row covering only part of the counters (the rest is residual).
            share = rng.uniform(0.3, 0.9)
            assert plan.model is not None
            part = _Usage(
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
            rows.append(usage_row(plan.model.name, "", part, route))
        if era_current and total.api_call_count:
            # Auxiliary calls live only here, never in the session counters.
            aux_price = AUX_MODEL.price

            def aux(task: str, inp: int, out: int, calls: int = 1) -> None:
                u = _Usage(
                    calls,
                    inp,
                    out,
                    0,
                    0,
                    0,
                    _cost(aux_price, inp, out, 0, 0),
                    plan.started_at,
                    plan.ended_at,
                )
                rows.append(usage_row(AUX_MODEL.name, task, u, OPENROUTER))

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
        for row in rows:
            self._add("session_model_usage", row)
        self.counts["model_usage_rows"] += len(rows)
        for day, u in per_day.items():
            self._add("session_daily_usage", {**counters(u), "day": day})
        self.counts["daily_usage_rows"] += len(per_day)

    # Writing.

    def _add(self, table: str, row: dict[str, Any]) -> None:
        self.pending[table].append(tuple(map(row.get, self.cols[table])))

    def flush(self) -> None:
        # Sessions first: the current shape's trigram trigger looks up the session's source.
        for table in ("sessions", "messages", "session_model_usage", "session_daily_usage"):
            rows = self.pending.get(table)
            if not rows:
                continue
            cols = self.cols[table]
            sql = f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
            self.conn.executemany(sql, rows)
            rows.clear()
        self.conn.commit()
        self.pending_bytes = 0
        if self.progress:
            self.progress(
                f"{self.counts['sessions']:,} sessions, {self.counts['messages']:,} messages "
                f"({time.monotonic() - self.started:.0f}s)"
            )


def _assign_features(rng: random.Random, plans: list[_Plan], legacy_era_end: float) -> None:
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


def build_demo_db(
    path: str | os.PathLike[str],
    *,
    sessions: int = 300,
    messages: int = 15000,
    seed: int = 42,
    shape: str = "current",
    days: int = 120,
    now: float | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Write a new demo ``state.db`` at ``path`` (which must not exist) and return counts.

    Deterministic for (``seed``, ``now``, ``shape``, sizes) on a machine (session ids and
    daily buckets use local time, as Hermes does).
    """
    if shape not in hermes_ddl.SHAPES:
        raise ValueError(f"unknown shape {shape!r}")
    if sessions < 1 or messages < 0:
        raise ValueError("need at least one session and a non-negative message count")
    path = os.fspath(path)
    if os.path.exists(path):
        raise FileExistsError(path)
    now = float(round(time.time()) if now is None else now)
    started = time.monotonic()
    rng = random.Random(seed)

    conn = sqlite3.connect(path)
    try:
        # Speed while building; the finished file gets WAL like a real one. No rollback
        # journal at all: a half-built file is thrown away anyway.
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("PRAGMA cache_size = -262144")
        conn.execute("PRAGMA temp_store = MEMORY")
        hermes_ddl.create_schema(conn, shape)
        hermes_ddl.drop_fts_triggers(conn, shape)

        plans = _plan(rng, sessions, messages, now, days)
        _assign_features(rng, plans, legacy_era_end=now - days * 86400 * LEGACY_ERA_SHARE)
        builder = _Builder(conn, shape, rng, now, days, messages, progress)
        for plan in sorted((p for p in plans if p.kind == "root"), key=lambda p: p.started_at):
            builder.generate(plan)
        builder.flush()

        if progress:
            progress("building full-text indexes…")
        hermes_ddl.rebuild_fts(conn, shape)
        hermes_ddl.create_fts_triggers(conn, shape)
        conn.commit()
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()

    big = next(p for p in plans if p.big)
    chains = sum(
        1 for p in plans if p.kind == "root" and any(c.kind == "compression" for c in p.children)
    )
    result: dict[str, Any] = {
        "path": path,
        "shape": shape,
        "seed": seed,
        "now": now,
        **builder.counts,
        "by_source": dict(sorted(builder.by_source.items(), key=lambda kv: -kv[1])),
        "big_session_id": big.id,
        "big_session_messages": big.n_messages,
        "compression_chains": chains,
        "rare_words": {token: [r["id"] for r in rows] for token, rows in builder.rare_rows.items()},
        "megabyte_message_ids": [r["id"] for r in builder.megabyte_rows],
        "file_bytes": os.path.getsize(path),
        "elapsed_s": round(time.monotonic() - started, 2),
    }
    if progress:
        progress(
            f"done: {result['sessions']:,} sessions, {result['messages']:,} messages"
            f" in {result['elapsed_s']}s"
        )
    return result
