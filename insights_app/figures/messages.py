"""Message figures: roles, tools and skills, added up in SQL over the stored per-session
summaries, once the window's stale and missing sessions are computed (or, when many, built in
the background)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from django.db import DatabaseError

from hermes_explorer import store
from redaction import redact

from .. import summaries as summaries_module
from .. import summary_build, summary_store
from ..summary_build import window_sessions as _window_sessions
from ..window import Scope, Window
from . import tool_latency


@dataclass
class MessageFigures:
    roles: dict[str, int] = field(default_factory=lambda: dict.fromkeys(summary_store.ROLES, 0))
    tools: Counter = field(default_factory=Counter)
    tool_rows: Counter = field(default_factory=Counter)  # result rows per tool (ours)
    skills: list[dict[str, Any]] = field(default_factory=list)
    # Per tool, the times of its calls and the slowest (:func:`.tool_latency.gather`); None
    # when the file cannot pair or time calls.
    latency: tuple | None = None
    sessions_uncounted: int = 0  # window sessions the deadline left out
    # (done, total) of a build running in the background, when one does.
    build: tuple[int, int] | None = None


def message_figures(
    scope: Scope,
    window: Window,
    bounds: tuple[float | None, float | None],
    *,
    use_cache: bool,
    time_limit: float | None,
) -> MessageFigures:
    """Roles, tools and skills of the window's sessions, as far as ``time_limit`` allows."""
    if use_cache:
        try:
            return _stored_figures(scope, window, bounds, time_limit)
        except DatabaseError as exc:
            summary_store.log.warning("insights summaries not used: %s", exc)
    collected = summaries_module.collect(_window_sessions(scope), time_limit=time_limit)
    out = MessageFigures(sessions_uncounted=collected.missing)
    skills: dict[str, dict[str, Any]] = {}
    for s in collected.summaries.values():
        for role in summary_store.ROLES:
            out.roles[role] += getattr(s, role)
        for name, count, result_rows in s.tools:
            out.tools[name] += count
            out.tool_rows[name] += result_rows
        for skill in s.skills:
            add_skill(skills, *skill)
    out.skills = list(skills.values())
    if tool_latency.can_time(scope.shape):
        out.latency = tool_latency.gather(
            (name, seconds, sid, mid)
            for sid, s in collected.summaries.items()
            for name, seconds, mid in s.calls
        )
    return out


def _stored_figures(scope, window, bounds, time_limit) -> MessageFigures:
    key = summaries_module.refresh_high_water()
    q = summary_store.window_q(*bounds, window.source, window.model)
    n, mc = store.rows(
        f"SELECT COUNT(*), COALESCE(SUM(s.message_count), 0) FROM sessions s WHERE {scope.where}",
        scope.params,
    )[0]
    have = summary_store.totals(key, q)
    missing = 0
    if (have.sessions, have.message_count) != (int(n or 0), int(mc or 0)):
        running = summary_store.build_progress(key)
        if running is not None:
            # A build of this file is under way: it computes every missing or stale summary.
            # The message figures wait for it (a sum over part of the window is not the
            # window's), and the page says how far it is; comparing the window's sessions
            # one by one at every view would only slow the build down.
            return MessageFigures(
                sessions_uncounted=max(1, int(n or 0)),
                build=running,
                latency=({}, {}) if tool_latency.can_time(scope.shape) else None,
            )
        stale = summary_build.stale(key, q, _window_sessions(scope))
        if len(stale) >= summary_build.BACKGROUND_FROM:
            # Too many for this request: ``insights_warm`` computes them; the page says so.
            missing = len(stale)
        elif stale:
            missing = summaries_module.collect(stale, key=key, time_limit=time_limit).missing
        have = summary_store.totals(key, q)
    out = MessageFigures(sessions_uncounted=missing)
    out.roles = have.roles
    out.tools, out.tool_rows = summary_store.tools(key, q)
    out.skills = summary_store.skills(key, q)
    if tool_latency.can_time(scope.shape):
        out.latency = tool_latency.gather(summary_store.calls(key, q))
    return out


def add_skill(skills: dict, skill: str, loads: int, edits: int, last_used: float | None) -> None:
    """Count a skill's loads and edits (and its last use) into ``skills``' row of it."""
    entry = skills.setdefault(
        skill, {"skill": skill, "view_count": 0, "manage_count": 0, "last_used_at": None}
    )
    entry["view_count"] += loads
    entry["manage_count"] += edits
    times = [t for t in (entry["last_used_at"], last_used) if t is not None]
    entry["last_used_at"] = max(times, default=None)


def tool_breakdown(counts: Counter) -> list[dict[str, Any]]:
    """Hermes's tool list: by count, with the share of all calls."""
    total = sum(counts.values())
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [
        {"tool": redact(name), "count": n, "percentage": (n / total * 100) if total else 0}
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
