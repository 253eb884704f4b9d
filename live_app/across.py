"""The failures page and the home page over several profiles (``docs/profiles.md``): each
profile's figures as on its own page, summed; its lists merged newest first, with a position
per profile in the next page's link, signed so that a damaged link is a form error, never a
wrong page."""

from __future__ import annotations

import functools
import heapq
import itertools
import sqlite3
from collections import Counter, defaultdict
from dataclasses import replace

from django.core import signing
from django.db import DatabaseError

from hermes_explorer import store as state_db
from hermes_explorer import stores as registry
from insights_app.merged import each

from . import failures
from .failures import Filters, Group, Report

SALT = "failures-list"


def name_of(store) -> str:
    """A store's name (None: the current store's)."""
    store = store or registry.current()
    return store.name if store is not None else ""


def _groups(lists: list[list[Group]]) -> list[Group]:
    merged: dict[str, Group] = {}
    for groups in lists:
        for g in groups:
            into = merged.setdefault(g.key, Group(g.key))
            into.failures += g.failures
            into.tool_calls += g.tool_calls
            into.sessions += g.sessions
            into.by_kind.update(g.by_kind)
    return failures.ranked(merged)


def combine(reports: list[Report]) -> Report:
    """One report of several profiles': counts, groups and days summed; a field is recorded
    when every profile records it."""
    if len(reports) == 1:
        return reports[0]
    first = reports[0]
    daily: dict[str, Counter] = defaultdict(Counter)
    for r in reports:
        for day, kinds in r.by_day:
            daily[day].update(kinds)
    return replace(
        first,
        kinds=sum((r.kinds for r in reports), Counter()),
        tool_calls=sum(r.tool_calls for r in reports),
        sessions=sum(r.sessions for r in reports),
        failed_sessions=sum(r.failed_sessions for r in reports),
        by_tool=_groups([r.by_tool for r in reports]),
        by_model=_groups([r.by_model for r in reports]),
        by_source=_groups([r.by_source for r in reports]),
        by_day=sorted(daily.items()),
        recorded={k: all(r.recorded[k] for r in reports) for k in first.recorded},
        elapsed=sum(r.elapsed for r in reports),
    )


def report(parts, f: Filters, *, budget: float, notes: list[str]) -> Report | None:
    found = each(parts, lambda _store: failures.report_for(f, budget=budget), notes)
    return combine([r for _s, r in found]) if found else None


# The lists: failing messages newest first by id, failed sessions by (start, id).
def _messages(f: Filters, at, n: int, budget: float) -> list[dict]:
    chunks = failures.failing_messages(f, budget=budget, limit=n, below=at)
    return list(itertools.chain.from_iterable(chunks))[:n]


LISTS = {
    "messages": (_messages, lambda row: row["message_id"]),
    "sessions": (
        lambda f, at, n, budget: failures.failed_sessions(f, budget=budget, limit=n, after=at),
        lambda row: [row["timestamp"], row["session_id"]],
    ),
}


def positions(token: str) -> dict:
    """The per-profile positions a page link carries (``signing.BadSignature`` if damaged)."""
    found = signing.loads(token, salt=SALT) if token else {}
    if not isinstance(found, dict):
        raise signing.BadSignature("not positions")
    return found


def page(parts, which: str, f: Filters, at: dict, n: int, *, budget: float, notes: list[str]):
    """``(rows, next_token)``: the next ``n`` rows of list ``which`` after the per-profile
    positions ``at`` (newest first, ties by profile), and the next page's token (None at the
    end).  A position is absent before a profile's first row and 0 past its last."""
    fetch, key = LISTS[which]
    streams: dict[str, list[dict]] = {}

    def rows_of(store):
        position = at.get(name_of(store))
        if position == 0:
            return []
        return state_db.while_unchanged(
            f"failures-{which}",
            (f, position, n),
            lambda: fetch(f, position, n + 1, budget),
            failures.PAGE_TTL,
        )

    for store, rows in each(parts, rows_of, notes):
        name = name_of(store)
        streams[name] = [{**row, "profile": name, "store": store} for row in rows]
    newest = heapq.merge(*streams.values(), key=lambda r: (-(r["timestamp"] or 0), r["profile"]))
    taken = list(itertools.islice(newest, n))
    following = dict(at)
    for name, rows in streams.items():
        mine = [row for row in taken if row["profile"] == name]
        if len(mine) == len(rows):
            following[name] = 0
        elif mine:
            following[name] = key(mine[-1])
    more = any(following.get(name, None) != 0 for name in streams)
    return taken, signing.dumps(following, salt=SALT) if more else None


def _inside(store, call):
    with registry.using(store):
        return call()


def every_row(parts, f: Filters, *, budget: float):
    """Every failure of ``parts`` for the export, a profile and a block at a time.  Each read
    is made inside its store: a streamed response resumes this outside the view's store."""
    for store in parts:
        name = name_of(store)
        chunks = failures.failing_messages(f, budget=budget)
        try:
            while (chunk := _inside(store, functools.partial(next, chunks, None))) is not None:
                yield [{**row, "profile": name} for row in chunk]
            sessions = _inside(store, lambda: failures.failed_sessions(f, budget=budget))
        except (DatabaseError, sqlite3.Error):
            if store is None:
                raise
            continue  # unreadable: the page names it
        yield [{**row, "profile": name} for row in sessions]
