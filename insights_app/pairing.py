"""The tool-call definition of :mod:`sessions_app.toolcalls` in Python, for a store whose SQL
cannot make its JSON decisions: PostgreSQL 15 cannot test text for valid JSON before parsing
it, and the explorer's role may not create a function.  The PostgreSQL layout has no
``message_uid``, so no copy of a result is left out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any


def _refuse(constant: str):
    raise ValueError(constant)


def strict_json(text: Any) -> Any:
    """``text`` parsed as RFC 8259 JSON (as SQLite's ``json_valid``), or None."""
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text, parse_constant=_refuse)
    except (ValueError, RecursionError):
        return None


@dataclass
class Callers:
    """One session's assistant rows with calls, in id order, as they are read."""

    rows: list[tuple[int, str, list, Any]] = field(default_factory=list)

    def add(self, message_id: int, tool_calls: str, timestamp: Any = None) -> Any:
        """Note an assistant row; return its parsed ``tool_calls``."""
        parsed = strict_json(tool_calls)
        # A list of calls, or one call object.
        calls = [parsed] if isinstance(parsed, dict) else parsed if isinstance(parsed, list) else []
        self.rows.append((message_id, tool_calls, calls, timestamp))
        return parsed

    def answered(self, result_id: int, call_id: str) -> tuple[Any, Any] | None:
        """``(the caller's timestamp, the result's name from the call)`` of the nearest
        earlier caller of ``call_id``, or None when no row called it."""
        for message_id, raw, calls, timestamp in reversed(self.rows):
            if message_id >= result_id or call_id not in raw:
                continue
            matching = [c for c in calls if isinstance(c, dict) and c.get("id") == call_id]
            if matching:
                function = matching[0].get("function")
                name = function.get("name") if isinstance(function, dict) else None
                if name is None:
                    name = matching[0].get("name")
                if isinstance(name, dict | list):  # as SQLite's json_extract: compact text
                    name = json.dumps(name, ensure_ascii=False, separators=(",", ":"))
                return timestamp, name
        return None


def result_name(tool_name: Any, called: Any) -> str:
    """A call's name: the result's ``tool_name``, else the call's, else ``?``."""
    name = tool_name or called
    return str(name) if name is not None else "?"
