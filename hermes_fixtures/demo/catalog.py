"""What the demo's installation is made of: channels, models and their prices and routes,
skills, tools, users and repositories, with the weights they are drawn with."""

from __future__ import annotations

from dataclasses import dataclass

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
