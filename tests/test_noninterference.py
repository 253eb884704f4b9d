"""Non-interference: twin stores that differ only inside secrets answer alike.

Twins A and B (``tests/twins.py``) hold the same sessions and messages and the same text after
redaction; only the secret values differ.  A reader who cannot reveal (viewer, analyst) must
get byte-identical answers from both for every request: status, content type and body, with
only the CSRF token and cookies normalised.  The probes are made from twin A's secrets
(prefixes, substrings, whole values, neighbours for ranges), so a filter, sort, facet, count
or error that decides on a raw secret shows up as a difference.

The crawl covers every page family and the old Datasette API; Hypothesis then generates
full-text and list queries (``tests/test_noninterference_generated.py``, a module of its own so
that the parallel run can give it to the other worker).  ``HERMES_TWIN_EXAMPLES`` sets the number of generated queries
(500 by default; 5000 or more for the long mode, see ``docs/security.md``).
"""

from __future__ import annotations

import difflib
import itertools
import os
import re
import time
from unittest import mock
from urllib.parse import quote, urlencode

import pytest
from django.core.cache import cache
from django.db import connections
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from insights_app import charts
from tests.conftest import use_store
from tests.roles_helpers import client_for
from tests.twins import MODELS, SOURCES, TOOLS, WORDS, build_twins

pytestmark = pytest.mark.django_db(databases=["default", "hermes"])

LAYOUTS = ("current", "legacy", "doc")
ROLES = ("viewer", "analyst")
LANGUAGES = ("en", "fr")
NOW = float(int(time.time()) // 3600 * 3600)  # the twins' sessions are in the days before
EXAMPLES = int(os.environ.get("HERMES_TWIN_EXAMPLES", "500"))
LONG = EXAMPLES >= 5000  # the long mode also crawls with every probe
PROBES = 40 if LONG else 4

_CSRF = re.compile(rb'(name="csrfmiddlewaretoken" value=")[^"]*(")')


@pytest.fixture(scope="module")
def twins(tmp_path_factory):
    """The twins of each layout, built once per module."""
    return {
        layout: build_twins(tmp_path_factory.mktemp(f"twins-{layout}"), layout, now=NOW)
        for layout in LAYOUTS
    }


def _answer(client, twins, side: str, url: str, language: str) -> tuple:
    # Twins kept elsewhere than in two files (PostgreSQL schemas) say how to serve a side.
    point = getattr(twins, "point", None)
    point(side) if point else use_store(getattr(twins, side))
    cache.clear()
    charts._ids = itertools.count(1)  # element ids count the charts this process drew
    # One clock for both twins: "computed in", "generated at" and windows ending now.
    with (
        mock.patch("time.time", return_value=NOW),
        mock.patch("time.perf_counter", return_value=0),
        mock.patch("time.monotonic", return_value=0),
    ):
        response = client.get(url, headers={"accept-language": language})
    body = b"".join(response.streaming_content) if response.streaming else response.content
    connections["hermes"].close()
    return response.status_code, response.get("Content-Type"), _CSRF.sub(rb"\1\2", body)


def _diff(a: bytes, b: bytes) -> str:
    """A short unified diff of two bodies, each changed line cut around its first change."""
    lines = list(
        difflib.unified_diff(
            a.decode(errors="replace").splitlines(),
            b.decode(errors="replace").splitlines(),
            n=0,
            lineterm="",
        )
    )[2:14]
    old = [line[1:] for line in lines if line[:1] == "-"]
    new = [line[1:] for line in lines if line[:1] == "+"]
    start = 0
    if old and new:
        start = next((i for i, (x, y) in enumerate(zip(old[0], new[0])) if x != y), 0)
    return "\n".join(
        line if line.startswith("@@") else line[0] + line[max(1, start - 80) : start + 120]
        for line in lines
    )


def differences(client, twins, urls, language: str) -> list[str]:
    """The URLs whose answers differ between the twins, each with a short diff."""
    found = []
    for url in urls:
        a = _answer(client, twins, "a", url, language)
        b = _answer(client, twins, "b", url, language)
        if a != b:  # once more, in case the clock on the page turned a second in between
            a = _answer(client, twins, "a", url, language)
            b = _answer(client, twins, "b", url, language)
        if a != b:
            found.append(f"{url} [{language}] {a[:2]} vs {b[:2]}\n" + _diff(a[2], b[2]))
    return found


def check(client, twins, urls, language: str = "en") -> None:
    found = differences(client, twins, urls, language)
    if os.environ.get("HERMES_TWIN_REPORT"):
        with open(os.environ["HERMES_TWIN_REPORT"], "a") as out:
            out.write("\n\n".join(found) + "\n\n")
    assert not found, f"{len(found)} of {len(urls)} answers differ:\n" + "\n\n".join(found[:15])


# --- Probes ---------------------------------------------------------------------------


def probes(twins, limit: int | None = None) -> list[str]:
    """Values made from twin A's secrets: whole, prefixes, substrings, neighbours."""
    found = []
    for secret in (twins.metadata_secrets + twins.secrets_a)[:limit]:
        head = secret[:12]
        found += [secret, secret[:6], head, secret[4:16], secret[-8:]]
        found += [head[:-1] + chr(ord(head[-1]) + 1), head[:-1] + chr(ord(head[-1]) - 1)]
    return list(dict.fromkeys(p for p in found if p.strip()))


def q(path: str, **params) -> str:
    return f"{path}?{urlencode(params, doseq=True)}" if params else path


# --- The crawl ------------------------------------------------------------------------

SESSION_TEXT = ("title", "user_id", "model", "end_reason", "cwd", "git_branch", "git_repo_root")
SESSION_SORTS = ("started_at", "source", "last_active")


def page_urls(twins) -> list[str]:
    """Every page family with its toggles, filters, sorts and exports (probes: a sample)."""
    sid = twins.session_ids[0]
    urls = ["/", "/sessions/", "/messages/", "/insights/", "/people/", "/live/", "/failures/"]
    urls += ["/review/next/", "/review/scores/"]
    for sort in SESSION_SORTS:
        for s in (sort, "-" + sort):
            urls += [q("/sessions/", sort=s), q("/sessions/", sort=s, flags="all")]
    for s in ("id", "-id"):
        urls.append(q("/messages/", sort=s))
    urls += [q("/sessions/", source=src) for src in SOURCES]
    urls += [q("/sessions/", model=m) for m in MODELS]
    urls += [q("/sessions/", cost_status=c) for c in ("estimated", "actual", "unknown", "none")]
    urls += [q("/sessions/", min_cost="0.05"), q("/sessions/", min_messages="2", has_parent="true")]
    urls += [q("/sessions/", chat_type="dm"), q("/sessions/", flags="archived_or_hidden")]
    urls += [q("/sessions/", started_after="2025-12-29", started_before="2025-12-31")]
    urls += [q("/messages/", role=r) for r in ("user", "assistant", "tool")]
    urls += [q("/messages/", tool_name=t) for t in TOOLS]
    urls += [q("/messages/", source="cli"), q("/messages/", session_id=sid)]
    urls += [q("/messages/", session_model=MODELS[0]), q("/messages/", skill="twin")]
    return urls + more_page_urls(twins)


def probe_urls(twins) -> list[str]:
    """The list filters and form fields, given values made from twin A's secrets."""
    urls = []
    for probe in probes(twins, PROBES // 2):
        for column in SESSION_TEXT:
            urls.append(q("/sessions/", **{column: probe}))
        urls += [q("/sessions/", used_model=probe), q("/sessions/", model=probe)]
        urls += [q("/messages/", tool_name=probe), q("/messages/", session_model=probe)]
        urls += [q("/messages/", skill=probe), q("/messages/", role=probe)]
        urls += [q("/people/", user=probe), q("/failures/", tool=probe, model=probe)]
        urls += [q("/sessions/", source=probe)]
    return urls


def session_page_urls(twins, numbers=(0, 5)) -> list[str]:
    """The session page with its toggles, its timeline and transcript exports, a message
    (sessions 0 and 5 call a tool named by a secret; 3 is in a compression chain)."""
    sid, mid = twins.session_ids[numbers[0]], twins.message_ids[4 * numbers[0] + 1]
    urls = [f"/review/sessions/{sid}/"]
    for session in (twins.session_ids[n] for n in numbers):
        base = f"/sessions/{session}/"
        urls += [base, base + "timeline/", base + "export.md", base + "export.json"]
        urls += [base + "export.md?chain=1", base + "export.json?chain=1"]
        urls += [q(base, show=["compacted", "rewound", "hidden"]), q(base, page="2")]
    urls += [f"/sessions/{sid}/messages/{mid}/", f"/sessions/{sid}/messages/{mid}.txt"]
    return urls


def export_urls(twins) -> list[str]:
    sid = twins.session_ids[0]
    urls = []
    for fmt in ("csv", "json", "jsonl"):
        urls += [q("/sessions/", _export=fmt), q("/messages/", _export=fmt)]
        urls += [q("/sessions/", _export=fmt, sort="-source"), q("/people/", _export=fmt)]
        urls += [q(f"/sessions/{sid}/timeline/", _export=fmt), q("/failures/", _export=fmt)]
        urls += [q("/insights/", _export=fmt, table=t) for t in ("models", "tools", "platforms")]
    urls.append(q("/sessions/", _export="dataset"))
    return urls


def more_page_urls(twins) -> list[str]:
    urls = []
    for sort in ("user_id", "display_name", "sessions", "tokens", "last_session_at"):
        urls += [q("/people/", sort=sort), q("/people/", sort="-" + sort)]
    urls += [q("/insights/", days="7"), q("/insights/", source="cli"), q("/live/", minutes="600")]
    urls += [q("/failures/", days="90"), q("/failures/", tool=TOOLS[0])]
    return urls + export_urls(twins)


TABLES = ("sessions", "messages", "session_model_usage")
OPERATORS = (
    "exact not contains endswith startswith gt gte lt lte like notlike glob in notin "
    "isnull notnull isblank notblank arraycontains arraynotcontains date"
).split()
TEXT_COLUMNS = {
    "sessions": (
        "id source user_id model title model_config system_prompt end_reason billing_provider "
        "billing_base_url cwd git_branch display_name"
    ).split(),
    "messages": "content tool_name tool_calls reasoning role finish_reason".split(),
    "session_model_usage": "model task billing_provider billing_base_url".split(),
}


def api_urls(twins, probe_count: int = PROBES) -> list[str]:
    """The old Datasette API: tables, shapes, formats, every operator on every text column,
    sorts and facets on every column, ``_next``."""
    urls = ["/state", "/state.json"]
    some, turn = probes(twins, probe_count), 0
    for table in TABLES:
        base = f"/state/{table}"
        urls += [base, base + ".json", base + ".csv", base + ".json?_size=3"]
        urls += [base + ".json?_size=3&_next=3", base + ".csv?_size=max"]
        urls += [f"{base}.json?_shape={s}" for s in ("arrays", "objects", "array", "object")]
        for column in TEXT_COLUMNS[table] + ["rowid"]:
            for direction in ("_sort", "_sort_desc"):
                urls.append(f"{base}.json?{direction}={column}&_size=5")
            urls.append(f"{base}.json?_facet={column}&_size=0")
        for column in TEXT_COLUMNS[table]:
            for op in OPERATORS:
                if op in ("arraycontains", "arraynotcontains") and column != "tool_calls":
                    continue
                if op in ("isnull", "notnull", "isblank", "notblank"):
                    urls.append(f"{base}.json?{column}__{op}=1")
                    continue
                for _ in range(probe_count // 4):
                    value = some[turn % len(some)]  # each probe in turn
                    turn += 1
                    value = {
                        "like": f"%{value}%",
                        "notlike": f"%{value}%",
                        "glob": f"*{value}*",
                    }.get(op, f"{value},x" if op in ("in", "notin") else value)
                    urls.append(f"{base}.json?{column}__{op}={quote(value)}")
    return urls


def cases(*default):
    """Every layout, role and language in the long mode; else ``default`` (the CPU budget)."""
    every = [(lay, role, lang) for lay in LAYOUTS for role in ROLES for lang in LANGUAGES]
    return every if LONG else list(default)


@pytest.mark.parametrize(
    "layout, role, language",
    cases(*[(lay, role, "en") for lay in LAYOUTS for role in ROLES], ("legacy", "analyst", "fr")),
)
def test_every_page_answers_the_same_from_both_twins(twins, layout, role, language):
    urls = page_urls(twins[layout]) + session_page_urls(twins[layout], (3,))
    check(client_for(role), twins[layout], urls, language)


@pytest.mark.parametrize(
    "layout, role, language",
    cases(*[(lay, role, "en") for lay in LAYOUTS for role in ROLES]),
)
def test_the_session_page_answers_the_same_from_both_twins(twins, layout, role, language):
    check(client_for(role), twins[layout], session_page_urls(twins[layout]), language)


@pytest.mark.parametrize(
    "layout, role, language",
    cases(("current", "analyst", "en"), ("current", "viewer", "fr"), ("doc", "analyst", "en")),
)
def test_list_filters_answer_the_same_from_both_twins(twins, layout, role, language):
    check(client_for(role), twins[layout], probe_urls(twins[layout]), language)


@pytest.mark.parametrize(
    "layout, role, language",
    cases(("current", "analyst", "en"), ("current", "viewer", "en"), ("legacy", "analyst", "fr")),
)
def test_the_old_api_answers_the_same_from_both_twins(twins, layout, role, language):
    # session_model_usage's key holds text shown redacted: it is paged by rowid for them.
    check(client_for(role), twins[layout], api_urls(twins[layout]), language)


# --- Full-text search (decided by the search engine) ----------------------------------------


def search_urls(twins) -> list[str]:
    urls = []
    for probe in probes(twins, PROBES // 2):
        for mode in ("words", "advanced", "substring"):
            for sort in ("rank", "newest"):
                urls.append(q("/search/", q=probe, mode=mode, sort=sort))
        urls += [q("/messages/", q=probe), q("/search/", q=f"{probe[:6]}*", mode="advanced")]
        urls += [q("/search/", q=f"{WORDS[0]} NOT {probe[:6]}*", mode="advanced")]
        urls += [q("/state/messages.json", _search=probe)]
        urls += [q("/state/messages.json", _search=probe, _searchmode="raw")]
    return urls


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("role", ROLES)
def test_full_text_search_answers_the_same_from_both_twins(twins, layout, role):
    check(client_for(role), twins[layout], search_urls(twins[layout]))


# --- Generated queries ---------------------------------------------------------------------


def _pieces(twins) -> list[str]:
    found = []
    for secret in twins.secrets_a[:12]:
        word = re.sub(r"[^A-Za-z0-9]", "", secret)
        found += [word[:6] + "*", word[3:11], word]
    return [p for p in found if p.strip("*")]


def fts_terms(twins):
    term = st.sampled_from(
        [*WORDS, *_pieces(twins), "redacted", "openai", "key", "secret", "token"]
    )
    column = st.sampled_from(["", "content:", "tool_calls:", "tool_name:"])
    atom = st.one_of(
        st.builds(lambda c, t: c + t, column, term),
        st.builds(lambda a, b: f'"{a} {b}"', term, term),
        st.builds(lambda a, b: f"NEAR({a} {b})", term, term),
    )
    return st.recursive(
        atom,
        lambda inner: st.one_of(
            st.builds(
                lambda a, op, b: f"{a} {op} {b}",
                inner,
                st.sampled_from(["AND", "OR", "NOT"]),
                inner,
            ),
            st.builds(lambda a: f"({a})", inner),
        ),
        max_leaves=4,
    )


def search_url(twins):
    return st.one_of(
        st.builds(
            lambda text, mode, sort: q("/search/", q=text, mode=mode, sort=sort),
            fts_terms(twins),
            st.sampled_from(["words", "advanced", "substring"]),
            st.sampled_from(["rank", "newest"]),
        ),
        st.builds(lambda text: q("/messages/", q=text), fts_terms(twins)),
        st.builds(
            lambda text, raw: q("/state/messages.json", _search=text, **raw),
            fts_terms(twins),
            st.sampled_from([{}, {"_searchmode": "raw"}]),
        ),
    )


def list_url(twins):
    some = probes(twins, 12)
    value = st.sampled_from(some + list(WORDS) + list(TOOLS) + list(MODELS))
    session_filter = st.builds(
        lambda c, v, s: q("/sessions/", **{c: v, "sort": s}),
        st.sampled_from(SESSION_TEXT),
        value,
        st.sampled_from(["started_at", "-started_at", "source", "-source"]),
    )
    api = st.builds(
        lambda t, op, v, sort: f"/state/{t[0]}.json?{t[1]}__{op}={quote(v)}&{sort}={t[1]}",
        st.sampled_from([(t, c) for t in TABLES for c in TEXT_COLUMNS[t]]),
        st.sampled_from(
            [
                "exact",
                "not",
                "contains",
                "startswith",
                "endswith",
                "gt",
                "lt",
                "gte",
                "lte",
                "like",
                "glob",
                "in",
            ]
        ),
        value,
        st.sampled_from(["_sort", "_sort_desc", "_facet"]),
    )
    messages = st.builds(lambda v: q("/messages/", tool_name=v), value)
    return st.one_of(session_filter, api, messages)


def _generated(client, twins, strategy, language="en"):
    found = []

    # The run's queries are shared by the two generated tests and the six (layout, role)
    # cases of each: EXAMPLES in all.
    @settings(
        max_examples=-(-EXAMPLES // (2 * len(LAYOUTS) * len(ROLES))),
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    @given(strategy)
    def run(url):
        found.extend(differences(client, twins, [url], language))

    run()
    return found


def test_the_twins_differ_only_inside_secrets(twins):
    """The premise: different files whose every text redacts alike, and no secret of A is
    left in the redacted text of any cell."""
    import sqlite3

    from redaction import redact_text

    for layout, pair in twins.items():
        assert pair.a.read_bytes() != pair.b.read_bytes(), layout
        assert pair.texts > 100 and len(pair.secrets_a) > 40
        conn = sqlite3.connect(pair.a)
        cells = [
            value
            for table in ("sessions", "messages")
            for row in conn.execute(f"SELECT * FROM {table}")
            for value in row
            if isinstance(value, str)
        ]
        conn.close()
        shown = "\n".join(redact_text(cell)[0] for cell in cells)
        assert not [s for s in pair.secrets_a if s in shown], layout
