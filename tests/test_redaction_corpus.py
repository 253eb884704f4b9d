"""The secret shapes the README lists, in every spelling, checked against a maintained detector.

The corpus (:mod:`tests.secret_corpus`) plants a known value in every shape and spelling; each
line must come out of the redactor without it, wherever Hermes stores the line (as it is, in a
JSON string, in a tool call's arguments, behind ``\\u`` escapes).  detect-secrets is the
oracle: whatever it flags in a line of the corpus must be gone from the redacted line too.
Hypothesis checks that the rules hold for any value, and that no input makes the redactor
slow.  Ordinary text (the demo store, the page fixtures, code and prose) stays as it is.
"""

from __future__ import annotations

import json
import sqlite3
import time

import pytest
from detect_secrets.settings import default_settings, get_plugins
from django.db import connections
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from hermes_fixtures.demo import build_demo_db
from redaction import engine, redact_json_text, redact_many, redact_text, redact_value
from tests import secret_corpus as sc
from tests.builders import NASTY_NOW, StateDB, build_nasty_db
from tests.conftest import use_store
from tests.roles_helpers import client_for

CORPUS = sc.corpus()


def test_the_corpus_covers_every_family_in_thousands_of_spellings():
    families = {line.family for line in CORPUS}
    assert len(CORPUS) > 3000
    assert {
        "pair",
        "yaml next line",
        "yaml block",
        "ini",
        "netrc",
        "argv",
        "short flag",
    } <= families
    assert all(line.value in line.text for line in CORPUS)


@pytest.mark.parametrize("place", sc.PLACES)
def test_every_line_of_the_corpus_loses_its_planted_value(place):
    wrap = sc.PLACES[place]
    texts = [wrap(line.text) for line in CORPUS]
    outputs = [redact_text(text)[0] for text in texts]
    leaks = [
        (line.family, text)
        for line, text, output in zip(CORPUS, texts, outputs, strict=True)
        if sc.leaked(output, line.value)
    ]
    assert not leaks, f"{len(leaks)} leaks, e.g. {leaks[:5]}"
    if place != "as is":
        for output in outputs:
            json.loads(output)  # still JSON
    assert redact_many(texts) == outputs


@pytest.mark.parametrize("place", ["as is", "json string"])
def test_gates_only_save_time_on_the_corpus(place):
    wrap = sc.PLACES[place]
    for line in CORPUS[::3]:
        text = wrap(line.text)
        assert engine.redact_text(text) == engine.redact_text(text, gated=False), text


@pytest.mark.parametrize("place", ["as is", "json string"])
def test_what_detect_secrets_flags_in_the_corpus_is_hidden(place):
    """Each of detect-secrets' plugins reads each line as it would a file's (its eager ad-hoc
    mode calls every word a secret, "db" and "port" included)."""
    wrap = sc.PLACES[place]
    flagged: set[str] = set()
    shown = []
    with default_settings():
        plugins = get_plugins()
        for line in CORPUS:
            text = wrap(line.text)
            output = redact_text(text)[0]
            for physical in text.splitlines():
                for plugin in plugins:
                    for secret in plugin.analyze_line(filename="corpus.txt", line=physical):
                        flagged.add(secret.type)
                        if secret.secret_value and secret.secret_value in output:
                            shown.append((secret.type, secret.secret_value, text))
    # The oracle did look, with its keyword, entropy and provider plugins.
    assert {"Secret Keyword", "Private Key", "Basic Auth Credentials", "GitHub Token"} <= flagged
    assert not shown, shown[:10]


# Any value, in any of the shapes ---------------------------------------------------------------
VALUES = st.from_regex(r"[A-Za-z][0-9][A-Za-z0-9_.+!/-]{4,30}[A-Za-z0-9]", fullmatch=True)
SHAPES = (
    "{name}{sep}{q}{v}{q}",
    "export {NAME}={q}{v}{q}",
    "[section]\n{name} = {v}\n",
    "config:\n  {name}:\n    {v}\n  next: 1",
    "{name}: |\n  {v}\n",
    "{name}: >-\n  {v}\n",
    '{{"{name}": "{v}"}}',
    '{{"value": "{v}", "name": "{NAME}"}}',
    "- value: {v}\n  name: {NAME}",
    "- name: {NAME}\n  value: {v}",
    "tool --{flag} {q}{v}{q} --host h",
    "tool --{flag}={v}",
    '["tool", "--{flag}", "{v}"]',
    "machine h login u password {v}",
    "mysql -u root -p{q}{v}{q} db",
    "sshpass -p {v} ssh h",
    "docker login -u bot -p {v} registry",
    "curl -u{user}:{v} https://x",
)


@hypothesis_settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    shape=st.sampled_from(SHAPES),
    name=st.sampled_from(sc.NAMES).flatmap(lambda n: st.sampled_from(sc._cases(n))),
    sep=st.sampled_from(sc.SEPARATORS),
    q=st.sampled_from(sc.QUOTES),
    flag=st.sampled_from(sc.FLAGS),
    value=VALUES,
    place=st.sampled_from(list(sc.PLACES)),
)
def test_any_value_in_any_shape_is_hidden(shape, name, sep, q, flag, value, place):
    text = shape.format(name=name, NAME=name.upper(), sep=sep, q=q, flag=flag, v=value, user="a")
    source = sc.PLACES[place](text)
    output = redact_text(source)[0]
    assert not sc.leaked(output, value), (source, output)
    assert redact_many([source]) == [output]


# The decode-first rule on a JSON document (the sessions' model_config column) ------------------
def _escaped(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in text)


OPENAI = "sk-proj-" + "Qm7xT2vK9pLw4ZsR8nYb3HcJ6fGd1AeU"
MODEL_CONFIGS = [
    '{"model": "gpt-5", "api_key": "' + _escaped("sk-") + OPENAI[3:] + '"}',
    '{"model": "gpt-5", "' + _escaped("pass") + '": "Zr4-Tq9wLm2xVb7n"}',
    '{"model": "gpt-5", "headers": {"'
    + _escaped("Authorization")
    + '": "Bearer '
    + _escaped(OPENAI[:4])
    + OPENAI[4:]
    + '"}}',
    '{"model": "gpt-5", "extra": "' + _escaped("password") + "\\uff1aZr4-Tq9wLm2xVb7n" + '"}',
]


@pytest.mark.parametrize("document", MODEL_CONFIGS)
def test_a_json_document_is_decoded_before_it_is_redacted(document):
    secret = OPENAI[10:30] if OPENAI[10:30] in json.dumps(json.loads(document)) else "Tq9wLm2x"
    for output in (
        redact_json_text(document),
        redact_many([document])[0],
        json.dumps(redact_value(json.loads(document))),
    ):
        assert not sc.leaked(output, secret), output
        json.loads(output)


@pytest.mark.django_db(databases=["default", "hermes"])
def test_the_sessions_csv_hides_an_escaped_key_from_analysts(tmp_path):
    path = tmp_path / "config.db"
    with StateDB.create(path, "current") as db:
        for n, config in enumerate(MODEL_CONFIGS):
            db.session(f"20260101_08000{n}_c0ffee", model_config=config, started_at=NASTY_NOW - n)
        db.refresh_counters()
    use_store(path)
    try:
        response = client_for("analyst").get("/state/sessions.csv")
        body = b"".join(response.streaming_content).decode()
    finally:
        connections["hermes"].close()
    assert response.status_code == 200
    assert body.count("[redacted: ") >= len(MODEL_CONFIGS)
    assert OPENAI[10:30] not in body and "Tq9wLm2x" not in body


# Ordinary text stays readable ---------------------------------------------------------------------
ORDINARY = [
    "PWD=/home/x",
    "export PWD=/home/dev && cd $PWD",
    "password reset link sent",
    "The password must be at least 12 characters; never share your password.",
    "if password:\n    raise ValueError('missing')",
    "if not api_key:\n        return None",
    "for token in tokens:\n    print(token)",
    "try:\n    run()\nexcept Exception:\n    pass\n",
    "first pass: collect the files",
    "All checks pass: lint, types, tests",
    "the login page password field is empty",
    "docker login && docker run -p 8080:80 nginx",
    "ssh -p 2222 admin@host && scp -P 2222 f host:",
    "mysql -u root -p app_db",
    "token_count: 512\nmax_tokens: 4096",
    "tokens:\n  - a\n  - b",
    "credentials:\n  username: bob\n",
    "bypass: true\ncompass = Compass()\npass_rate: 0.98",
    '{"name": "max_tokens", "value": 4096}',
    '{"value": "dark", "name": "theme"}',
    "password_hash = make_password(raw)",
    "use `--password` to pass it on the command line",
    "docker login ghcr.io\nUsername: bot\nPassword:\nLogin Succeeded",
    "password:\n\nnext: 1",
    "/home/x/project/src/main.py:42: error: name 'token' is not defined",
    "def load(path):\n    with open(path) as fh:\n        return json.load(fh)\n",
    "東京：会議は１０時から＝予定どおり",
    '{"text": "caf\\u00e9 \\u2014 na\\u00efve"}',
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_stays_as_it_is(text):
    assert redact_text(text) == (text, 0)
    assert redact_many([text]) == [text]


def test_false_positives_stay_under_a_thousandth_of_the_demo_store(tmp_path):
    """The demo store plants no secret: every message the redactor changes is a false one."""
    build_demo_db(tmp_path / "demo.db", sessions=400, messages=20000, seed=42, now=NASTY_NOW)
    build_nasty_db(tmp_path / "nasty.db", "current")
    changed = []
    for name in ("demo.db", "nasty.db"):
        conn = sqlite3.connect(tmp_path / name)
        rows = conn.execute("SELECT content, tool_calls, reasoning FROM messages").fetchall()
        rows += conn.execute("SELECT title, system_prompt, model_config FROM sessions").fetchall()
        conn.close()
        changed += [row for row in rows if any(redact_text(v)[1] for v in row if v)]
    assert len(changed) <= 20, changed[:5]  # 0.1% of the demo store's 20,000 messages


# No input makes it slow ---------------------------------------------------------------------------
# Texts built to make a regex backtrack: the start of a shape repeated, never completed.
SIZE = 100_000
TRAPS = {
    "names and colons": "password:\n" * (SIZE // 10),
    "indented keys": ("some_long_identifier_name: x\n" * (SIZE // 30)) + "password:\n  x",
    "netrc words": ("machine x " * (SIZE // 10)) + "password",
    "docker login": "docker login -u " * (SIZE // 16),
    "mysql": "mysql -u " * (SIZE // 9),
    "curl": "curl -u" * (SIZE // 7),
    "value first": '{"value": "x", "name": "' * (SIZE // 24),
    "pem header": "-----BEGIN " + "A " * (SIZE // 2),
    "flags": "--a-" * (SIZE // 4) + "password x",
    "escapes": "\\u0070" * (SIZE // 6),
    "fullwidth": "：" * SIZE,
    "pass lines": "\npass" * (SIZE // 5),
}


def _seconds(text: str) -> float:
    started = time.process_time()
    redact_text(text)
    return time.process_time() - started


@pytest.mark.parametrize("name", TRAPS)
def test_a_backtracking_trap_stays_fast(name):
    assert _seconds(TRAPS[name]) < 2.0  # about 0.4 s at most on a slow machine


FRAGMENTS = (
    *("password", "pass", "_key", "token", "value", "name", "login", "machine", "-p", "--"),
    *("docker login", "sshpass", "mysql", "curl", "-----BEGIN", "PRIVATE", "KEY", "|", ">"),
    *(":", "=", "：", " ", "  ", "\t", "\n", "\\n", '"', "'", "`", ",", "\\u0070", "a1"),
)


@hypothesis_settings(max_examples=60, deadline=None)
@given(parts=st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=30))
def test_any_repeated_fragments_stay_fast(parts):
    piece = "".join(parts)
    assert _seconds(piece * (40_000 // len(piece) + 1)) < 2.0
