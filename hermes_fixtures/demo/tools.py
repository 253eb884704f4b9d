"""Tool calls as Hermes stores them, and plausible outputs for each tool."""

from __future__ import annotations

import json
import random
from typing import Any

from .catalog import SKILLS
from .corpus import Corpus
from .draws import lognormal_int
from .texts import WORDS


class ToolCalls:
    """Makes one tool call and its output at a time, from the build's text pools."""

    def __init__(self, rng: random.Random, corpus: Corpus) -> None:
        self.rng, self.corpus = rng, corpus

    def make(self, name: str) -> tuple[dict[str, Any], str]:
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
            args, output = {"command": cmd}, corpus.slice(corpus.log_blob, self.size())
        elif name == "read_file":
            args, output = (
                {"path": rng.choice(WORDS["path"])},
                corpus.slice(corpus.code_blob, self.size()),
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
            output = corpus.slice(corpus.log_blob, self.size() // 2 + 50)
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
            output = corpus.slice(corpus.page_blob, self.size())
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

    def size(self) -> int:
        # Median ~1.2 KB, a long tail into tens of KB.
        return lognormal_int(self.rng, 1200, 1.25, 40, 80_000)
