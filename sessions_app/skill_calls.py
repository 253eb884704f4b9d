"""Which assistant messages call a skill: a ``skill_view`` or ``skill_manage`` call whose
arguments (a JSON string or object) name it.

The message list's ``skill`` filter, counting as the insights skills table does (whose rows
link here).  Every JSON step is guarded so no malformed row fails the query.
"""

from __future__ import annotations

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
