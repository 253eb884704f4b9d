"""The tool-call definition of :mod:`sessions_app.toolcalls` in Python, for a store whose SQL
cannot make its JSON decisions: PostgreSQL 15 cannot test text for valid JSON before parsing
it, and the explorer's role may not create a function.  Same rules: a result answers the
nearest earlier assistant row of its session whose ``tool_calls`` (a list of calls, or one)
holds an object whose ``id`` is the result's ``tool_call_id``; it is named by its
``tool_name``, else that call's function name (or ``name``), else ``?``.  The PostgreSQL layout
has no ``message_uid``, so no copy of a result is left out.
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


def as_sql_value(value: Any) -> Any:
    """A JSON value as SQLite's ``json_extract`` returns it (containers as compact text)."""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return value


def call_objects(parsed: Any) -> list:
    """The calls of a parsed ``tool_calls``: a list as it is, one object as a list of one."""
    if isinstance(parsed, dict):
        return [parsed]
    return parsed if isinstance(parsed, list) else []


@dataclass
class Callers:
    """One session's assistant rows with calls, in id order, as they are read."""

    rows: list[tuple[int, str, list, Any]] = field(default_factory=list)

    def add(self, message_id: int, tool_calls: str, timestamp: Any = None) -> Any:
        """Note an assistant row; return its parsed ``tool_calls``."""
        parsed = strict_json(tool_calls)
        self.rows.append((message_id, tool_calls, call_objects(parsed), timestamp))
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
                return timestamp, as_sql_value(
                    name if name is not None else matching[0].get("name")
                )
        return None


def result_name(tool_name: Any, called: Any) -> str:
    """A call's name: the result's ``tool_name``, else the call's, else ``?``."""
    name = tool_name or called
    return str(name) if name is not None else "?"
