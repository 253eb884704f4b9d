"""The corpus of old URLs run against Datasette and the explorer, and how answers compare.

:func:`corpus` lists URLs for one store: meta URLs, every table with every shape and size,
every filter operator, sorts on every column, searches, facets, labels, CSV and streams, SQL
with parameters, ``_where``, row pages and bad input.  :func:`compare` classifies a pair of
answers:

``match``
    same status, same JSON keys, columns, rows (a value may differ only where the explorer
    redacted it), order, count, ``next`` and ``next_url`` (hosts aside); same CSV text.
``error-400``
    Datasette answered a 500 (or a 200 with ``ok: false``) where the explorer answers a JSON 400.
``defused``
    a CSV whose only difference is a cell a spreadsheet would run as a formula (``=``, ``+``,
    ``-``, ``@``), which the explorer's CSV prefixes with ``'``; with ``_raw=1`` it is the same.
``mismatch``
    anything else.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from urllib.parse import quote

from legacy_app.api.shapes import NDJSON
from redaction import redact

IGNORED_KEYS = {"query_ms", "query"}


@dataclass
class Answer:
    status: int
    content_type: str
    body: bytes

    @property
    def json(self):
        try:
            return json.loads(self.body)
        except ValueError:
            return None


def q(value: str) -> str:
    return quote(value, safe="")


def corpus(facts: dict, shape: str) -> list[str]:
    sessions = facts["sessions"]
    sid = sessions[4]
    current = shape == "current"
    urls = ["/state.json", "/-/versions.json"]
    tables = ["sessions", "messages", "schema_version", "sqlite_sequence", "session_model_usage"]
    if current:
        tables += ["session_daily_usage", "state_meta", "system_prompts"]
    for t in tables:
        urls += [
            f"/state/{t}.json",
            f"/state/{t}.json?_size=3",
            f"/state/{t}.json?_size=0",
            f"/state/{t}.json?_shape=objects&_size=4",
            f"/state/{t}.json?_shape=array&_size=4",
            f"/state/{t}.json?_shape=object&_size=4",
            f"/state/{t}.csv",
            f"/state/{t}.csv?_stream=on",
        ]
    # Sizes and shapes.
    urls += [
        "/state/sessions.json?_size=max",
        "/state/messages.json?_size=max",
        "/state/messages.json?_size=1000",
        "/state/messages.json?_size=1001",
        "/state/messages.json?_size=-1",
        "/state/messages.json?_size=abc",
        "/state/messages.json?_size=",
        "/state/messages.json?_size=7&_size=9",
        "/state/sessions.json?_shape=arrayfirst",
        "/state/sessions.json?_shape=bogus",
        "/state/messages.json?_shape=array&_nl=on&_size=5",
        "/state/messages.json?_shape=array&_nl=on&_size=1",
        "/state/messages.json?_shape=array&_nl=on&_size=0",
        "/state/messages.json?_shape=array&_nl=on&role=nosuch",
        "/state/messages.json?_shape=array&_nl=on&_size=3&_labels=on",
        "/state/messages.json?_shape=array&_nl=on&_sort_desc=role&_size=4&_next=user%2C9",
        "/state/messages.json?_shape=array&_nl=off&_size=2",
        "/state/messages.json?_shape=objects&_nl=on&_size=2",
        "/state/messages/2.json?_shape=array&_nl=on",
        "/state.json?sql=" + q("select 1 as a union all select 2") + "&_shape=array&_nl=on",
        "/state/messages.json?_shape=objects&_json=tool_calls&_size=12",
        "/state/sessions.json?_json=model_config&_size=3",
        "/state/sessions.json?_col=source&_col=title",
        "/state/sessions.json?_col=title&_col=title&_size=4",
        "/state/sessions.json?_nocol=title&_nocol=model_config&_size=4",
        "/state/sessions.json?_col=nope",
        "/state/sessions.json?_nocol=id",
        "/state/messages.json?_col=role&_shape=objects&_size=5",
        "/state/session_model_usage.json?_col=input_tokens&_size=5",
        "/state/sessions.json?_nocount=1&_size=2",
        "/state/sessions.json?_nofacet=1&_facet=source",
        "/state/sessions.json?_labels=on&_size=2",
        "/state/messages.json?_labels=on&_size=6",
        "/state/messages.json?_label=session_id&_size=6&_shape=objects",
        "/state/messages.json?_labels=off&_size=3",
        "/state/messages.csv?_labels=on&_size=6",
        f"/state/messages.json?session_id={q(sid)}",
        f"/state/messages.json?session_id={q(sid)}&_shape=array",
        f"/state/messages.csv?session_id={q(sid)}",
        f"/state/messages.json?session_id={q(sid)}&_sort_desc=id",
    ]
    # Every operator.
    ops = [
        "source=telegram",
        "source__exact=cli",
        "source__not=telegram",
        "title__contains=plan",
        "title__contains=%25",
        "title__contains=_ok",
        "title__endswith=%231",
        "title__startswith=Deploy",
        "message_count__gt=10",
        "message_count__gte=10",
        "message_count__lt=8",
        "message_count__lte=8",
        "estimated_cost_usd__gt=0.03",
        "estimated_cost_usd__lte=0.0125",
        "started_at__gt=1765000000",
        "started_at__lt=1765000000.5",
        "title__like=Deploy%25",
        "title__like=%25_%25",
        "title__notlike=Deploy%25",
        "title__glob=*part*",
        "title__glob=[A-D]*",
        "source__in=telegram,cli",
        "source__in=" + q('["cron","discord"]'),
        "source__notin=telegram,cli",
        "message_count__in=5,6,7",
        "title__isnull=1",
        "title__notnull=1",
        "user_id__isblank=1",
        "user_id__notblank=1",
        "ended_at__isnull=1",
        "estimated_cost_usd__notnull=1",
        "source__regex=tele",
        "nosuch__exact=1",
        "nosuch__regex=1",
        "source=telegram&message_count__gte=5",
        "source=telegram&source=cli",
        "source__not=telegram&source__not=cli",
        "title__contains=" + q("東京"),
        "title__contains=" + q("Ünï"),
        "title=" + q("Budget ~ review #2"),
        "model__startswith=openai",
        "id__gt=20251210",
        "id__lt=api",
        "end_reason__in=idle,compression&_sort_desc=started_at",
        "parent_session_id__notnull=1",
    ]
    urls += [f"/state/sessions.json?{o}" for o in ops]
    urls += [f"/state/sessions.csv?{o}" for o in ops[:8]]
    msg_ops = [
        "role=user",
        "role__not=user&_size=20",
        "role__in=tool,user&_size=20",
        "tool_name=terminal",
        "tool_name__isnull=1&_size=10",
        "token_count__gte=40",
        "token_count__lt=5&_size=30",
        "token_count__isnull=1",
        "content__contains=deploy&_size=20",
        "content__isblank=1",
        "content__notblank=1&_size=10",
        "finish_reason__notnull=1&_size=10",
        "tool_calls__notnull=1&_size=10",
        "id__gt=100&_size=10",
        "id__in=1,2,3,50",
        "timestamp__gt=1765000000&_size=10",
        "rowid__lt=10",
        f"session_id={q(sid)}&role=assistant",
        f"session_id__in={q(sessions[1])},{q(sessions[2])}",
        "_compressed_summary__isnull=1&_size=5" if current else "compacted__isnull=1&_size=5",
    ]
    urls += [f"/state/messages.json?{o}" for o in msg_ops]
    if current:
        urls += [
            "/state/state_meta.json?value__arraycontains=beta",
            "/state/state_meta.json?value__arraynotcontains=beta",
            "/state/state_meta.json?value__arraycontains=gamma&_shape=objects",
            "/state/session_daily_usage.json?day__date=2025-12-03",
            "/state/session_daily_usage.json?day__gte=2025-12-05&_sort=day",
            "/state/session_daily_usage.json?_facet_date=day",
            "/state/state_meta.json?_facet_array=value",
            "/state/state_meta.json?key__startswith=tags",
            "/state/system_prompts.json?prompt__contains=comma",
        ]
    # Sorts: every column of sessions, both ways; messages and usage on a selection.
    columns_s = [
        "id", "source", "user_id", "model", "title", "started_at", "ended_at", "message_count",
        "input_tokens", "output_tokens", "estimated_cost_usd", "end_reason", "cost_status",
        "parent_session_id",
    ]  # fmt: skip
    for c in columns_s:
        urls += [
            f"/state/sessions.json?_sort={c}&_size=10",
            f"/state/sessions.json?_sort_desc={c}&_size=10",
        ]
    for c in ["id", "session_id", "role", "timestamp", "token_count", "tool_name", "finish_reason"]:
        urls += [
            f"/state/messages.json?_sort={c}&_size=15",
            f"/state/messages.json?_sort_desc={c}&_size=15",
        ]
    urls += [
        "/state/session_model_usage.json?_sort=input_tokens&_size=5",
        "/state/session_model_usage.json?_sort_desc=estimated_cost_usd&_size=5",
        "/state/schema_version.json?_sort=rowid",
        "/state/sessions.json?_sort=nope",
        "/state/sessions.json?_sort=id&_sort_desc=id",
        "/state/messages.json?_sort=rowid",
        "/state/sessions.json?source=cli&_sort_desc=started_at",
        "/state/sessions.csv?source=cli&_sort_desc=started_at",
        "/state/sessions.json?_sort=title&title__notnull=1&_size=5",
    ]
    # Search.
    urls += [
        "/state/messages.json?_search=deploy",
        "/state/messages.json?_search=deploy+database",
        "/state/messages.json?_search=" + q('"exact phrase"'),
        "/state/messages.json?_search=" + q('"exact phrase" deploy'),
        "/state/messages.json?_search=" + q('unbalanced "quote'),
        "/state/messages.json?_search=deploy+OR+weather&_searchmode=raw",
        "/state/messages.json?_search=depl*&_searchmode=raw",
        "/state/messages.json?_search=" + q("deploy -"),
        "/state/messages.json?_search=" + q('"broken') + "&_searchmode=raw",
        "/state/messages.json?_search=deploy&_sort_desc=timestamp",
        "/state/messages.json?_search=deploy&_sort=role&_size=5",
        "/state/messages.json?_search=deploy&role=user",
        "/state/messages.json?_search=deploy&_size=5",
        "/state/messages.json?_search=" + q("東京"),
        "/state/messages.json?_search=nothingmatchesthis",
        "/state/messages.csv?_search=deploy",
        "/state/messages.json?_search=deploy&_searchmode=escaped",
        "/state/messages.json?_search_content=deploy",
        "/state/messages.json?_search_nosuch=deploy",
        "/state/sessions.json?_search=deploy&_size=3",
    ]
    # Facets.
    urls += [
        "/state/sessions.json?_facet=source",
        "/state/sessions.json?_facet=source&_facet=model",
        "/state/sessions.json?_facet=source&source=telegram",
        "/state/sessions.json?_facet=end_reason&_facet_size=2",
        "/state/sessions.json?_facet=source&_facet_size=max",
        "/state/sessions.json?_facet=nope",
        "/state/messages.json?_facet=role&_size=1",
        f"/state/messages.json?_facet=role&session_id={q(sid)}",
        "/state/messages.json?_facet=session_id&_size=1",
        "/state/messages.json?_facet=role&_search=deploy&_size=2",
        "/state/sessions.json?_facet=" + q('{"column": "source"}'),
    ]
    # Custom SQL.
    urls += [
        "/state.json?sql=" + q("select id, title from sessions order by id limit 5"),
        "/state.json?sql="
        + q("select count(*) as n from messages where role = :role")
        + "&role=user",
        "/state.json?sql=" + q("select :a as a, :b as b") + "&a=1",
        "/state.json?sql="
        + q("select source, count(*) as n from sessions group by source order by source")
        + "&_shape=objects",
        "/state.json?sql=" + q("select id from messages order by id limit 3") + "&_shape=array",
        "/state.json?sql=" + q("select id from messages order by id"),
        "/state.json?sql=" + q("select nope from sessions"),
        "/state.json?sql=" + q("update sessions set title = 'x'"),
        "/state.csv?sql=" + q("select id, source from sessions order by id limit 4"),
        "/state.json?sql=" + q("with t as (select 1 as x) select * from t"),
    ]
    # _where (staff).
    urls += [
        "/state/sessions.json?_where=" + q("message_count > 10"),
        "/state/sessions.json?_where=" + q("message_count > 10") + "&_where=" + q("source = 'cli'"),
        "/state/messages.json?_where=" + q("length(content) > 60") + "&_size=5",
    ]
    # Rows.
    urls += [
        f"/state/sessions/{sid}.json",
        "/state/messages/1.json",
        "/state/messages/999999.json",
        "/state/schema_version/1.json",
        f"/state/sessions/{facts['late']}.json?_extras=foreign_key_tables",
    ]
    if shape != "doc":
        urls.append(f"/state/session_model_usage/{_usage_key(facts)}.json")
    # CSV options.
    urls += [
        "/state/sessions.csv?_dl=1&_size=5",
        "/state/sessions.csv?_header=off&_size=5",
        "/state/messages.csv?_stream=on&role=user",
        "/state/messages.csv?_stream=on&_sort_desc=timestamp",
        "/state/messages.csv?_stream=on&_next=5",
        "/state/sessions.csv?_sort=title&_size=5",
        "/state/messages.csv?_size=3&_col=role",
        "/state/sessions.csv?_raw=1",
        "/state/sessions.csv?_raw=1&_stream=on&_sort=title",
        "/state/sessions.csv?title__startswith=%3D",
    ]
    # Explicit tokens: Datasette's own formats, NULL sort values, tilde-encoded values, junk.
    late, api = facts["late"], next(x for x in sessions if x.startswith("api-"))
    urls += [
        f"/state/sessions.json?_next={q(sessions[10])}&_size=5",
        f"/state/sessions.json?_next={q(late)}&_size=5",
        f"/state/sessions.json?_next={q(api)}&_size=5",
        "/state/sessions.json?_next=garbage&_size=5",
        "/state/messages.json?_next=100&_size=5",
        "/state/messages.json?_next=100&_sort=id&_size=5",
        "/state/messages.json?_next=abc&_size=5",
        f"/state/sessions.json?_sort=started_at&_next=1765000000.0%2C{q(sessions[3])}&_size=5",
        f"/state/sessions.json?_sort_desc=started_at&_next=1765000000.0%2C{q(sessions[3])}&_size=5",
        f"/state/sessions.json?_sort=title&_next=%24null%2C{q(sessions[6])}&_size=5",
        f"/state/sessions.json?_sort_desc=title&_next=%24null%2C{q(sessions[6])}&_size=5",
        f"/state/sessions.json?_sort_desc=estimated_cost_usd&_next=%24null%2C{q(sessions[1])}&_size=5",
        f"/state/sessions.json?_sort=title&_next=Deploy+plan~2C+part+1+~231%2C{q(sessions[1])}&_size=5",
        f"/state/sessions.json?_sort=message_count&_next=5%2C{q(sessions[20])}&_size=5",
        "/state/messages.json?_sort=role&_next=tool%2C50&_size=5",
        "/state/messages.json?_sort_desc=token_count&_next=%24null%2C10&_size=5",
        "/state/messages.json?_sort=token_count&_next=%24null%2C300&_size=5",
        "/state/schema_version.json?_next=0",
        f"/state/session_model_usage.json?_next={_usage_key(facts)}&_size=3",
        "/state/messages.json?_search=deploy&_size=3&_next=40",
        f"/state/messages.json?_search=deploy&_sort=session_id&_next={q(sessions[2])}%2C30&_size=3",
        "/state/sessions.json?_next=",
    ]
    # Message filters as CSV, columns and sorts together, shapes with options.
    urls += [f"/state/messages.csv?{o}" for o in msg_ops[:12]]
    urls += [
        "/state/sessions.json?_col=title&_sort=started_at&_size=3",
        "/state/sessions.json?_nocol=started_at&_sort_desc=started_at&_size=3",
        "/state/sessions.json?_col=title&_sort_desc=message_count&_size=4&_shape=objects",
        "/state/messages.json?_col=content&_sort=timestamp&_size=4",
        "/state/sessions.json?_json_infinity=1&_size=2",
        "/state/sessions.json?_shape=object&_col=title&_size=3",
        "/state/sessions.json?_shape=array&_col=source&_size=3&_nl=on",
        "/state/sessions.json?_shape=arrayfirst&_col=source&_size=3",
        "/state/messages.json?_labels=on&_shape=object&_size=3",
        "/state/messages.json?_label=session_id&_col=session_id&_size=3",
        "/state/messages.json?_labels=on&_shape=array&_size=3",
        "/state/messages.csv?_labels=on&_stream=on&role=tool",
        "/state/sessions.json?_facet=source&_facet=end_reason&source=cli",
        "/state/sessions.json?_facet=cost_status&_size=0",
        "/state/messages.json?_facet=role&role=user&_size=2",
        "/state/messages.json?_facet=tool_name&_facet_size=1&_size=2",
        "/state/sessions.json?_facet=model&_sort_desc=started_at&_size=3",
        "/state/sessions.json?_facet=source&_next=" + q(sessions[30]) + "&_size=3",
        "/state/sessions.json?_where=" + q("message_count > 5") + "&_sort=message_count&_size=4",
        "/state/sessions.json?_where=" + q("message_count > 5") + "&source=cli",
        "/state/messages.json?_where=" + q("role = 'tool'") + "&_facet=tool_name&_size=3",
    ]
    for t in tables:
        urls += [
            f"/state/{t}.json?_size=max",
            f"/state/{t}.csv?_size=max",
            f"/state/{t}.json?_nocount=1&_size=2",
            f"/state/{t}.json?_shape=objects&_size=2&_nofacet=1",
        ]
    urls += [
        "/state/schema_version.json?_sort_desc=rowid",
        "/state/sqlite_sequence.json?_sort=rowid",
        "/state/sqlite_sequence/1.json",
        f"/state/sessions/{api}.json",
        f"/state/sessions/{late}.json?_shape=objects",
        "/state/messages/2.json?_shape=array",
        "/state/sessions/nosuch.json",
        "/state/nosuchtable.json",
        "/state/nosuchtable/1.json",
    ]
    if current:
        urls += [
            "/state/system_prompts/h1.json",
            "/state/state_meta/tags.json",
            "/state/state_meta.json?_sort=value",
            "/state/state_meta.csv?value__arraycontains=beta",
            "/state/session_daily_usage.json?_sort_desc=day&_size=4",
            "/state/session_daily_usage.json?_facet=day&_size=0",
            "/state/session_daily_usage.csv?_sort=input_tokens&_size=5",
        ]
    urls += [
        "/state.json?sql=" + q("select * from sessions where id = :id") + f"&id={q(sid)}",
        "/state.json?sql="
        + q(
            "select json_extract(model_config, '$.temperature') as t, count(*) as n from sessions group by t order by t"
        ),
        "/state.json?sql="
        + q("select id, content from messages where content like :p order by id limit 5")
        + "&p=%25deploy%25",
        "/state.json?sql=" + q("select 1 as a union all select 2") + "&_shape=arrayfirst",
        "/state.json?sql=" + q("select :x as x") + "&x=" + q("a,b ~c"),
        "/state.csv?sql="
        + q("select role, count(*) as n from messages group by role order by role")
        + "&_dl=1",
        "/state.json?sql=",
        "/state.json?sql=" + q("pragma table_info(sessions)"),
    ]
    return urls


def _usage_key(facts: dict) -> str:
    return facts.get("usage_key", "x")


# Comparing -------------------------------------------------------------------------------------
def _normalise_urls(value, hosts: tuple[str, ...]):
    if isinstance(value, str):
        for host in hosts:
            if value.startswith(host):
                return value[len(host) :]
        return value
    if isinstance(value, list):
        return [_normalise_urls(v, hosts) for v in value]
    if isinstance(value, dict):
        return {k: _normalise_urls(v, hosts) for k, v in value.items()}
    return value


def same_value(ours, theirs) -> bool:
    """Equal, or equal once Datasette's value is redacted the way the explorer redacts."""
    if ours == theirs:
        return True
    if isinstance(ours, str) and isinstance(theirs, str):
        return ours == redact(theirs)
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        return all(same_value(a, b) for a, b in zip(ours, theirs, strict=True))
    if isinstance(ours, dict) and isinstance(theirs, dict) and ours.keys() == theirs.keys():
        return all(same_value(ours[k], theirs[k]) for k in ours)
    return False


def compare(url: str, ours: Answer, theirs: Answer, hosts: tuple[str, ...]) -> tuple[str, str]:
    if "_nl=" in url and ours.status == 200 and ours.content_type != theirs.content_type:
        # Newline-delimited JSON is said to be so where Datasette says text/plain; anything
        # else keeps Datasette's content type.
        if not (theirs.content_type.startswith("text/plain") and ours.content_type == NDJSON):
            return "mismatch", f"content type {ours.content_type!r} != {theirs.content_type!r}"
    if ours.status != theirs.status:
        if ours.status == 400 and theirs.status == 500:
            return "error-400", f"Datasette {theirs.status}, explorer 400"
        error = theirs.json if theirs.status == 200 else None
        if ours.status == 400 and isinstance(error, dict) and error.get("ok") is False:
            return "error-400", "Datasette 200 with ok: false, explorer 400"
        return "mismatch", f"status {ours.status} != {theirs.status}"
    if url.split("?")[0].endswith(".csv"):
        if ours.status != 200:
            return "match", ""
        a, b = ours.body.decode("utf-8", "replace"), theirs.body.decode("utf-8", "replace")
        if a == b or a == redact(b):
            return "match", ""
        ra, rb = list(csv.reader(io.StringIO(a))), list(csv.reader(io.StringIO(b)))
        if ra and ra == [[_defused(c) for c in r] for r in rb]:
            return "defused", "formula cells start with ' (_raw=1 gives Datasette's bytes)"
        return "mismatch", _first_difference(a, b)
    a, b = ours.json, theirs.json
    if a is None or b is None:
        if ours.body == theirs.body:
            return "match", ""
        # _nl=on: one JSON object per line.
        try:
            la = [json.loads(x) for x in ours.body.decode().splitlines() if x]
            lb = [json.loads(x) for x in theirs.body.decode().splitlines() if x]
        except ValueError:
            return "mismatch", "not JSON"
        return ("match", "") if same_value(la, lb) else ("mismatch", "lines differ")
    a = _normalise_urls(a, hosts)
    b = _normalise_urls(b, hosts)
    if url.startswith("/-/versions.json"):
        missing = set(b) - set(a)
        return ("match", "") if not missing else ("mismatch", f"keys missing {missing}")
    if isinstance(a, dict) and isinstance(b, dict):
        if ours.status != 200:
            return (
                ("match", "") if set(a) == set(b) else ("mismatch", f"error keys {set(a) ^ set(b)}")
            )
        if set(a) - IGNORED_KEYS != set(b) - IGNORED_KEYS:
            return "mismatch", f"keys {sorted(set(a) ^ set(b))}"
        differing = [k for k in b if k not in IGNORED_KEYS and not same_value(a[k], b[k])]
        if (
            url.startswith("/state.json")
            and "tables" in b
            and set(differing)
            <= {
                "tables",
                "hidden_count",
            }
        ):
            # Datasette was served a copy without the unloadable messages_fts_cjk: the
            # explorer lists that table too (hidden), and so one more hidden table.
            lacking = {t["name"] for t in a["tables"]} - {t["name"] for t in b["tables"]}
            extra_hidden = all(t["hidden"] for t in a["tables"] if t["name"] in lacking)
            if (
                _same_tables(a["tables"], b["tables"])
                and extra_hidden
                and a["hidden_count"] - b["hidden_count"] == len(lacking)
            ):
                differing = []
        if not differing:
            return "match", ""
        return "mismatch", f"differ: {differing}: " + _detail(a, b, differing[0])
    if same_value(a, b):
        return "match", ""
    return "mismatch", "body differs"


def _defused(cell: str) -> str:
    return "'" + cell if cell.startswith(("=", "+", "-", "@", "\t", "\r")) else cell


def _same_tables(a: list, b: list) -> bool:
    """The database page: every table Datasette lists that the explorer can open, the same;
    full-text tables (which the explorer never opens) by name only.  A count either side left
    null (each counts under a time limit, and gives up on a busy machine) is not compared."""
    ours = {t["name"]: t for t in a}
    for table in b:
        mine = ours.get(table["name"])
        if mine is None:
            return False
        if table["hidden"]:
            continue
        skipped = {"fts_table"} | (
            {"count"} if None in (mine.get("count"), table.get("count")) else set()
        )
        if {k: v for k, v in mine.items() if k not in skipped} != {
            k: v for k, v in table.items() if k not in skipped
        }:
            return False
    return True


def _detail(a, b, key) -> str:
    return f"ours={json.dumps(a.get(key))[:300]} theirs={json.dumps(b.get(key))[:300]}"


def _first_difference(a: str, b: str) -> str:
    for n, (x, y) in enumerate(zip(a.splitlines(), b.splitlines(), strict=False)):
        if x != y:
            return f"line {n}: ours={x[:200]!r} theirs={y[:200]!r}"
    return f"lengths {len(a)} != {len(b)}"
