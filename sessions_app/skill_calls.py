"""Which assistant messages call a skill (a ``skill_view`` or ``skill_manage`` call whose
arguments name it), counted as the insights skills table does.  Every JSON step is guarded so
no malformed row fails the query; PostgreSQL 14 and 15 cannot guard one in SQL, so there
:func:`calls_skill` decides by the same steps.
"""

from __future__ import annotations

import json

SKILL_TOOLS = ("skill_view", "skill_manage")
_ARGS = "json_extract(m.tool_calls, j.fullkey || '.function.arguments')"

SKILL_CALLS_SQL = f"""
    SELECT m.id FROM messages m,
         json_each(CASE WHEN json_valid(m.tool_calls) THEN m.tool_calls END) AS j
    WHERE m.role = 'assistant' AND m.tool_calls IS NOT NULL AND j.fullkey GLOB '$[[]*'
      AND json_extract(m.tool_calls, j.fullkey || '.function.name')
          IN ('skill_view', 'skill_manage')
      AND CASE WHEN json_valid({_ARGS}) THEN
            CASE WHEN json_type({_ARGS}, '$.name') = 'text'
                 THEN json_extract({_ARGS}, '$.name') = %s END END"""


def calls_skill(tool_calls: str | None, name: str) -> bool:
    """Whether a ``tool_calls`` value holds a skill call naming ``name``, as the SQL decides."""
    try:
        calls = json.loads(tool_calls or "")
    except ValueError:
        return False
    for call in calls if isinstance(calls, list) else ():
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or function.get("name") not in SKILL_TOOLS:
            continue
        arguments = function.get("arguments")
        try:
            arguments = json.loads(arguments) if isinstance(arguments, str) else arguments
        except ValueError:
            continue
        if isinstance(arguments, dict) and arguments.get("name") == name:
            return True
    return False
