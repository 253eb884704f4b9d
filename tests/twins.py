"""Twin stores: two state.db files that differ only inside secrets.

``build_twins(dir, layout, seed)`` writes ``a.db`` and ``b.db`` with the same sessions, the
same messages and the same text after redaction; only the secret values differ (other
characters of the same class, the same lengths).  A reader who cannot reveal must get the same
answer from both for every request (``tests/test_noninterference.py``).

The secrets come from ``tests.test_redaction_shapes.SHAPES``.  Each shape becomes a
:class:`Template`: its text with the secret value cut out, and the positions of the value that
may be redrawn (a letter or digit whose change leaves the redacted text as it was; prefixes
and markers such as ``T3BlbkFJ`` stay).  The generator checks its own premise: every stored
text of A redacts to the text of B, and the two files differ.
"""

from __future__ import annotations

import json
import os
import random
import re
import string
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from redaction import redact_text
from tests.builders import DAY, HOUR, NASTY_NOW, StateDB, tool_call

# The words the visible text is made of (the queries use them).
WORDS = ("alpha", "deploy", "backup", "invoice", "kernel", "review", "server", "ticket")
SOURCES = ("cli", "telegram", "discord", "cron", "slack")
MODELS = ("anthropic/claude-sonnet-4", "openai/gpt-5", "qwen3-coder")
TOOLS = ("terminal", "read_file", "web_search", "skill_view")
SESSIONS = 14
_CLASSES = (string.ascii_lowercase, string.ascii_uppercase, string.digits)


@dataclass(frozen=True)
class Template:
    """A shape's text around its secret value; ``free`` positions of the value may change."""

    name: str
    parts: tuple[str, ...]  # the text split on the value
    value: str
    free: tuple[int, ...]

    def text(self, value: str) -> str:
        return value.join(self.parts)

    @property
    def token(self) -> bool:
        """A single word (no blank, no separator a column such as a branch name avoids)."""
        return not any(c in self.text(self.value) for c in " \n\t\"'{}<>;")

    def draw(self, rng: random.Random) -> str:
        """A new value for the free positions whose text redacts as the original's."""
        seen = redact_text(self.text(self.value))[0]
        for _ in range(100):
            chars = list(self.value)
            for i in self.free:
                chars[i] = rng.choice(_pool(self.value, chars[i]))
            value = "".join(chars)
            if redact_text(self.text(value))[0] == seen:
                return value
        raise AssertionError(f"no other value of {self.name} redacts the same")


def _class_of(char: str) -> str | None:
    return next((c for c in _CLASSES if char in c), None)


def _pool(value: str, char: str) -> str:
    """The characters of ``char``'s class that ``value`` already uses (hex stays hex)."""
    cls = _class_of(char) or char
    return "".join(sorted({c for c in value if c in cls}))


@cache
def templates() -> tuple[Template, ...]:
    from tests.test_redaction_shapes import SHAPES

    made = []
    for name, text, value in SHAPES:
        parts = tuple(text.split(value))
        seen = redact_text(text)[0]
        free = []
        for i, char in enumerate(value):
            pool = _pool(value, char)
            if _class_of(char) is None or len(pool) < 2:
                continue
            other = pool[(pool.index(char) + 1) % len(pool)]
            if all(
                redact_text((value[:i] + c + value[i + 1 :]).join(parts))[0] == seen
                for c in (other, pool[0], pool[-1])
            ):
                free.append(i)
        if len(free) >= 4:
            made.append(Template(name, parts, value, tuple(free)))
    return tuple(made)


@dataclass
class Twins:
    """What ``build_twins`` wrote: the two files and twin A's secret values (the probes)."""

    layout: str
    a: Path
    b: Path
    secrets_a: list[str] = field(default_factory=list)
    secrets_b: list[str] = field(default_factory=list)
    metadata_secrets: list[str] = field(default_factory=list)  # A's, in one-word columns
    session_ids: list[str] = field(default_factory=list)
    message_ids: list[int] = field(default_factory=list)
    tool_names: list[str] = field(default_factory=list)
    texts: int = 0


class _Plan:
    """The rows of both twins, as text with ``\\0k\\0`` slots for secret number k."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.rows: list[tuple[str, tuple, dict]] = []
        self.slots: list[tuple[Template, str, str]] = []  # (template, value A, value B)
        self.tokens: set[int] = set()  # the slots of one-word columns (names, ids, routes)
        self._next = 0

    def secret(self, *, token: bool = False) -> str:
        """A slot for the next shape in turn (``token``: a one-word shape only)."""
        pool = [t for t in templates() if t.token] if token else list(templates())
        template = pool[self._next % len(pool)]
        self._next += 1
        self.slots.append((template, template.draw(self.rng), template.draw(self.rng)))
        if token:
            self.tokens.add(len(self.slots) - 1)
        return f"\0{len(self.slots) - 1}\0"

    def fill(self, value, side: int):
        """``value`` with its slots filled by side ``side``'s secrets (0: A, 1: B)."""
        if isinstance(value, str) and "\0" in value:
            pieces = value.split("\0")
            return "".join(
                self.slots[int(p)][0].text(self.slots[int(p)][1 + side]) if i % 2 else p
                for i, p in enumerate(pieces)
            )
        if isinstance(value, list | tuple):
            return type(value)(self.fill(v, side) for v in value)
        if isinstance(value, dict):
            return {k: self.fill(v, side) for k, v in value.items()}
        return value

    def stored(self, side: int):
        """Each row as written: ``(kind, args, cols)`` with JSON columns as their text."""
        for kind, args, cols in self.rows:
            cols = self.fill(cols, side)
            if "call" in cols:
                cols["tool_calls"] = [tool_call(*cols.pop("call"))]
            for key in ("tool_calls", "model_config"):
                if key in cols:
                    cols[key] = json.dumps(cols[key], ensure_ascii=False)
            yield kind, self.fill(args, side), cols

    def texts(self, side: int) -> list[tuple[str, set[int]]]:
        """Every stored text and the slots it holds."""
        found = []
        for (_, args, cols), (_, raw_args, raw_cols) in zip(
            self.stored(side), self.rows, strict=True
        ):
            raw = repr((raw_args, raw_cols))  # a slot "\0k\0" reads \x00k\x00 here
            slots = {int(k) for k in re.findall(r"\\x00(\d+)\\x00", raw)}
            found += [(v, slots) for v in (*args, *cols.values()) if isinstance(v, str)]
        return found

    def settle(self) -> None:
        """Redraw the values of the texts of A that do not redact as their twin in B."""
        for _ in range(200):
            bad: set[int] = set()
            for (a, slots), (b, _) in zip(self.texts(0), self.texts(1), strict=True):
                if redact_text(a)[0] != redact_text(b)[0]:
                    bad |= slots
            if not bad:
                return
            for k in bad:
                template = self.slots[k][0]
                self.slots[k] = (template, template.draw(self.rng), template.draw(self.rng))
        raise AssertionError("twin secrets whose redaction differs could not be redrawn")


def _plan(seed: int, now: float) -> _Plan:
    plan = _Plan(seed)
    rng = random.Random(seed + 1)
    add = plan.rows.append

    def words(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n))

    for i in range(SESSIONS):
        sid = f"2025121{i % 10}_{i:04d}_twin"
        started = now - (i + 1) * 7 * HOUR - (i % 3) * DAY
        secretive = i % 2 == 0
        tool = TOOLS[i % len(TOOLS)] if i % 5 else plan.secret(token=True)
        model = MODELS[i % len(MODELS)] if i % 7 else f"{MODELS[0]}-{plan.secret(token=True)}"
        add(
            (
                "session",
                (sid,),
                {
                    "source": SOURCES[i % len(SOURCES)],
                    "started_at": started,
                    "ended_at": started + (i + 1) * 600 if i % 6 else None,
                    "model": model,
                    "title": f"{words(2)} {plan.secret()}" if secretive else words(3),
                    "user_id": plan.secret(token=True) if i % 3 == 0 else f"user{i % 4}",
                    "display_name": plan.secret() if i % 4 == 1 else f"Person {i % 4}",
                    "input_tokens": 1000 * (i + 1),
                    "output_tokens": 100 * (i + 3),
                    "cache_read_tokens": 50 * i,
                    "reasoning_tokens": 7 * i,
                    "estimated_cost_usd": round(0.013 * (i + 1), 4),
                    "actual_cost_usd": round(0.011 * (i + 1), 4) if i % 2 else None,
                    "cost_status": ["estimated", "actual", "unknown"][i % 3],
                    "end_reason": ["completed", "interrupted", plan.secret(token=True)][i % 3],
                    "model_config": {"temperature": 0.2, "api_key": plan.secret()},
                    "system_prompt": f"You are a {words(2)} helper. {plan.secret()}",
                    "system_prompt_hash": f"hash{i % 3}",
                    "cwd": f"/home/dev/{plan.secret(token=True)}" if i % 2 else "/home/dev/app",
                    "git_branch": plan.secret(token=True) if i % 3 == 1 else "main",
                    "git_repo_root": "/home/dev/app",
                    "billing_provider": plan.secret(token=True) if i % 4 == 2 else "openrouter",
                    "billing_base_url": f"https://api.example.com/{plan.secret(token=True)}",
                    "billing_mode": "metered",
                    "chat_type": ["dm", "group"][i % 2],
                    "parent_session_id": f"2025121{(i - 1) % 10}_{i - 1:04d}_twin"
                    if i % 7 == 3
                    else None,
                },
            )
        )
        if i < 3:
            add(("system_prompt", (f"hash{i}", f"Prompt {words(3)} {plan.secret()}"), {}))
        user = f"{words(4)} {plan.secret()} {words(2)}" if secretive else f"{words(5)} please"
        add(("message", (sid, "user", user), {"timestamp": started + 5}))
        args = {"command": f"run {words(2)} {plan.secret()}", "path": "/srv/app"}
        add(
            (
                "message",
                (sid, "assistant", f"I will {words(3)}"),
                {
                    "timestamp": started + 15,
                    "call": (tool, args, f"call_{i}"),
                    "reasoning": f"think {words(2)} {plan.secret()}",
                    "finish_reason": "tool_calls",
                },
            )
        )
        failed = i % 4 == 3
        result = f"{'Error: exit code 1 ' if failed else ''}{words(3)} {plan.secret()} {words(1)}"
        add(
            (
                "message",
                (sid, "tool", result),
                {"timestamp": started + 25 + i, "tool_name": tool, "tool_call_id": f"call_{i}"},
            )
        )
        add(
            (
                "message",
                (sid, "assistant", f"Done: {words(3)} {plan.secret() if i % 3 else ''}"),
                {"timestamp": started + 40 + i, "finish_reason": "stop", "token_count": 9 + i},
            )
        )
        add(
            (
                "model_usage",
                (sid, MODELS[i % len(MODELS)], plan.secret(token=True) if i % 2 else "main"),
                {
                    "billing_provider": plan.secret(token=True) if i % 3 == 0 else "openrouter",
                    "billing_base_url": "https://openrouter.ai/api/v1",
                    "api_call_count": 2,
                    "input_tokens": 1000 * (i + 1),
                    "output_tokens": 100 * (i + 3),
                    "estimated_cost_usd": round(0.013 * (i + 1), 4),
                    "first_seen": started,
                    "last_seen": started + 40,
                },
            )
        )
    plan.settle()
    return plan


def _write(plan: _Plan, path: Path, layout: str, side: int) -> tuple[list, list]:
    sessions, messages = [], []
    with StateDB.create(path, layout) as db:
        for kind, args, cols in plan.stored(side):
            if kind == "session":
                sessions.append(db.session(*args, **cols))
            elif kind == "message":
                messages.append(db.message(*args, **cols))
            elif kind == "model_usage":
                db.model_usage(*args, **cols)
            else:
                db.system_prompt(*args)
        db.refresh_counters()
    return sessions, messages


def build_twins(directory: Path, layout: str, seed: int = 1, now: float = NASTY_NOW) -> Twins:
    """Write ``a.db`` and ``b.db`` of ``layout`` in ``directory`` (sessions in the days before
    ``now``) and check the premise.  Both files get the same modification time."""
    plan = _plan(seed, now)
    twins = Twins(layout, directory / "a.db", directory / "b.db")
    twins.session_ids, twins.message_ids = _write(plan, twins.a, layout, 0)
    _write(plan, twins.b, layout, 1)
    twins.secrets_a = sorted({a for _, a, _ in plan.slots})
    twins.metadata_secrets = [plan.slots[k][1] for k in sorted(plan.tokens)]
    twins.secrets_b = sorted({b for _, _, b in plan.slots})
    twins.tool_names = sorted({t for t in TOOLS})
    texts_a, texts_b = [t for t, _ in plan.texts(0)], [t for t, _ in plan.texts(1)]
    twins.texts = len(texts_a)
    for a, b in zip(texts_a, texts_b, strict=True):
        assert redact_text(a)[0] == redact_text(b)[0], (a, b)
    assert texts_a != texts_b
    assert twins.a.read_bytes() != twins.b.read_bytes()
    os.utime(twins.b, ns=(twins.a.stat().st_atime_ns, twins.a.stat().st_mtime_ns))
    return twins
