"""Text material of the demo: hostile markup, CJK/RTL/emoji snippets, word lists, sentence
templates and the syllables rare words are made of."""

from __future__ import annotations

from .catalog import MODELS

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
