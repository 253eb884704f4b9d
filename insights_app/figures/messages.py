"""Message figures: roles, tools and skills, from the per-session summaries.

These need every message of the window, not the sessions' counters, so they do not come from
the pass: :mod:`insights_app.summaries` computes and keeps one summary per session, and the
figures here add those up.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .. import summaries as summaries_module
from ..window import Scope, window_chunks


@dataclass
class MessageFigures:
    roles: dict[str, int] = field(
        default_factory=lambda: {"user": 0, "assistant": 0, "tool": 0, "stored": 0}
    )
    tools: Counter = field(default_factory=Counter)
    skills: list[dict[str, Any]] = field(default_factory=list)
    sessions_uncounted: int = 0  # window sessions the deadline left out


def message_figures(scope: Scope, *, use_cache: bool, time_limit: float | None) -> MessageFigures:
    """Roles, tools and skills of the window's sessions, as far as ``time_limit`` allows."""
    window_sessions = [
        (sid, count)
        for rows in window_chunks(scope, "s.id, s.message_count")
        for sid, count in rows
    ]
    collected = summaries_module.collect(
        window_sessions, use_cache=use_cache, time_limit=time_limit
    )
    out = MessageFigures(sessions_uncounted=collected.missing)
    out.skills = _tally(collected.summaries, out.roles, out.tools)
    return out


def _tally(summaries: Iterable, roles: dict[str, int], tools: Counter) -> list[dict[str, Any]]:
    skills: dict[str, dict[str, Any]] = {}
    for s in summaries:
        roles["user"] += s.user
        roles["assistant"] += s.assistant
        roles["tool"] += s.tool
        roles["stored"] += s.stored
        for name, count in s.tools:
            tools[name] += count
        for skill, loads, edits, last_used in s.skills:
            entry = skills.get(skill)
            if entry is None:
                entry = skills[skill] = {
                    "skill": skill,
                    "view_count": 0,
                    "manage_count": 0,
                    "last_used_at": None,
                }
            entry["view_count"] += loads
            entry["manage_count"] += edits
            if last_used is not None and (
                entry["last_used_at"] is None or last_used > entry["last_used_at"]
            ):
                entry["last_used_at"] = last_used
    return list(skills.values())


def tool_breakdown(counts: Counter) -> list[dict[str, Any]]:
    """Hermes's tool list: by count, with the share of all calls."""
    total = sum(counts.values())
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [
        {"tool": name, "count": n, "percentage": (n / total * 100) if total else 0}
        for name, n in ranked
    ]


def skill_breakdown(skills: list[dict[str, Any]]) -> dict[str, Any]:
    """Hermes's skills block: a summary and the skills ranked by use."""
    loads = sum(s["view_count"] for s in skills)
    edits = sum(s["manage_count"] for s in skills)
    actions = loads + edits
    top = []
    for s in skills:
        total = s["view_count"] + s["manage_count"]
        top.append(
            {**s, "total_count": total, "percentage": total / actions * 100 if actions else 0}
        )
    top.sort(
        key=lambda s: (
            s["total_count"],
            s["view_count"],
            s["manage_count"],
            s["last_used_at"] or 0,
            s["skill"],
        ),
        reverse=True,
    )
    return {
        "summary": {
            "total_skill_loads": loads,
            "total_skill_edits": edits,
            "total_skill_actions": actions,
            "distinct_skills_used": len(skills),
        },
        "top_skills": top,
    }
