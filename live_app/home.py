"""The home page's figures: today against yesterday, this week against last, the latest
failures and the week's costliest sessions.

Periods are local days (weeks start on Monday), and each figure has the definition of the page
it links to: sessions, messages, tool calls and cost are those of the sessions *started* in the
period, from insights' report of the last two weeks; failures are the failures page's, per
local day.  ``failures_warm`` computes them ahead on its timer, so a view reads no more of a
store ten times bigger.
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import caches
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode

from hermes_explorer import store
from hermes_explorer.dialect import greatest
from insights_app import reports
from insights_app.drilldown import Drill
from insights_app.figures.per_session import per_session_cte
from insights_app.figures.top_sessions import session_titles
from insights_app.localtime import offset_segments
from insights_app.merged import add_rows
from insights_app.window import Window, scope_of, window_span
from redaction import redact
from sessions_app.formatting import short_model
from sessions_app.selectors import source_overview
from sessions_app.timefmt import day_start_epoch, local_date

from . import across, failures

TTL = 60
LATEST = 5
COSTLIEST = 5
METRICS = ("sessions", "messages", "tool_calls", "cost", "failures")
# What the kept figures hold (2: sessions per source): figures kept by another version are
# computed again.
KEPT_VERSION = 2


@dataclass(frozen=True)
class Period:
    key: str  # today, yesterday, week, last_week
    first: dt.date
    last: dt.date  # inclusive


def periods(today: dt.date) -> list[Period]:
    monday = today - dt.timedelta(days=today.weekday())
    yesterday = today - dt.timedelta(days=1)
    return [
        Period("today", today, today),
        Period("yesterday", yesterday, yesterday),
        Period("week", monday, today),
        Period("last_week", monday - dt.timedelta(days=7), monday - dt.timedelta(days=1)),
    ]


def figures(*, budget: float) -> dict:
    """The period table and the week's costliest sessions: reused for a minute while the file
    is unchanged; else the latest of this store and day while younger than
    ``HERMES_INSIGHTS_STALE_SECONDS`` (the page says "as of" its time); else computed here."""
    now = time.time()
    today = local_date(now)

    def recent_or_computed() -> dict:
        value = caches["reports"].get(_latest_key(today))
        if value is None or now - value["generated_at"] > settings.HERMES_INSIGHTS_STALE_SECONDS:
            value = warm(budget=budget, now=now)
        return value

    return store.while_unchanged("home", (today, KEPT_VERSION), recent_or_computed, TTL)


def _latest_key(today: dt.date) -> str:
    return reports.cache_key(store.name(), today, KEPT_VERSION, "home-latest")


def warm(*, budget: float, now: float | None = None) -> dict:
    """Compute the figures now and keep them as the latest of this store and day."""
    now = time.time() if now is None else now
    today = local_date(now)
    value = _figures(today, now, budget)
    caches["reports"].set(_latest_key(today), value, reports.LATEST_TTL)
    return value


def latest_failures(*, budget: float) -> list[dict]:
    """The newest failures of the last week (messages and sessions), newest first; reused
    for a minute while the file is unchanged."""
    week = failures.Filters(days=7)

    def merged():
        now = time.time()
        chunks = failures.failing_messages(week, budget=budget, now=now, limit=LATEST)
        rows = [r for chunk in chunks for r in chunk]
        rows += failures.failed_sessions(week, budget=budget, now=now, limit=LATEST)
        return sorted(rows, key=lambda r: r["timestamp"] or 0, reverse=True)[:LATEST]

    return store.while_unchanged("home-failures", week, merged, failures.PAGE_TTL)


def newest(found: list[tuple], key: str, order, limit: int | None = None) -> list:
    """The rows ``key`` of every ``(store, part)`` of ``found``, each knowing its store, newest
    first by ``order``."""
    rows = []
    for one, part in found:
        name = across.name_of(one)
        for row in part[key]:
            if isinstance(row, dict):
                row = {**row, "store": one}
            else:
                row.store, row.store_name = one, name
            rows.append(row)
    return sorted(rows, key=order, reverse=True)[:limit]


def by_source(parts) -> list[dict]:
    """Sessions, messages and cost per source summed over profiles, most sessions first; a
    cost is shown when some profile records one."""
    summed = add_rows(parts, "source").values()
    return sorted(summed, key=lambda r: (-r["sessions"], r["source"] or ""))


def combine(parts: list[tuple]) -> dict:
    """The figures of several profiles ``[(store, figures)]``: every cell summed (the change
    recomputed), the costliest sessions of them all; a field is recorded when every profile
    records it."""
    for one, value in parts:
        for s in value["costliest"]:
            s["store"] = one
    if len(parts) == 1:
        return parts[0][1]
    values = [value for _store, value in parts]
    first = values[0]
    table = []
    for i, row in enumerate(first["table"]):
        cells = []
        for j, cell in enumerate(row["cells"]):
            total = sum(v["table"][i]["cells"][j]["value"] for v in values)
            cells.append({"period": cell["period"], "value": total, "href": cell["href"]})
        _changes(cells)
        table.append({"metric": row["metric"], "cells": cells})
    costliest = sorted(
        (s for v in values for s in v["costliest"]), key=lambda s: (-s["cost"], -s["started_at"])
    )
    return {
        **first,
        "table": table,
        "costliest": costliest[:COSTLIEST],
        "generated_at": min(v["generated_at"] for v in values),
        "recorded": {k: all(v["recorded"][k] for v in values) for k in first["recorded"]},
        "has_cost": all(v["has_cost"] for v in values),
        "has_tool_calls": all(v["has_tool_calls"] for v in values),
    }


def _changes(cells: list[dict]) -> None:
    """Today against yesterday, this week against last: the change in per cent."""
    for current, before in ((cells[0], cells[1]), (cells[2], cells[3])):
        if before["value"]:
            current["change"] = round(100 * (current["value"] - before["value"]) / before["value"])


def _figures(today: dt.date, now: float, budget: float) -> dict:
    spans = periods(today)
    window = Window(days=None, from_epoch=day_start_epoch(spans[-1].first))
    insights = reports.report_for(window)
    by_day = {
        d.day: {metric: getattr(d, metric) for metric in METRICS if metric != "failures"}
        for d in insights.days_by_start
    }
    scope, lo, hi = window_span(scope_of(Window(from_epoch=day_start_epoch(spans[2].first)), now))
    per = per_session_cte(scope, offset_segments(timezone.get_current_timezone(), lo, hi))
    cost = greatest("s_cost", "u_cost")
    top = store.rows(
        f"WITH {per} SELECT id, started_at, {cost} AS cost, source, model "
        f"FROM per WHERE {cost} > 0 ORDER BY cost DESC, started_at DESC, id DESC LIMIT %s",
        [*scope.params, COSTLIEST],
        budget,
    )
    titles = session_titles([r[0] for r in top], 200, budget)
    costliest = [
        {
            "session_id": sid,
            "title": redact(titles.get(sid) or ""),
            "source": source,
            "model": short_model(redact(model)),
            "started_at": started,
            "cost": cost,
        }
        for sid, started, cost, source, model in top
    ]
    report = failures.report_for(failures.Filters(days=14), budget=budget)
    for day, kinds in report.by_day:
        by_day.setdefault(dt.date.fromisoformat(day), {})["failures"] = sum(kinds.values())
    table = []
    for metric in METRICS:
        cells = []
        for span in spans:
            days = [
                span.first + dt.timedelta(days=n) for n in range((span.last - span.first).days + 1)
            ]
            value = sum(by_day.get(day, {}).get(metric) or 0 for day in days)
            cells.append({"period": span, "value": value, "href": _link(metric, span, now)})
        _changes(cells)
        table.append({"metric": metric, "cells": cells})
    return {
        "periods": spans,
        "table": table,
        "costliest": costliest,
        "generated_at": now,
        "recorded": report.recorded,
        "has_cost": scope.shape.has_column("sessions", "estimated_cost_usd"),
        "has_tool_calls": scope.shape.has_column("sessions", "tool_call_count"),
        "week_insights": _insights(spans[2]),
        "sources": source_overview(),
    }


def _insights(span: Period) -> str:
    params = {"days": "custom", "start": span.first, "end": span.last}
    return reverse("insights:index") + "?" + urlencode(params)


def _link(metric: str, span: Period, now: float) -> str:
    """The page behind a figure: the sessions started in the period, their insights, or the
    failures of its days (a window of whole days that holds them)."""
    if metric == "sessions":
        return Drill(Window(days=None), now).days(span.first, span.last)
    if metric == "failures":
        days = (local_date(now) - span.first).days + 1
        params = {"days": days, "start": span.first, "end": span.last}
        return reverse("failures:index") + "?" + urlencode(params)
    return _insights(span)
