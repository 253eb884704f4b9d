"""Pages redact like the exports: one decode-then-redact step before any formatting.

A store of each layout holds secrets wherever Hermes stores text (message content, tool-call
arguments as JSON inside JSON, name/value pairs in both key orders, argv arrays with a password
or token flag, tool results, tool names, titles, ``model_config``, system prompts, ``cwd``,
``git_branch``, billing columns, usage tasks, reasoning, user ids and display names), planted
only where the layout has the column.  Every page that can show that text, and every export of
the same rows, is read as an analyst and as a viewer: no 8 characters of any secret may
survive (HTML entities, JSON ``\\u`` escapes and URL escapes decoded, JSON inside JSON read),
and each kind of marker an export shows of a session is shown by its page too, the Arguments
blocks showing the markers of the Markdown export's argument blocks.

The secrets are the shapes of ``test_redaction_shapes.SHAPES`` the engine hides today, and the
pair and argv values the engine hides in a stored tool call: a shape the engine learns is
picked up here with no change.
"""

from __future__ import annotations

import html
import json
import random
import re
import string
import time
import urllib.parse

import pytest
from django.db import connections

from hermes_explorer import store
from redaction import redact_text
from sessions_app.selectors import TRANSCRIPT_CUT
from tests.builders import StateDB, tool_call
from tests.conftest import use_store
from tests.roles_helpers import client_for
from tests.test_redaction_shapes import SHAPES, _leaks, _strings

pytestmark = pytest.mark.django_db(databases=["default", "hermes"])

_RNG = random.Random(20261205)
MARKER = re.compile(r"\[redacted: [^\]]+\]")
KINDS = ("live", "compacted", "rewound", "hidden")
ALL_SHOWN = "show=compacted,rewound,hidden"
GROUP = 8


def _value() -> str:
    return "".join(_RNG.choice(string.ascii_letters + string.digits) for _ in range(24))


def _stored_call(name: str, arguments: dict) -> str:
    return json.dumps([tool_call(name, arguments, "call_probe")])


def _hidden_by_engine(stored: str, secret: str) -> bool:
    return not _leaks(redact_text(stored)[0], secret)


# Secrets whose only clue is their place in the arguments, as Hermes stores a tool call.
PLACED = {
    "name then value": lambda v: {"env": [{"name": "OPENAI_API_KEY", "value": v}]},
    "value then name": lambda v: {"env": [{"value": v, "name": "OPENAI_API_KEY"}]},
    "argv --password": lambda v: {"argv": ["mysql", "--password", v, "-h", "db"]},
    "argv -p": lambda v: {"argv": ["mysql", "-u", "root", "-p", v]},
    "argv --token": lambda v: {"argv": ["gh", "auth", "login", "--token", v]},
    "password key": lambda v: {"user": "bob", "password": v},
}
PLACED_VALUES = {place: _value() for place in PLACED}
PLACED_KNOWN = {
    place: value
    for place, value in PLACED_VALUES.items()
    if _hidden_by_engine(_stored_call("terminal", PLACED[place](value)), value)
}
# The table's shapes the engine hides today, each as (name, text, secret).
KNOWN_SHAPES = [s for s in SHAPES if _hidden_by_engine(s[1], s[2])]
SECRETS = [secret for _, _, secret in KNOWN_SHAPES] + list(PLACED_KNOWN.values())
# A token fits a tool name: no blanks, separators or line breaks.
TOKEN = re.compile(r"[^\s:;=]+\Z")


def _plant(db: StateDB, now: float) -> list[str]:
    """One session per group of shapes; every stored text of it holds the group's texts."""
    ids = []
    groups = [KNOWN_SHAPES[i : i + GROUP] for i in range(0, len(KNOWN_SHAPES), GROUP)]
    for g, group in enumerate(groups):
        sid = f"20261205_{g:06d}_pag{g:03d}"
        ids.append(sid)
        texts = [text for _, text, _ in group]
        joined = "\n".join(texts)
        session = {
            "title": f"zorblax case {g} {joined}",
            "user_id": f"user {g} {joined}",
            "display_name": f"name {g} {joined}",
            "model": f"openrouter/{texts[0]}",
            "model_config": {"api_key": texts[0], "base_url": joined, "temperature": 0.2},
            "system_prompt": f"You are helpful. {joined}",
            "cwd": f"/home/dev/{joined}",
            "git_branch": f"fix/{texts[-1]}",
            "billing_provider": f"custom {joined}",
            "billing_base_url": f"https://proxy.internal/{joined}",
            "started_at": now - 3600 + g,
            "last_activity_at": now - 60,
            "input_tokens": 10,
        }
        if db.has("sessions", "system_prompt_hash"):
            session["system_prompt_hash"] = f"hash{g}"
            db.system_prompt(f"hash{g}", f"Prompt of {g}. {joined}")
        db.session(sid, **session)
        for k, task in enumerate([f"summary {joined}", texts[-1]]):
            db.model_usage(sid, f"openrouter/{texts[k % len(texts)]}", task, input_tokens=5)
        clock = now - 3000 + g
        for n, (name, text, _secret) in enumerate(group):
            kind = KINDS[n % len(KINDS)]
            extra: dict = {}
            if kind != "live" and db.has("messages", "active"):
                extra = {"active": 0, "compacted": int(kind == "compacted")}
            if kind == "hidden" and db.has("messages", "display_kind"):
                extra = {"display_kind": "hidden"}
            clock += 10
            db.message(
                sid, "user", f"zorblax please use {text} for {name}", timestamp=clock, **extra
            )
            tool = text if TOKEN.match(text) else "terminal"
            arguments = {"command": f"cat > .env <<EOF\n{text}\nEOF", "password": text}
            if n == 0:
                for place, value in PLACED_KNOWN.items():
                    arguments[place.replace(" ", "_")] = PLACED[place](value)
            reasoning = {"reasoning": f"the zorblax key is {text}"}
            if db.has("messages", "reasoning_content"):
                reasoning["reasoning_content"] = f"also {text}"
            db.message(
                sid,
                "assistant",
                None,
                tool_calls=[tool_call(tool, arguments, f"call_{g}_{n}")],
                timestamp=clock + 1,
                **reasoning,
                **extra,
            )
            result = json.dumps({"output": f"ok\n{text}\n", "error": f"failed: {text}"})
            db.message(
                sid,
                "tool",
                result,
                tool_call_id=f"call_{g}_{n}",
                tool_name=tool,
                timestamp=clock + 2,
                **extra,
            )
            db.message(sid, "assistant", f"Done with {text} now", timestamp=clock + 3, **extra)
        # A secret across the point where the transcript cuts a long text for the page.
        long = "x" * (TRANSCRIPT_CUT - 30) + "\n" + texts[0] + "\n" + "y" * 100
        db.message(sid, "tool", long, tool_name="terminal", timestamp=clock + 20)
        db.message(sid, "assistant", "ok", timestamp=clock + 21, reasoning=long)
        db.refresh_counters()
    return ids


@pytest.fixture(scope="module", params=["current", "legacy", "doc"])
def secret_store(request, tmp_path_factory):
    path = tmp_path_factory.mktemp(f"page-{request.param}") / "state.db"
    with StateDB.create(path, request.param) as db:
        ids = _plant(db, time.time())
    return path, ids


@pytest.fixture
def store_ids(secret_store):
    from django.core.cache import cache

    path, ids = secret_store
    cache.clear()
    use_store(path)
    yield ids
    connections["hermes"].close()


def _read(response, role: str, url: str) -> str:
    if role == "analyst":
        assert response.status_code == 200, (url, response.status_code)
    else:
        assert response.status_code < 500, (url, response.status_code)
    data = b"".join(response.streaming_content) if response.streaming else response.content
    return data.decode("utf-8", errors="replace")


def _decoded(body: str) -> str:
    """The body, then its HTML entities, JSON ``\\u`` escapes and URL escapes decoded in turn
    (the four views joined)."""
    unescaped = html.unescape(body)
    unicode = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m[1], 16)), unescaped)
    return "\n".join((body, unescaped, unicode, urllib.parse.unquote_plus(unicode)))


def _assert_hidden(body: str, where: str) -> None:
    """No 8 characters of any secret in the body or in any string decoded from it (the
    8-character runs of everything read are gathered once, then looked up per secret)."""
    texts = [t.replace("\u200b", "").replace("\u2060", "") for t in _strings(_decoded(body))]
    runs = {text[i : i + 8] for text in texts for i in range(len(text) - 7)}
    for secret in SECRETS:
        leaked = sorted(runs.intersection(secret[i : i + 8] for i in range(len(secret) - 7)))
        if leaked:
            at = max(body.find(leaked[0]), 0)
            context = body[at - 300 : at + 60]
            pytest.fail(f"a secret leaks on {where}: {leaked[:2]} in …{context!r}")


SHOWS = ["", "?show=live", "?show=compacted", "?show=rewound", "?show=hidden", f"?{ALL_SHOWN}"]
LIST_PAGES = [
    "/",
    "/sessions/?flags=all",
    "/messages/?size=1000",
    "/messages/?size=1000&role=assistant",
    "/messages/?size=1000&role=tool",
    "/insights/?days=30",
    "/people/",
    "/failures/",
    "/live/",
    "/state/sessions",
    "/state/messages",
    "/state/session_model_usage",
    "/state/system_prompts",
]
LIST_EXPORTS = [
    "/sessions/?flags=all&_export=json",
    "/sessions/?flags=all&_export=csv",
    "/sessions/?flags=all&_export=dataset",
    "/messages/?_export=json",
    "/state/messages.json?_size=max",
    "/state/sessions.json?_size=max",
    "/state/session_model_usage.json?_size=max",
]


def _assert_all_hidden(role: str, urls: list[str]) -> None:
    client = client_for(role)
    shape = store.shape()
    for url in urls:
        if url.startswith("/state/") and not shape.has_table(re.split(r"[/.?]", url)[2]):
            continue
        _assert_hidden(_read(client.get(url, follow=True), role, url), f"{url} ({role})")


def test_the_store_plants_every_known_shape_and_placed_value():
    assert len(KNOWN_SHAPES) >= 40
    # The pairs in Hermes's own key order and the argv password flag are hidden today.
    assert {"name then value", "argv --password", "password key"} <= set(PLACED_KNOWN)


@pytest.mark.parametrize("role", ["analyst", "viewer"])
def test_session_pages_hide_every_secret(store_ids, role):
    urls = [f"/sessions/{sid}/{show}" for sid in store_ids for show in SHOWS]
    urls += [f"/sessions/{sid}/timeline/{show}" for sid in store_ids for show in ("", SHOWS[-1])]
    _assert_all_hidden(role, urls)


@pytest.mark.parametrize("role", ["analyst", "viewer"])
def test_list_pages_hide_every_secret(store_ids, role):
    _assert_all_hidden(role, LIST_PAGES)


@pytest.mark.parametrize("role", ["analyst", "viewer"])
def test_exports_hide_every_secret(store_ids, role):
    urls = [
        f"/sessions/{sid}/export.{kind}?{ALL_SHOWN}" for sid in store_ids for kind in ("md", "json")
    ]
    urls += [
        f"/sessions/{sid}/timeline/?{ALL_SHOWN}&_export={kind}"
        for sid in store_ids
        for kind in ("json", "csv")
    ]
    _assert_all_hidden(role, [*LIST_EXPORTS, *urls])


def _arguments_markers(page: str) -> list[str]:
    blocks = re.findall(r'<div class="tool-args">.*?<pre>(.*?)</pre>', page, re.S)
    return sorted(m for block in blocks for m in MARKER.findall(html.unescape(block)))


def _export_arguments_markers(markdown: str) -> list[str]:
    blocks = re.findall(r"\*\*Tool call\*\*[^\n]*\n\n(`{3,})json\n(.*?)\n\1", markdown, re.S)
    return sorted(m for _, block in blocks for m in MARKER.findall(block))


def test_the_page_shows_the_markers_its_exports_show(store_ids):
    client = client_for("analyst")
    for sid in store_ids:
        page = _read(client.get(f"/sessions/{sid}/?{ALL_SHOWN}"), "analyst", sid)
        shown = set(MARKER.findall(html.unescape(page)))
        markdown = _read(client.get(f"/sessions/{sid}/export.md?{ALL_SHOWN}"), "analyst", sid)
        document = _read(client.get(f"/sessions/{sid}/export.json?{ALL_SHOWN}"), "analyst", sid)
        messages = json.loads(document)["messages"]
        exported = {m for row in messages for v in row.values() for m in MARKER.findall(str(v))}
        assert exported <= shown, (sid, exported - shown)
        # The Arguments blocks say what the Markdown export's argument fences say.
        assert _arguments_markers(page) == _export_arguments_markers(markdown), sid
