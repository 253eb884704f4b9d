"""Message content and tool calls as Hermes encodes them, made readable: ``content`` is text,
NULL or ``"\\x00json:" + JSON`` multimodal parts; ``tool_calls`` a JSON list of ``{"id",
"function": {"name", "arguments"}}`` (``arguments`` a JSON *string*), malformed in old rows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

MULTIMODAL_PREFIX = "\x00json:"


def as_text(content: str | None) -> str:
    """Readable text of a message: multimodal parts flattened, images as ``[image]``."""
    if not content:
        return ""
    if not content.startswith(MULTIMODAL_PREFIX):
        return content
    payload = content[len(MULTIMODAL_PREFIX) :]
    try:
        parts = json.loads(payload)
    except ValueError:
        # A preview cut in SQL ends mid-JSON: show what is there without the marker.
        return payload
    if isinstance(parts, dict):
        parts = [parts]
    if not isinstance(parts, list):
        return str(parts)
    out = []
    for part in parts:
        if not isinstance(part, dict):
            out.append(str(part))
        elif part.get("type") == "text":
            out.append(str(part.get("text", "")))
        elif "image" in str(part.get("type", "")):
            out.append("[image]")
        else:
            out.append(f"[{part.get('type', 'part')}]")
    return "\n".join(out)


@dataclass
class ToolCall:
    call_id: str
    name: str
    arguments: str  # pretty-printed when it was valid JSON
    raw_arguments: str


def call_objects(raw: str | None) -> tuple[list[dict], bool]:
    """The JSON objects of an assistant row's ``tool_calls`` (one object or a list of them),
    and whether the value was malformed (not JSON, or holding something else)."""
    if not raw:
        return [], False
    try:
        data = json.loads(raw)
    except ValueError:
        return [], True
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        return [], True
    objects = [item for item in data if isinstance(item, dict)]
    return objects, len(objects) != len(data)


def call_id_and_name(item: dict) -> tuple[str, str]:
    """A call's id and function name, in the OpenAI shape or the flat one."""
    function = item.get("function") if isinstance(item.get("function"), dict) else {}
    return str(item.get("id") or ""), str(function.get("name") or item.get("name") or "?")


def parse_tool_calls(raw: str | None) -> tuple[list[ToolCall], bool]:
    """The calls of an assistant row, and whether the JSON was malformed."""
    objects, malformed = call_objects(raw)
    calls = []
    for item in objects:
        function = item.get("function") if isinstance(item.get("function"), dict) else {}
        raw_args = function.get("arguments", item.get("arguments", ""))
        if not isinstance(raw_args, str):
            raw_args = json.dumps(raw_args)
        calls.append(ToolCall(*call_id_and_name(item), pretty_json(raw_args), raw_args))
    return calls, malformed


def pretty_json(text: str) -> str:
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return text
