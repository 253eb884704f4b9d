"""Pre-generated text pools that messages are assembled from.

Building a sentence word by word for a million messages would dominate the build; instead a
few thousand sentences and a few megabytes of logs, code and web pages are made once per
seed, and messages take whole sentences and slices of the blobs.
"""

from __future__ import annotations

import random
import string
from itertools import accumulate

from .catalog import DEFAULT_TOOLS, RARE_TOKENS, SKILLS
from .texts import (
    ASSISTANT_TEMPLATES,
    REASONING_TEMPLATES,
    SYLLABLES_CODA,
    SYLLABLES_ONSET,
    SYLLABLES_VOWEL,
    USER_TEMPLATES,
    WORDS,
    XSS,
)


class Corpus:
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
