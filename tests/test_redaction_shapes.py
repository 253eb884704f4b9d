"""Every secret shape, in every place Hermes stores it, is hidden; ordinary text is not touched.

The fake values are built at run time from a seeded generator (a literal key in the source
would trip secret scanners), each in its provider's real format.  A value counts as leaked
when any 8 characters of it survive, in the output or in any string decoded from it (JSON
inside JSON included).
"""

from __future__ import annotations

import html
import json
import random
import string
import urllib.parse

import pytest

from redaction import (
    engine,
    redact,
    redact_json_text,
    redact_many,
    redact_value,
)

_RNG = random.Random(20260101)
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
DIGITS = string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "_-"


def fake(alphabet: str, size: int) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(size))


def _pem(kind: str) -> str:
    body = "\n".join(fake(B64, 64) for _ in range(6))
    return f"-----BEGIN {kind}-----\n{body}\n{fake(B64, 20)}==\n-----END {kind}-----"


JWT = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJ" + fake(URLSAFE, 60) + "." + fake(URLSAFE, 43)
GCP_KEY = _pem("PRIVATE KEY")
GCP_SERVICE_ACCOUNT = json.dumps(
    {
        "type": "service_account",
        "project_id": "demo-project",
        "private_key_id": fake(HEX, 40),
        "private_key": GCP_KEY + "\n",
        "client_email": "bot@demo-project.iam.gserviceaccount.com",
    },
    indent=2,
)
RSA_KEY = _pem("RSA PRIVATE KEY")
SSH_KEY = _pem("OPENSSH PRIVATE KEY")
COOKIE_VALUE = fake(HEX, 32)
SLACK_HOOK = "T0" + fake("ABCDEFGHJK0123456789", 8) + "/B0" + fake("ABCDEFGHJK0123456789", 8)
SLACK_HOOK += "/" + fake(ALNUM, 24)
DISCORD_HOOK = fake("0123456789", 19) + "/" + fake(URLSAFE, 68)
URL_PASSWORD = "S3cr3t-Passw0rd-" + fake(ALNUM, 6)
BEARER = fake(ALNUM, 40)
BASIC = "dXNlcjpQYXNzd29yZC0" + fake(ALNUM, 16) + "=="
DRF_TOKEN = fake(HEX, 40)
PASSWORDS = ["Tr0ub4dor&3-" + fake(ALNUM, 8), *(fake(ALNUM, 24) for _ in range(4))]
AZURE_KEY = fake(B64, 86) + "=="
TELEGRAM = "7123456789:AA" + fake(URLSAFE, 33)
DISCORD_BOT = "MTE" + fake(ALNUM, 23) + "." + fake(URLSAFE, 6) + "." + fake(URLSAFE, 38)

# (name, text as it appears, the secret value in it)
SHAPES: list[tuple[str, str, str]] = (
    [
        (name, value, value)
        for name, value in [
            ("openai project key", "sk-proj-" + fake(URLSAFE, 74) + "T3BlbkFJ" + fake(URLSAFE, 74)),
            ("openai legacy key", "sk-" + fake(ALNUM, 20) + "T3BlbkFJ" + fake(ALNUM, 20)),
            ("openai service key", "sk-svcacct-" + fake(URLSAFE, 58)),
            ("anthropic key", "sk-ant-api03-" + fake(URLSAFE, 93) + "AA"),
            ("anthropic admin key", "sk-ant-admin01-" + fake(URLSAFE, 93) + "AA"),
            ("openrouter key", "sk-or-v1-" + fake(HEX, 64)),
            ("stripe live key", "sk_live_" + fake(ALNUM, 24)),
            ("stripe restricted key", "rk_live_" + fake(ALNUM, 24)),
            ("stripe test key", "sk_test_" + fake(ALNUM, 24)),
            ("twilio key", "SK" + fake(HEX, 32)),
            ("groq key", "gsk_" + fake(ALNUM, 52)),
            ("xai key", "xai-" + fake(ALNUM, 80)),
            ("google api key", "AIza" + fake(URLSAFE, 35)),
            ("google oauth secret", "GOCSPX-" + fake(URLSAFE, 28)),
            ("google oauth token", "ya29.a0" + fake(URLSAFE, 120)),
            ("aws access key", "AKIA" + fake(string.ascii_uppercase + "234567", 16)),
            ("aws session key", "ASIA" + fake(string.ascii_uppercase + "234567", 16)),
            ("aws bedrock key", "ABSK" + fake(B64, 120)),
            ("github pat", "ghp_" + fake(ALNUM, 36)),
            ("github oauth token", "gho_" + fake(ALNUM, 36)),
            ("github fine-grained pat", "github_pat_11A" + fake(ALNUM, 19) + "_" + fake(ALNUM, 59)),
            ("gitlab pat", "glpat-" + fake(URLSAFE, 20)),
            ("gitlab runner token", "glrt-" + fake(URLSAFE, 20)),
            ("grafana cloud token", "glc_" + fake(ALNUM, 60)),
            ("slack bot token", f"xoxb-{fake(DIGITS, 12)}-{fake(DIGITS, 13)}-{fake(ALNUM, 24)}"),
            (
                "slack user token",
                "xoxp-" + "-".join(fake(DIGITS, 12) for _ in range(3)) + "-" + fake(ALNUM, 32),
            ),
            ("hugging face token", "hf_" + fake(string.ascii_letters, 34)),
            ("hugging face org token", "api_org_" + fake(string.ascii_letters, 34)),
            ("npm token", "npm_" + fake(ALNUM, 36)),
            # A package index upload token (a macaroon naming the index).
            ("package index token", "pypi-AgEIcHlwaS5vcmc" + fake(URLSAFE, 120)),
            ("sendgrid key", "SG." + fake(URLSAFE, 22) + "." + fake(URLSAFE, 43)),
            ("sendinblue key", "xkeysib-" + fake(HEX, 64) + "-" + fake(ALNUM, 16)),
            ("digitalocean token", "dop_v1_" + fake(HEX, 64)),
            ("vault token", "hvs." + fake(URLSAFE, 95)),
            ("postman key", "PMAK-" + fake(HEX, 24) + "-" + fake(HEX, 34)),
            ("new relic key", "NRAK-" + fake(ALNUM, 27)),
            ("heroku key", "HRKU-AA" + fake(URLSAFE, 58)),
            ("age secret key", "AGE-SECRET-KEY-1" + fake("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
            ("azure client secret", fake(ALNUM, 3) + "8Q~" + fake(ALNUM + "_~.-", 34)),
            ("openshift token", "sha256~" + fake(URLSAFE, 43)),
            ("alibaba key", "LTAI" + fake(ALNUM, 20)),
            ("facebook token", "EAAC" + fake(ALNUM, 120)),
            ("mapbox token", "sk.eyJ1Ijoi" + fake(ALNUM, 40) + "." + fake(URLSAFE, 22)),
            ("jwt", JWT),
            ("telegram bot token", TELEGRAM),
            ("discord bot token", DISCORD_BOT),
        ]
    ]
    + [
        ("private key", RSA_KEY, RSA_KEY[40:200]),
        ("openssh private key", SSH_KEY, SSH_KEY),
        ("gcp service account", GCP_SERVICE_ACCOUNT, GCP_KEY.split("\n")[2]),
        (
            "azure storage key",
            "DefaultEndpointsProtocol=https;AccountName=demo;"
            f"AccountKey={AZURE_KEY};EndpointSuffix=core.windows.net",
            AZURE_KEY,
        ),
        ("slack webhook", f"https://hooks.slack.com/services/{SLACK_HOOK}", SLACK_HOOK),
        ("discord webhook", f"https://discord.com/api/webhooks/{DISCORD_HOOK}", DISCORD_HOOK[20:]),
        ("url password", f"postgres://admin:{URL_PASSWORD}@db.internal:5432/app", URL_PASSWORD),
        ("bearer header", f"Authorization: Bearer {BEARER}", BEARER),
        ("basic auth header", f"Authorization: Basic {BASIC}", BASIC),
        ("token auth header", f"Authorization: Token {DRF_TOKEN}", DRF_TOKEN),
        ("cookie header", f"Cookie: sessionid={COOKIE_VALUE}; theme=dark", COOKIE_VALUE),
        (
            "set-cookie header",
            f"Set-Cookie: session={COOKIE_VALUE}; Path=/; HttpOnly; Secure",
            COOKIE_VALUE,
        ),
        ("env pair", f"DB_PASSWORD={PASSWORDS[0]}", PASSWORDS[0]),
        ("wide-spaced pair", f"API_SECRET          =          {PASSWORDS[1]}", PASSWORDS[1]),
        ("yaml pair", f"client_secret:    {PASSWORDS[2]}", PASSWORDS[2]),
        (
            "json pair",
            json.dumps({"user": "bob", "password": f"open sesame {PASSWORDS[3]}"}),
            PASSWORDS[3],
        ),
        ("label that swallows the value", f"secret: DATABASE_PASS = {PASSWORDS[4]}", PASSWORDS[4]),
    ]
    + [
        # The shapes an agent's terminal prints: names, flags, URLs, name/value pairs.
        (name, text.replace("@@", value), value)
        for name, text, value in [
            ("auth key name", "AUTH_KEY=@@", fake(ALNUM, 24)),
            ("signing key name", 'export SIGNING_KEY="@@"', fake(ALNUM, 32)),
            ("encryption key name", "ENCRYPTION_KEY: @@", fake(HEX, 40)),
            ("pass name", "DB_PASS=@@", fake(ALNUM, 16)),
            ("pwd name", "MYSQL_PWD=@@", fake(ALNUM, 16)),
            ("lower-case pass name", "db_pass: @@", fake(ALNUM, 16)),
            ("url password without a user", "redis://:@@@cache.internal:6379/0", fake(ALNUM, 20)),
            ("url token as user", "git clone https://@@@github.com/org/repo.git", fake(ALNUM, 40)),
            ("password flag", "psql-tool --password @@ --host db", fake(ALNUM, 20)),
            ("mysql -p", "mysql -u root -p@@ app_db", fake(ALNUM, 20)),
            ("token flag", "gh auth login --token @@", fake(ALNUM, 30)),
            ("api-key flag", 'llm --api-key @@ "hello"', fake(ALNUM, 30)),
            ("sshpass", "sshpass -p @@ ssh admin@10.0.0.5", fake(ALNUM, 18)),
            ("curl -u", "curl -u admin:@@ https://api.internal/v1", fake(ALNUM, 18)),
            (
                "json name/value",
                json.dumps({"name": "DB_PASSWORD", "value": "@@"}),
                fake(ALNUM, 22),
            ),
            (
                "kubernetes env list",
                json.dumps({"env": [{"name": "API_TOKEN", "value": "@@"}]}),
                fake(ALNUM, 26),
            ),
            ("yaml env list", "env:\n  - name: STRIPE_SECRET\n    value: @@\n", fake(ALNUM, 26)),
            ("argv array", json.dumps(["mysql", "--password", "@@", "-h", "db"]), fake(ALNUM, 22)),
            ("xml element", "<config><password>@@</password></config>", fake(ALNUM, 22)),
            ("xml name/value", '<add key="ApiKey" value="@@" />', fake(ALNUM, 22)),
        ]
    ]
)


def _json_string(text: str) -> str:
    """``text`` as the inside of a JSON string (escapes and all)."""
    return json.dumps(text)[1:-1]


def _u_escaped(text: str, count: int = 3) -> str:
    """``text``'s first letters written as ``\\uXXXX`` escapes, the rest as JSON."""
    return "".join(f"\\u{ord(c):04x}" for c in text[:count]) + _json_string(text[count:])


def _invisible(text: str, secret: str) -> str:
    """Zero-width characters inside the secret and around the text."""
    at = text.index(secret[:20]) if secret[:20] in text else 0
    inside = text[: at + 4] + "\u200b" + text[at + 4 : at + 9] + "\u2060" + text[at + 9 :]
    return "\ufeff" + inside + "\u200d"


CONTEXTS = {
    "plain": lambda t, s: f"Here it is: {t} (do not share)",
    "line after \\n in json": lambda t, s: json.dumps({"output": f"line one\n{t}\nline three"}),
    "tool-call arguments": lambda t, s: json.dumps(
        [
            {
                "id": "call_0a1b2c",
                "type": "function",
                "function": {"name": "terminal", "arguments": json.dumps({"command": f"echo {t}"})},
            }
        ]
    ),
    "after \\t": lambda t, s: json.dumps({"output": f"col\t{t}"}),
    "after \\r": lambda t, s: json.dumps({"output": f"progress\r{t}"}),
    'after \\"': lambda t, s: json.dumps({"output": f'value "{t}"'}),
    "after \\u0020": lambda t, s: '{"output": "x\\u0020' + _json_string(t) + '"}',
    "\\u escapes of its first letters": lambda t, s: '{"output": "' + _u_escaped(t) + '"}',
    "multimodal content": lambda t, s: (
        "\x00json:" + json.dumps([{"type": "text", "text": f"paste:\n{t}"}])
    ),
    "zero-width characters": _invisible,
    "html entities": lambda t, s: (
        "<pre>" + html.escape(t).replace("=", "&#61;").replace(":", "&#x3a;") + "</pre>"
    ),
    "percent-encoded": lambda t, s: "GET /debug?dump=" + urllib.parse.quote(t, safe=""),
}


def _strings(value) -> list[str]:
    """``value`` and every string decoded from it: JSON documents, JSON inside their strings."""
    out = []
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending += [*item.keys(), *item.values()]
        elif isinstance(item, list):
            pending += item
        elif isinstance(item, str):
            out.append(item)
            candidate = item.removeprefix("\x00json:").strip()
            if candidate[:1] in "[{":
                try:
                    pending.append(json.loads(candidate))
                except ValueError:
                    pass
    return out


def _leaks(output: str, secret: str) -> list[str]:
    pieces = {secret[i : i + 8] for i in range(len(secret) - 7)}
    seen = [s.replace("\u200b", "").replace("\u2060", "") for s in _strings(output)]
    return sorted(p for p in pieces if any(p in s for s in seen))


def test_the_table_has_at_least_forty_shapes():
    assert len(SHAPES) >= 40
    assert len({name for name, _, _ in SHAPES}) == len(SHAPES)


@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize("name, text, secret", SHAPES, ids=[s[0] for s in SHAPES])
def test_no_part_of_a_secret_survives_in_any_context(name, text, secret, context):
    source = CONTEXTS[context](text, secret)
    assert _leaks(source, secret), "the test must plant the secret"
    output = redact(source)
    assert "[redacted: " in output
    assert not _leaks(output, secret), output
    if source.lstrip("\x00json:").startswith(("{", "[")):
        # Still JSON, with the same layout: only the secret's string changed.
        json.loads(output.removeprefix("\x00json:"))


# The tokens that fit in a URL path.
TOKENS = [shape for shape in SHAPES if not any(c in shape[1] for c in " \n:;=")]


@pytest.mark.parametrize("name, text, secret", TOKENS, ids=[s[0] for s in TOKENS])
def test_a_url_holding_a_token_hides_it(name, text, secret):
    output = redact(f"GET https://api.example.com/v1/{text}/status?page=2 200")
    assert not _leaks(output, secret), output
    assert output.endswith("?page=2 200")


@pytest.mark.parametrize("context", CONTEXTS)
def test_gates_only_save_time_on_every_shape(context):
    """Every rule run on the whole text, every escaped string decoded: the same result."""
    for _, text, secret in SHAPES:
        source = CONTEXTS[context](text, secret)
        assert engine.redact_text(source) == engine.redact_text(source, gated=False), source


@pytest.mark.parametrize("context", CONTEXTS)
def test_a_batch_redacts_each_shape_like_one_at_a_time(context):
    values = [CONTEXTS[context](text, secret) for _, text, secret in SHAPES]
    values += ["nothing to hide here", None, 42, ""]
    assert redact_many(values) == [redact(v) for v in values]


@pytest.mark.parametrize(
    "text",
    [
        "The quick brown fox jumps over the lazy dog; a basic understanding of tokens helps.",
        "commit 3f2c1a9b8e7d6c5b4a39281706f5e4d3c2b1a098\nAuthor: dev <dev@example.org>",
        "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "request id 123e4567-e89b-12d3-a456-426614174000 took 42ms",
        "def load(path):\n    with open(path) as fh:\n        return json.load(fh)\n",
        "for (let i = 0; i < tokens.length; i++) { total += tokens[i].count; }",
        '{"token_count": 12, "max_tokens": 4096, "api_key": null, "password": ""}',
        "export PATH=/usr/local/bin:$PATH && pip install -r requirements.txt",
        "primary_key: id\nsort_key: created_at\nmonkey: banana",
        "GET http://localhost:8000/sessions/?page=2 HTTP/1.1\nHost: localhost:8000",
        "git clone ssh://git@github.com/org/repo.git && cd repo",
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
        "Bearer short; the cookie policy is on the website; password reset link sent",
        "ask-anything-about-tasks, mask-ant-thing, task_live_demo, disk_test_run",
        "C:\\Users\\dev\\AppData\\Local\\Temp\\build.log",
        "| model | tokens | cost |\n|---|---|---|\n| claude-sonnet-4 | 12,345 | $0.12 |",
        "The secret of good tests is small builders.",
        "v1.2.3-rc.1+build.5 released at 2026-01-01T12:00:00Z",
        '{"output": "All 1160 tests passed\\n", "exit_code": 0}',
        '[{"id": "call_1", "type": "function", "function": {"name": "read_file", '
        '"arguments": "{\\"path\\": \\"sessions_app/views.py\\"}"}}]',
        "東京 🚀 مرحبا שלום — naïve café",
        "PWD=/home/dev/project\nOLDPWD=/home/dev\ncd $PWD && ls",
        "50% done; 100% of the tests &amp; all the docs",
    ],
)
def test_ordinary_text_is_not_redacted(text):
    assert redact(text) == text
    assert redact_many([text]) == [text]


def test_a_json_document_stays_valid_json_with_its_layout():
    arguments = json.dumps({"command": "curl -H 'Authorization: Bearer " + "a" * 40 + "'"})
    calls = json.dumps([{"function": {"name": "terminal", "arguments": arguments}}], indent=2)
    output = redact_json_text(calls)
    assert output.count("\n") == calls.count("\n")
    decoded = json.loads(json.loads(output)[0]["function"]["arguments"])
    assert decoded["command"] == "curl -H 'Authorization: Bearer [redacted: bearer token]'"


def test_redact_value_walks_decoded_structures():
    document = {
        "model": "gpt-4o",
        "api_key": "not-a-known-shape-but-named",
        "port": 5432,
        "nested": [{"password": 123456789, "note": f"key {SHAPES[0][1]}"}],
        "token": None,
    }
    output = redact_value(document)
    assert output["model"] == "gpt-4o"
    assert output["port"] == 5432
    assert output["api_key"] == "[redacted: secret]"
    assert output["nested"][0]["password"] == "[redacted: secret]"
    assert output["nested"][0]["note"] == "key [redacted: openai key]"
    assert output["token"] is None
    assert redact_value(7) == 7 and redact_value(None) is None


def test_redact_value_follows_the_setting(settings):
    settings.HERMES_REDACT_SECRETS = False
    assert redact_value({"password": "x"}) == {"password": "x"}
    assert redact_json_text('{"password": "hunter2 x"}') == '{"password": "hunter2 x"}'
