"""The reads behind ``/people/``: one row per person of the insights window, with tokens and
cost counted as the insights overview counts them.

A person is the ids staff joined into one (by profile, platform and id), else one non-empty
``sessions.user_id`` over every platform and profile.  User ids and display names are
metadata: redacted for every role when read, and joined, filtered and sorted on their
redacted text only.
"""

from __future__ import annotations

from hermes_explorer import store
from hermes_explorer.dialect import greatest, plain, row_key
from profiles_app.links import store_key
from redaction import redact, redaction_enabled

from . import stats
from .figures.registry import TOKEN_KEYS
from .merged import each
from .models import PersonId
from .window import scope_of, window_span

COLUMNS = [
    "user_id",
    "display_name",
    "person",
    "platforms",
    "profiles",
    "sessions",
    "messages",
    "tokens",
    "estimated_cost_usd",
    "first_session_at",
    "last_session_at",
]
COUNTS = COLUMNS[5:]


def people_sql(scope) -> str:
    """Per user id and platform: sessions, messages, tokens, cost, first and last start; then
    per (user id, display name) its last start, to pick the latest name."""
    c, u = scope.scol, scope.ucol
    if scope.has_usage:
        # Each counter: its usage rows plus the session's residual (never below them).
        sums = [greatest(f"COALESCE({c(n)}, 0)", f"COALESCE(SUM({u(n)}), 0)") for n in TOKEN_KEYS]
        cost = greatest(
            f"COALESCE({c('estimated_cost_usd', 'NULL')}, 0.0)",
            f"COALESCE(SUM({u('estimated_cost_usd', 'NULL')}), 0.0)",
        )
        # As the insights pass groups (:func:`.figures.per_session.per_session_cte`): by
        # rowid, the table's order, unless the window is a narrow share of the file, where
        # ``+s.rowid`` lets SQLite find its sessions by the ``started_at`` index (measured
        # on the benchmark store: 30 days 42 → 25 ms, 365 days unchanged).
        join = "LEFT JOIN session_model_usage u ON u.session_id = s.id"
        group = f"GROUP BY {'+' if scope.narrow else ''}{row_key('s')}"
    else:
        sums = [f"COALESCE({c(n)}, 0)" for n in TOKEN_KEYS]
        cost, join, group = f"COALESCE({c('estimated_cost_usd', 'NULL')}, 0.0)", "", ""
    name = c("display_name", "NULL")
    return f"""
        WITH per AS MATERIALIZED (
            SELECT s.user_id AS uid, COALESCE(NULLIF(s.source, ''), 'unknown') AS source,
                   {name} AS dn, s.started_at AS st, COALESCE(s.message_count, 0) AS messages,
                   {" + ".join(sums)} AS tokens, {cost} AS cost
            FROM sessions s {join}
            WHERE {scope.where} AND s.user_id IS NOT NULL AND s.user_id <> '' {group})
        SELECT uid, NULL, source, COUNT(*), SUM(messages), SUM(tokens), SUM(cost), MIN(st),
               MAX(st)
        FROM per GROUP BY uid, source
        UNION ALL
        SELECT uid, dn, NULL, NULL, NULL, NULL, NULL, NULL, MAX(st)
        FROM per WHERE dn IS NOT NULL AND dn <> '' GROUP BY uid, dn"""


# How long the users of a window are reused while the file does not change (a "last N days"
# window slides with the clock: as the insights report's ``REPORT_TTL``).  Measured on the
# benchmark store in the same rounds: see docs/performance.md.
PEOPLE_TTL = 60


def store_ids(window, now: float) -> list[dict]:
    """The user ids of the window in the store open now, one row per (redacted) id and
    platform; reused while the file is unchanged, for ``PEOPLE_TTL`` seconds at most."""
    return store.while_unchanged(
        "people",
        (window, redaction_enabled(), store_key()),
        lambda: _store_ids(window, now),
        PEOPLE_TTL,
    )


def _store_ids(window, now: float) -> list[dict]:
    scope, _first, _last = window_span(scope_of(window, now))
    if not scope.shape.has_column("sessions", "user_id"):
        return []
    ids: dict[tuple[str, str], dict] = {}
    names: dict[str, tuple[float, str]] = {}
    for uid, dn, source, *counts in store.rows(people_sql(scope), list(scope.params)):
        uid, last = redact(uid), counts[-1] or 0
        if source is None:  # a display name and when it was last seen
            if uid not in names or last > names[uid][0]:
                names[uid] = (last, redact(dn))
            continue
        row = ids.setdefault((uid, source), {**_empty(uid, source), "source": source})
        _add(row, dict(zip(COUNTS, map(plain, counts), strict=True)))
    for row in ids.values():
        row["name_at"], row["display_name"] = names.get(row["user_id"], (0, None))
    return list(ids.values())


def _empty(uid: str | None = None, source: str | None = None) -> dict:
    return {
        "user_id": uid,
        "display_name": None,
        "name_at": 0,
        "person": None,
        "ids": {uid} - {None},
        "keys": set(),
        "platforms": {source} - {None},
        "profiles": set(),
        **dict.fromkeys(COUNTS[:3], 0),
        "estimated_cost_usd": 0.0,
        "first_session_at": None,
        "last_session_at": None,
    }


def _add(row: dict, more: dict) -> None:
    for key in COUNTS[:4]:
        row[key] += more[key] or 0
    for key, pick in (("first_session_at", min), ("last_session_at", max)):
        row[key] = pick((v for v in (row[key], more[key]) if v is not None), default=None)


def people(window, parts, notes: list[str]) -> list[dict]:
    """Every person of the window: of the store open now, or added up over ``parts``."""
    now = stats.current_time()
    found = [
        (key, part and part.name, rows)
        for part, (key, rows) in each(
            [None] if parts is None else parts,
            lambda _: (store_key(), store_ids(window, now)),
            notes,
        )
    ]
    joined = {
        (key, source, uid): name
        for key, source, uid, name in PersonId.objects.filter(
            store__in=[key for key, _, _ in found]
        ).values_list("store", "source", "user_id", "person__name")
    }
    merged: dict[tuple, dict] = {}
    for key, profile, rows in found:
        for one in rows:
            uid, source = one["user_id"], one["source"]
            person = joined.get((key, source, uid))
            row = merged.setdefault((person is not None, person or uid), _empty())
            row["person"] = person
            row["ids"].add(uid)
            row["keys"].add((key, source, uid))
            row["platforms"].add(source)
            row["profiles"] |= {profile} - {None}
            _add(row, one)
            if one["display_name"] and one["name_at"] >= row["name_at"]:
                row["display_name"], row["name_at"] = one["display_name"], one["name_at"]
    for row in merged.values():
        row["user_id"] = ", ".join(sorted(row["ids"]))
    return list(merged.values())


def person_ids(name: str) -> list[tuple[str, str]] | None:
    """``[(platform, user id)]`` of the person named ``name`` in the store open now, or None
    when nobody has that name."""
    ids = list(PersonId.objects.filter(person__name=name).values_list("store", "source", "user_id"))
    key = store_key()
    return [(source, uid) for at, source, uid in ids if at == key] if ids else None
