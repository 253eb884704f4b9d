"""The numbers behind ``/insights/``: what ``hermes insights`` reports, computed in SQL.

Every figure is an aggregation in SQLite (``GROUP BY``, ``json_each``); Python only touches the
small results (a row per source, per model, per local day, per weekday-hour, and one cached
summary per session for the message counts, see :mod:`insights_app.summaries`).  The report
uses the field names of Hermes's own insights dictionary, so ``_export=json`` can replace a
script that parsed it.  Semantics follow Hermes's insights engine (``agent/insights.py`` in
NousResearch/hermes-agent); where we differ it says so with a ``NOTE:``.

The window
    Sessions with ``started_at >= now - days * 86400`` (no upper bound, as in Hermes), or all
    sessions, or a custom range of local days in ``TIME_ZONE``; optionally one ``source`` and,
    beyond Hermes, one ``model`` (the session's recorded model, short or full name, with the
    same rule as the session list).

Models
    Per short model name (last path segment): every ``session_model_usage`` row of the window's
    sessions (auxiliary tasks included) plus, per session, the *residual*: the session's
    counter minus the sum of **all** its usage rows (every task, not only the main loop),
    floored at 0, attributed to the session's own model.  That is what Hermes does: it totals
    every row of the session before subtracting.  Residual reasoning tokens are 0 (Hermes's
    choice); API calls and cost get residuals too.  A session counts for a model when it has a
    usage row for it or a non-zero residual; its tool calls go to its own model.  Without
    ``session_model_usage`` every session is its own residual: the table comes from the
    sessions' counters.

    NOTE: Hermes re-prices usage rows that carry neither ``cost_status`` nor ``cost_source``
    from its own price table; we have no price table and use the stored estimate (or $0).

Cost buckets
    ``included_cost_sessions``: ``cost_status = 'included'``.  ``unknown_cost_sessions``:
    ``cost_status = 'unknown'``, or no status and no stored estimate for a session that used
    tokens (files without ``cost_status``: no estimate for a session that used tokens).
    NOTE: Hermes derives both from its price table at report time; we read what Hermes stored.

Tools, skills, message counts: see :mod:`insights_app.summaries`.
"""

from __future__ import annotations

import datetime as dt
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

from hermes_explorer import store
from sessions_app.timefmt import day_end_epoch, day_start_epoch

from . import summaries as summaries_module
from .localtime import OffsetSegments, offset_segments

DAY_SECONDS = 86_400
PRESET_DAYS = (7, 30, 90, 365)
DEFAULT_DAYS = 30
TOKEN_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
EPOCH_DAY0 = dt.date(1970, 1, 1)


# --- The window ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    """Which sessions a report covers.

    ``days`` (Hermes's ``--days``) unless a custom range is given; ``days=None`` without a
    range is all time.  Custom ranges are inclusive local days in ``TIME_ZONE``.
    """

    days: int | None = DEFAULT_DAYS
    start_day: dt.date | None = None
    end_day: dt.date | None = None
    source: str | None = None
    model: str | None = None

    @property
    def is_custom(self) -> bool:
        return self.start_day is not None or self.end_day is not None

    @property
    def is_all_time(self) -> bool:
        return not self.is_custom and self.days is None

    def bounds(self, now: float) -> tuple[float | None, float | None]:
        """Epoch bounds ``[lo, hi)`` of ``started_at``; None is unbounded."""
        if self.is_custom:
            lo = day_start_epoch(self.start_day) if self.start_day else None
            hi = day_end_epoch(self.end_day) if self.end_day else None
            return lo, hi
        if self.days is None:
            return None, None
        return now - self.days * DAY_SECONDS, None

    @property
    def label(self) -> str:
        if self.is_custom:
            start = self.start_day.isoformat() if self.start_day else "the beginning"
            end = self.end_day.isoformat() if self.end_day else "today"
            return f"{start} to {end}"
        if self.days is None:
            return "All time"
        return f"Last {self.days} days"


@dataclass(frozen=True)
class _Scope:
    """The window as SQL over ``sessions s``, plus what this file's shape offers."""

    shape: Any
    where: str
    params: tuple

    def scol(self, name: str, default: str = "0") -> str:
        """``s.<name>`` when the file has the column, else a neutral literal."""
        return f"s.{name}" if self.shape.has_column("sessions", name) else default

    def ucol(self, name: str, default: str = "0") -> str:
        return f"u.{name}" if self.shape.has_column("session_model_usage", name) else default

    def dcol(self, name: str, default: str = "0") -> str:
        return f"d.{name}" if self.shape.has_column("session_daily_usage", name) else default

    @property
    def has_usage(self) -> bool:
        return self.shape.has_model_usage

    @property
    def session_ids(self) -> str:
        return f"SELECT s.id FROM sessions s WHERE {self.where}"


def _scope(window: Window, now: float) -> _Scope:
    shape = store.shape()
    clauses, params = [], []
    lo, hi = window.bounds(now)
    if lo is not None:
        clauses.append("s.started_at >= %s")
        params.append(lo)
    if hi is not None:
        clauses.append("s.started_at < %s")
        params.append(hi)
    if window.source:
        clauses.append("s.source = %s")
        params.append(window.source)
    if window.model:
        # Same rule as the session list: the full route, or anything ending in /<name>.
        escaped = window.model.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        clauses.append("(s.model = %s OR s.model LIKE %s ESCAPE '\\')")
        params += [window.model, "%/" + escaped]
    return _Scope(shape=shape, where=" AND ".join(clauses) or "1", params=tuple(params))


def current_time() -> float:
    """The clock windows are measured from (tests replace it; ``build_report`` takes ``now``)."""
    return time.time()


def short_model(model: str | None) -> str:
    """Hermes's display name for a model: the last ``/`` segment, ``unknown`` when empty."""
    return (model or "unknown").split("/")[-1]


def _int(value) -> int:
    return int(value) if value is not None else 0


def _float(value) -> float:
    return float(value) if value is not None else 0.0


# --- One pass over the window's sessions -------------------------------------------------

# Columns every branch of the session statement returns (padded with NULL).
_WIDTH = 18
_POSITIVE = (
    "s.started_at <> 0 AND s.ended_at IS NOT NULL AND s.ended_at <> 0 AND s.ended_at > s.started_at"
)


def _per_session_cte(scope: _Scope, segments: OffsetSegments) -> str:
    """``per``: one row per window session with its counters, its usage-row sums, its local
    start time split into day number / weekday / hour, and its positive duration."""
    c = scope.scol
    if scope.shape.has_column("sessions", "cost_status"):
        unknown = (
            "s.cost_status = 'unknown' OR (s.cost_status IS NULL"
            " AND s.estimated_cost_usd IS NULL AND {used})"
        )
        included = "s.cost_status = 'included'"
    else:
        unknown, included = "s.estimated_cost_usd IS NULL AND {used}", "0"
    used = (
        f"COALESCE(s.input_tokens, 0) + COALESCE(s.output_tokens, 0)"
        f" + COALESCE({c('cache_read_tokens')}, 0) + COALESCE({c('cache_write_tokens')}, 0) > 0"
    )
    unknown = unknown.format(used=used)
    if scope.has_usage:
        u = scope.ucol
        usage_cols = f"""COALESCE(SUM({u("input_tokens")}), 0) AS u_in,
               COALESCE(SUM({u("output_tokens")}), 0) AS u_out,
               COALESCE(SUM({u("cache_read_tokens")}), 0) AS u_cr,
               COALESCE(SUM({u("cache_write_tokens")}), 0) AS u_cw,
               COALESCE(SUM({u("api_call_count")}), 0) AS u_api,
               COALESCE(SUM({u("estimated_cost_usd", "NULL")}), 0.0) AS u_cost,
               COALESCE(SUM({u("actual_cost_usd", "NULL")}), 0.0) AS u_actual"""
        join = "LEFT JOIN session_model_usage u ON u.session_id = s.id"
        group = "GROUP BY s.id"
    else:
        usage_cols = (
            "0 AS u_in, 0 AS u_out, 0 AS u_cr, 0 AS u_cw, 0 AS u_api,"
            " 0.0 AS u_cost, 0.0 AS u_actual"
        )
        join = group = ""
    local = segments.local_sql("s.started_at")
    return f"""per AS MATERIALIZED (
        SELECT s.id AS id, COALESCE(NULLIF(s.source, ''), 'unknown') AS source,
               s.model AS model, s.started_at AS started_at,
               CASE WHEN s.started_at <> 0 AND {local} >= 0
                    THEN CAST({local} AS INTEGER) END AS lt,
               CASE WHEN {_POSITIVE} THEN s.ended_at - s.started_at END AS dur,
               COALESCE(s.message_count, 0) AS messages,
               COALESCE({c("tool_call_count")}, 0) AS tool_calls,
               COALESCE(s.input_tokens, 0) AS s_in, COALESCE(s.output_tokens, 0) AS s_out,
               COALESCE({c("cache_read_tokens")}, 0) AS s_cr,
               COALESCE({c("cache_write_tokens")}, 0) AS s_cw,
               COALESCE({c("reasoning_tokens")}, 0) AS s_rs,
               COALESCE({c("api_call_count")}, 0) AS s_api,
               COALESCE(s.estimated_cost_usd, 0.0) AS s_cost,
               COALESCE({c("actual_cost_usd", "NULL")}, 0.0) AS s_actual,
               CASE WHEN {included} THEN 1 ELSE 0 END AS included,
               CASE WHEN {unknown} THEN 1 ELSE 0 END AS unknown,
               {usage_cols}
        FROM sessions s {join} WHERE {scope.where} {group})"""


def _branch(kind: str, key: str, columns: list[str], rest: str) -> str:
    cols = columns + ["NULL"] * (_WIDTH - len(columns))
    return f"SELECT * FROM (SELECT '{kind}', {key}, {', '.join(cols)} {rest})"


def _session_statement(scope: _Scope, segments: OffsetSegments) -> str:
    """Everything the report needs from the sessions (and usage rows) in one statement:
    ``per`` is built once, then grouped several ways; each output row is tagged by kind."""
    residual = {
        "in": "MAX(0, s_in - u_in)",
        "out": "MAX(0, s_out - u_out)",
        "cr": "MAX(0, s_cr - u_cr)",
        "cw": "MAX(0, s_cw - u_cw)",
        "api": "MAX(0, s_api - u_api)",
        "cost": "MAX(0.0, s_cost - u_cost)",
        "actual": "MAX(0.0, s_actual - u_actual)",
    }
    res_cols = ", ".join(f"{expr} AS r_{key}" for key, expr in residual.items())
    has_res = " OR ".join(f"r_{key} > 0" for key in residual)
    branches = [
        _branch(
            "source",
            "source",
            [
                "COUNT(*)",
                "SUM(messages)",
                "SUM(tool_calls)",
                "SUM(s_in)",
                "SUM(s_out)",
                "SUM(s_cr)",
                "SUM(s_cw)",
                "SUM(s_rs)",
                "SUM(s_api)",
                "SUM(s_cost)",
                "SUM(s_actual)",
                "SUM(dur)",
                "COUNT(dur)",
                "MIN(CASE WHEN started_at <> 0 THEN started_at END)",
                "MAX(CASE WHEN started_at <> 0 THEN started_at END)",
                "SUM(included)",
                "SUM(unknown)",
            ],
            "FROM per GROUP BY source",
        ),
        # A session's whole usage is, per counter, the larger of its own counter and the sum
        # of its usage rows: its rows plus its residual. So days add up to the models table.
        _branch(
            "day",
            "lt / 86400",
            [
                "COUNT(*)",
                "SUM(messages)",
                "SUM(MAX(s_in, u_in))",
                "SUM(MAX(s_out, u_out))",
                "SUM(MAX(s_cr, u_cr))",
                "SUM(MAX(s_cw, u_cw))",
                "SUM(MAX(s_cost, u_cost))",
            ],
            "FROM per WHERE lt IS NOT NULL GROUP BY 2",
        ),
        _branch(
            "hour",
            "((lt / 86400 + 3) %% 7) * 24 + (lt / 3600) %% 24",
            ["COUNT(*)"],
            "FROM per WHERE lt IS NOT NULL GROUP BY 2",
        ),
    ]
    # Per full model name: usage rows, residuals, and tool calls (to the session's own model).
    # Only usage rows and residuals make a session count for a model.
    residual_rows = f"""SELECT id AS sid, model, r_in AS i, r_out AS o, r_cr AS cr, r_cw AS cw,
                              0 AS rs, r_api AS api, r_cost AS cost, r_actual AS actual,
                              tool_calls AS tc, ({has_res}) AS counted
                       FROM (SELECT id, model, tool_calls, {res_cols} FROM per)
                       WHERE ({has_res}) OR tool_calls > 0"""
    if scope.has_usage:
        u = scope.ucol
        parts = f"""SELECT u.session_id AS sid, u.model AS model,
                           COALESCE({u("input_tokens")}, 0) AS i,
                           COALESCE({u("output_tokens")}, 0) AS o,
                           COALESCE({u("cache_read_tokens")}, 0) AS cr,
                           COALESCE({u("cache_write_tokens")}, 0) AS cw,
                           COALESCE({u("reasoning_tokens")}, 0) AS rs,
                           COALESCE({u("api_call_count")}, 0) AS api,
                           COALESCE({u("estimated_cost_usd", "NULL")}, 0.0) AS cost,
                           COALESCE({u("actual_cost_usd", "NULL")}, 0.0) AS actual,
                           0 AS tc, 1 AS counted
                    FROM session_model_usage u WHERE u.session_id IN (SELECT id FROM per)
                    UNION ALL {residual_rows}"""
    else:
        parts = residual_rows
    branches.append(
        _branch(
            "model",
            "model",
            [
                "COUNT(DISTINCT CASE WHEN counted THEN sid END)",
                "SUM(i)",
                "SUM(o)",
                "SUM(cr)",
                "SUM(cw)",
                "SUM(rs)",
                "SUM(api)",
                "SUM(cost)",
                "SUM(actual)",
                "SUM(tc)",
            ],
            f"FROM ({parts}) GROUP BY model",
        )
    )
    top = [
        ("longest", "dur", "dur IS NOT NULL"),
        ("messages", "messages", "messages > 0"),
        ("tokens", "s_in + s_out", "s_in + s_out > 0"),
    ]
    if scope.shape.has_column("sessions", "tool_call_count"):
        top.append(("tool_calls", "tool_calls", "tool_calls > 0"))
    for kind, value, condition in top:
        branches.append(
            _branch(
                "top",
                f"'{kind}'",
                ["id", "started_at", value],
                f"FROM per WHERE {condition} ORDER BY {value} DESC, started_at DESC, id DESC"
                " LIMIT 1",
            )
        )
    return f"WITH {_per_session_cte(scope, segments)}\n" + "\nUNION ALL\n".join(branches)


def _window_span(scope: _Scope) -> tuple[int, float | None, float | None]:
    """Sessions in the window and their first/last start (for the zone's offsets)."""
    sql = (
        "SELECT COUNT(*), MIN(CASE WHEN s.started_at <> 0 THEN s.started_at END),"
        f" MAX(CASE WHEN s.started_at <> 0 THEN s.started_at END) FROM sessions s"
        f" WHERE {scope.where}"
    )
    n, lo, hi = store.rows(sql, scope.params)[0]
    return _int(n), lo, hi


# --- Sections from the grouped rows --------------------------------------------------------


def _models(scope: _Scope, per_full: dict[str | None, list]) -> list[dict[str, Any]]:
    """Merge the per-full-model rows into Hermes's per-short-name table."""
    merged: dict[str, dict[str, Any]] = {}
    fulls: dict[str, list[str | None]] = {}
    for full, (sessions, i, o, cr, cw, rs, api, cost, actual, tools) in per_full.items():
        name = short_model(full)
        e = merged.setdefault(
            name,
            {
                "model": name,
                "sessions": 0,
                "input_tokens": 0,
                "output_tokens": 0,
                "cache_read_tokens": 0,
                "cache_write_tokens": 0,
                "reasoning_tokens": 0,
                "total_tokens": 0,
                "api_calls": 0,
                "tool_calls": 0,
                "cost": 0.0,
                "actual_cost": 0.0,
            },
        )
        if _int(sessions):
            fulls.setdefault(name, []).append(full)
        e["sessions"] += _int(sessions)
        e["input_tokens"] += _int(i)
        e["output_tokens"] += _int(o)
        e["cache_read_tokens"] += _int(cr)
        e["cache_write_tokens"] += _int(cw)
        e["reasoning_tokens"] += _int(rs)
        e["api_calls"] += _int(api)
        e["cost"] += _float(cost)
        e["actual_cost"] += _float(actual)
        e["tool_calls"] += _int(tools)
    for name, names in fulls.items():
        if len(names) > 1 and scope.has_usage:
            # Several full routes share a short name: a session using two of them counts once.
            merged[name]["sessions"] = _distinct_sessions(scope, names)
    for e in merged.values():
        e["total_tokens"] = sum(e[k] for k in TOKEN_KEYS)
    return sorted(merged.values(), key=lambda m: (-m["total_tokens"], -m["sessions"], m["model"]))


def _distinct_sessions(scope: _Scope, fulls: list[str | None]) -> int:
    """Sessions with a usage row, or a residual, on any of these full model names.

    Only needed when several full routes share a short name (rare): a session that used two
    of them counts once.  Without usage rows every session has exactly one model, so the
    per-route counts simply add up and this is never called.
    """
    u = scope.ucol
    named = [f for f in fulls if f is not None]
    marks = ", ".join(["%s"] * len(named)) or "NULL"
    null_model = " OR s.model IS NULL" if None in fulls else ""

    def rows_sum(col: str, default: str = "0") -> str:
        return (
            f"(SELECT COALESCE(SUM({u(col, default)}), 0) FROM session_model_usage u"
            " WHERE u.session_id = s.id)"
        )

    over = [
        ("s.input_tokens", rows_sum("input_tokens")),
        ("s.output_tokens", rows_sum("output_tokens")),
        (scope.scol("cache_read_tokens"), rows_sum("cache_read_tokens")),
        (scope.scol("cache_write_tokens"), rows_sum("cache_write_tokens")),
        (scope.scol("api_call_count"), rows_sum("api_call_count")),
        ("s.estimated_cost_usd", rows_sum("estimated_cost_usd", "NULL")),
        (scope.scol("actual_cost_usd", "NULL"), rows_sum("actual_cost_usd", "NULL")),
    ]
    has_residual = " OR ".join(f"COALESCE({own}, 0) > {rows}" for own, rows in over)
    sql = f"""SELECT COUNT(DISTINCT sid) FROM (
        SELECT u.session_id AS sid FROM session_model_usage u
        WHERE u.model IN ({marks}) AND u.session_id IN ({scope.session_ids})
        UNION ALL
        SELECT s.id FROM sessions s
        WHERE {scope.where} AND (s.model IN ({marks}){null_model}) AND ({has_residual}))"""
    return _int(store.rows(sql, [*named, *scope.params, *scope.params, *named])[0][0])


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


def longest_streak(days: list[dt.date]) -> int:
    """Most consecutive calendar days among ``days``."""
    best = run = 0
    previous = None
    for day in sorted(set(days)):
        run = run + 1 if previous is not None and (day - previous).days == 1 else 1
        best = max(best, run)
        previous = day
    return best


def activity(grid: list[list[int]], active: list[dt.date]) -> dict[str, Any]:
    """Hermes's activity block: weekdays, hours, busiest of each, active days, streak."""
    by_day = [{"day": WEEKDAYS[i], "count": sum(grid[i])} for i in range(7)]
    by_hour = [{"hour": h, "count": sum(grid[d][h] for d in range(7))} for h in range(24)]
    return {
        "by_day": by_day,
        # max() keeps the first of equals: Monday, then midnight, as Hermes does.
        "busiest_day": max(by_day, key=lambda x: x["count"]),
        "by_hour": by_hour,
        "busiest_hour": max(by_hour, key=lambda x: x["count"]),
        "active_days": len(set(active)),
        "max_streak": longest_streak(active),
    }


def format_duration_compact(seconds: float) -> str:
    """Hermes's compact duration: 45s, 12m, 3h 5m, 1.5d."""
    if seconds < 60:
        return f"{seconds:.0f}s"
    minutes = seconds / 60
    if minutes < 60:
        return f"{minutes:.0f}m"
    hours = minutes / 60
    if hours < 24:
        rest = int(minutes % 60)
        return f"{int(hours)}h {rest}m" if rest else f"{int(hours)}h"
    return f"{hours / 24:.1f}d"


TOP_LABELS = {
    "longest": "Longest session",
    "messages": "Most messages",
    "tokens": "Most tokens",
    "tool_calls": "Most tool calls",
}


def _top_value(kind: str, value) -> str:
    if kind == "longest":
        return format_duration_compact(float(value))
    if kind == "messages":
        return f"{int(value)} msgs"
    if kind == "tokens":
        return f"{int(value):,} tokens"
    return f"{int(value)} calls"


def _short_date(epoch: float | None, tz: dt.tzinfo) -> str:
    if not epoch:
        return "?"
    try:
        return dt.datetime.fromtimestamp(float(epoch), tz).strftime("%b %d")
    except (OverflowError, OSError, ValueError):
        return "?"


def top_sessions(found: dict[str, tuple], tz: dt.tzinfo) -> list[dict[str, Any]]:
    """Notable sessions in Hermes's order; ties went to the most recently started.

    NOTE: Hermes's "longest" considers every closed session and could name one whose clock
    drifted (a negative duration) when no other is closed; we only consider positive ones.
    NOTE: ``session_id`` is the whole id (Hermes cuts it to 16 characters for its terminal).
    """
    titles = {}
    ids = [v[0] for v in found.values()]
    if ids:
        marks = ", ".join(["%s"] * len(ids))
        titles = dict(
            store.rows(f"SELECT id, substr(title, 1, 100) FROM sessions WHERE id IN ({marks})", ids)
        )
    out = []
    for kind, label in TOP_LABELS.items():
        if kind not in found:
            continue
        session_id, started_at, value = found[kind]
        out.append(
            {
                "label": label,
                "session_id": session_id,
                "value": _top_value(kind, value),
                "date": _short_date(started_at, tz),
                # Ours.
                "metric": kind,
                "raw_value": value,
                "title": titles.get(session_id),
                "started_at": started_at,
            }
        )
    return out


# --- The report ----------------------------------------------------------------------------


@dataclass
class DayRow:
    day: dt.date  # local day
    sessions: int = 0
    messages: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost: float = 0.0

    @property
    def total_tokens(self) -> int:
        return sum(getattr(self, k) for k in TOKEN_KEYS)

    def as_dict(self) -> dict[str, Any]:
        return {
            "day": self.day.isoformat(),
            "sessions": self.sessions,
            "messages": self.messages,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "total_tokens": self.total_tokens,
            "cost": self.cost,
        }


@dataclass
class Report:
    """Everything the page, the JSON and the CSV downloads show for one window."""

    window: Window
    now: float
    lo: float | None
    hi: float | None
    generated_at: float
    empty: bool = True
    overview: dict[str, Any] = field(default_factory=dict)
    models: list[dict[str, Any]] = field(default_factory=list)
    platforms: list[dict[str, Any]] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    skills: dict[str, Any] = field(default_factory=lambda: skill_breakdown([]))
    activity: dict[str, Any] = field(default_factory=dict)
    top_sessions: list[dict[str, Any]] = field(default_factory=list)
    heatmap: list[list[int]] = field(default_factory=lambda: [[0] * 24 for _ in range(7)])
    days_by_start: list[DayRow] = field(default_factory=list)
    days_by_activity: list[DayRow] | None = None  # None: not asked, or the file has none
    models_from: str = "session_model_usage"  # or "sessions" on files without that table
    sessions_uncounted: int = 0  # window sessions whose messages the deadline left uncounted
    timezone: str = "UTC"
    elapsed: float = 0.0

    @property
    def messages_complete(self) -> bool:
        return self.sessions_uncounted == 0

    def day_rows(self, basis: str) -> list[DayRow]:
        """The days by ``basis``: "activity" (when read) or "start"."""
        if basis == "activity" and self.days_by_activity is not None:
            return self.days_by_activity
        return self.days_by_start

    def as_hermes_dict(self) -> dict[str, Any]:
        """Hermes's report dictionary (same keys), plus fields of ours beside them."""
        w = self.window
        return {
            "days": w.days if not w.is_custom else None,
            "source_filter": w.source,
            "empty": self.empty,
            "generated_at": self.generated_at,
            "overview": self.overview,
            "models": self.models,
            "platforms": self.platforms,
            "tools": self.tools,
            "skills": self.skills,
            "activity": self.activity,
            "top_sessions": self.top_sessions,
            # Ours.
            "model_filter": w.model,
            "window": {
                "label": w.label,
                "started_at_min": self.lo,
                "started_at_max_exclusive": self.hi,
                "start_day": w.start_day.isoformat() if w.start_day else None,
                "end_day": w.end_day.isoformat() if w.end_day else None,
                "time_zone": self.timezone,
            },
            "models_from": self.models_from,
            "messages_complete": self.messages_complete,
            "sessions_uncounted": self.sessions_uncounted,
            "daily_by_start_day": [d.as_dict() for d in self.days_by_start],
            "daily_by_activity_day": (
                [d.as_dict() for d in self.days_by_activity]
                if self.days_by_activity is not None
                else None
            ),
            "weekday_hour_sessions": self.heatmap,
            "cost_note": "Token and cost figures are local estimates, not a bill.",
        }


def overview(
    totals: dict[str, Any], roles: dict[str, int], models: list[dict[str, Any]]
) -> dict[str, Any]:
    """Hermes's overview block.  With models, token and cost totals are the sums over models
    (so auxiliary usage counts); without, the sessions' own counters."""
    rows = models or [totals]
    tokens = {k: sum(_int(r.get(k)) for r in rows) for k in TOKEN_KEYS}
    total_tokens = sum(tokens.values())
    cost = sum(m["cost"] for m in models) if models else totals["cost"]
    n = totals["sessions"]
    durations = totals["durations"]
    return {
        "total_sessions": n,
        "total_messages": totals["messages"],
        "total_tool_calls": totals["tool_calls"],
        "total_input_tokens": tokens["input_tokens"],
        "total_output_tokens": tokens["output_tokens"],
        "total_cache_read_tokens": tokens["cache_read_tokens"],
        "total_cache_write_tokens": tokens["cache_write_tokens"],
        "total_tokens": total_tokens,
        "estimated_cost": cost,
        "actual_cost": totals["actual_cost"],
        "total_hours": totals["duration_sum"] / 3600 if durations else 0,
        "avg_session_duration": totals["duration_sum"] / durations if durations else 0,
        "avg_messages_per_session": totals["messages"] / n if n else 0,
        "avg_tokens_per_session": total_tokens / n if n else 0,
        "user_messages": roles["user"],
        "assistant_messages": roles["assistant"],
        "tool_messages": roles["tool"],
        "date_range_start": totals["first_started"],
        "date_range_end": totals["last_started"],
        "included_cost_sessions": totals["included"],
        "unknown_cost_sessions": totals["unknown"],
        # Ours.
        "total_reasoning_tokens": sum(m["reasoning_tokens"] for m in models),
        "total_api_calls": sum(m["api_calls"] for m in models),
        "stored_messages": roles["stored"],
        "sessions_with_duration": durations,
    }


_SOURCE_KEYS = (
    "sessions",
    "messages",
    "tool_calls",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
    "api_calls",
    "cost",
    "actual_cost",
    "duration_sum",
    "durations",
    "first_started",
    "last_started",
    "included",
    "unknown",
)


def _totals(platform_rows: dict[str, dict[str, Any]]) -> dict[str, Any]:
    totals: dict[str, Any] = dict.fromkeys(_SOURCE_KEYS, 0)
    totals["first_started"] = totals["last_started"] = None
    for row in platform_rows.values():
        for key in _SOURCE_KEYS:
            value = row[key]
            if key == "first_started":
                if value is not None and (totals[key] is None or value < totals[key]):
                    totals[key] = value
            elif key == "last_started":
                if value is not None and (totals[key] is None or value > totals[key]):
                    totals[key] = value
            else:
                totals[key] += value
    return totals


def days_by_activity(scope: _Scope) -> list[DayRow]:
    """Per local day the usage happened (``session_daily_usage``), for the window's sessions.

    Usage from before Hermes started writing this table was never spread over days.
    """
    d = scope.dcol
    sql = f"""SELECT d.day, COUNT(DISTINCT d.session_id), SUM(COALESCE({d("input_tokens")}, 0)),
               SUM(COALESCE({d("output_tokens")}, 0)),
               SUM(COALESCE({d("cache_read_tokens")}, 0)),
               SUM(COALESCE({d("cache_write_tokens")}, 0)),
               SUM(COALESCE({d("estimated_cost_usd", "NULL")}, 0.0))
        FROM session_daily_usage d WHERE d.session_id IN ({scope.session_ids})
        GROUP BY d.day ORDER BY d.day"""
    out = []
    for day, n, i, o, cr, cw, cost in store.rows(sql, scope.params):
        try:
            parsed = dt.date.fromisoformat(str(day))
        except ValueError:
            continue  # not a 'YYYY-MM-DD' day: nothing to place on a calendar
        out.append(DayRow(parsed, _int(n), 0, _int(i), _int(o), _int(cr), _int(cw), _float(cost)))
    return out


def build_report(
    window: Window,
    *,
    now: float | None = None,
    activity_days: bool = False,
    use_cache: bool = True,
    collect_seconds: float | None = None,
) -> Report:
    """The whole report for ``window``; ``now`` is injectable for deterministic tests.

    ``activity_days`` also reads ``session_daily_usage`` when the file has it;
    ``use_cache=False`` recomputes every session's message summary; ``collect_seconds``
    bounds the time spent computing summaries that are not cached yet.
    """
    started = time.monotonic()
    now = current_time() if now is None else float(now)
    tz = timezone.get_current_timezone()
    scope = _scope(window, now)
    lo, hi = window.bounds(now)
    report = Report(
        window=window,
        now=now,
        lo=lo,
        hi=hi,
        generated_at=time.time(),
        timezone=str(tz),
        models_from="session_model_usage" if scope.has_usage else "sessions",
    )
    n, first, last = _window_span(scope)
    if not n:
        report.elapsed = time.monotonic() - started
        return report
    report.empty = False
    segments = offset_segments(tz, first, last)
    params = list(scope.params)
    platforms: dict[str, dict[str, Any]] = {}
    per_model: dict[str | None, list] = {}
    grid = [[0] * 24 for _ in range(7)]
    days: list[DayRow] = []
    found: dict[str, tuple] = {}
    for kind, key, *v in store.rows(_session_statement(scope, segments), params):
        if kind == "source":
            platforms[key] = dict(zip(_SOURCE_KEYS, v[: len(_SOURCE_KEYS)], strict=True))
        elif kind == "day":
            days.append(
                DayRow(
                    EPOCH_DAY0 + dt.timedelta(days=int(key)),
                    _int(v[0]),
                    _int(v[1]),
                    _int(v[2]),
                    _int(v[3]),
                    _int(v[4]),
                    _int(v[5]),
                    _float(v[6]),
                )
            )
        elif kind == "hour":
            grid[int(key) // 24][int(key) % 24] = _int(v[0])
        elif kind == "model":
            per_model[key] = v[:10]
        elif kind == "top":
            found[key] = (v[0], v[1], v[2])
    for row in platforms.values():
        for k in _SOURCE_KEYS:
            if k in ("cost", "actual_cost", "duration_sum"):
                row[k] = _float(row[k])
            elif k not in ("first_started", "last_started"):
                row[k] = _int(row[k])
    totals = _totals(platforms)
    report.models = _models(scope, per_model)

    # Messages: roles, tools and skills from the per-session summaries.
    window_sessions = [
        (sid, count)
        for sid, count in store.rows(
            f"SELECT s.id, s.message_count FROM sessions s WHERE {scope.where}", params
        )
    ]
    collected = summaries_module.collect(
        window_sessions, use_cache=use_cache, time_limit=collect_seconds
    )
    report.sessions_uncounted = collected.missing
    roles = {"user": 0, "assistant": 0, "tool": 0, "stored": 0}
    tools: Counter = Counter()
    skills: dict[str, dict[str, Any]] = {}
    for s in collected.summaries:
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

    report.overview = overview(totals, roles, report.models)
    report.platforms = sorted(
        (
            {
                "platform": source,
                "sessions": row["sessions"],
                "messages": row["messages"],
                **{k: row[k] for k in TOKEN_KEYS},
                "total_tokens": sum(row[k] for k in TOKEN_KEYS),
                "tool_calls": row["tool_calls"],
                # Ours.
                "estimated_cost": row["cost"],
            }
            for source, row in platforms.items()
        ),
        key=lambda p: (-p["sessions"], p["platform"]),
    )
    report.tools = tool_breakdown(tools)
    report.skills = skill_breakdown(list(skills.values()))
    report.heatmap = grid
    report.days_by_start = sorted(days, key=lambda d: d.day)
    report.activity = activity(grid, [d.day for d in report.days_by_start if d.sessions])
    report.top_sessions = top_sessions(found, tz)
    if activity_days and scope.shape.has_daily_usage:
        report.days_by_activity = days_by_activity(scope)
    report.elapsed = time.monotonic() - started
    return report
