"""The secret redactor: each well-known shape is hidden, ordinary text is left alone, fast."""

from __future__ import annotations

import random
import string
import time

import pytest

from sessions_app.redaction import redact, redact_text

OPENAI = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z_-Ab3dEf6hIj"
ANTHROPIC = "sk-ant-api03-" + "x" * 20 + "Y7_z-" + "q" * 60
OPENROUTER = "sk-or-v1-" + "0123456789abcdef" * 4
GOOGLE = "AIzaSyA1234567890abcdefghijklmnopqrstuv"
AWS = "AKIAIOSFODNN7EXAMPLE"
GITHUB = "ghp_" + "a1B2c3D4e5" * 4
GITHUB_PAT = "github_pat_11ABCDEFG0123456789_" + "abcdefghij" * 5
SLACK = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
TELEGRAM = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PRIVATE_KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACBd7jP0bYlX8YxUkGQ7Q0mZy0m6G9o9n4yXk1rUqkz0OQAAAJgAAAAAAAAA\n"
    "-----END OPENSSH PRIVATE KEY-----"
)


@pytest.mark.parametrize(
    "text, secret, label",
    [
        (f"OPENAI_API_KEY={OPENAI}", OPENAI, "openai key"),
        (f"using {ANTHROPIC} for claude", ANTHROPIC, "anthropic key"),
        (f"router key: {OPENROUTER}", OPENROUTER, "openrouter key"),
        (f"maps {GOOGLE} end", GOOGLE, "google api key"),
        (f"aws_access_key_id = {AWS}", AWS, "aws access key"),
        (f"remote: {GITHUB}@github", GITHUB, "github token"),
        (f"GH={GITHUB_PAT}", GITHUB_PAT, "github token"),
        (f"slack {SLACK}", SLACK, "slack token"),
        (f"https://api.telegram.org/bot{TELEGRAM}/getMe", TELEGRAM, "telegram bot token"),
        (f"TELEGRAM_BOT_TOKEN={TELEGRAM}", TELEGRAM, "telegram bot token"),
        (f"cookie: session={JWT}", JWT, "jwt"),
        (
            f"key file:\n{PRIVATE_KEY}\nthat was it",
            "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE",
            "private key",
        ),
        (
            "Authorization: Bearer abcDEF0123456789ghiJKL.xyz",
            "abcDEF0123456789ghiJKL",
            "bearer token",
        ),
        (
            "curl -H 'authorization: bearer abcDEF0123456789ghiJKL'",
            "abcDEF0123456789ghiJKL",
            "bearer token",
        ),
        ("DB_PASSWORD=hunter2hunter2", "hunter2hunter2", "secret"),
        ("password: correct-horse-battery", "correct-horse-battery", "secret"),
        ('{"password": "two words here", "user": "bob"}', "two words here", "secret"),
        ("SECRET_KEY='django-insecure-abc123'", "django-insecure-abc123", "secret"),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "wJalrXUtnFEMI",
            "secret",
        ),
        ("api_key=abcd1234efgh", "abcd1234efgh", "secret"),
        ("x-api-key: 0f1e2d3c4b5a", "0f1e2d3c4b5a", "secret"),
        ("HF_TOKEN=hf_abcdefghijklmnop", "hf_abcdefghijklmnop", "secret"),
        ("postgres://admin:s3cr3t-pw@db.internal:5432/app", "s3cr3t-pw", "url password"),
    ],
)
def test_each_secret_shape_is_replaced_by_a_labelled_marker(text, secret, label):
    out = redact(text)
    assert secret not in out
    assert f"[redacted: {label}]" in out


@pytest.mark.parametrize(
    "text",
    [
        "The quick brown fox jumps over the lazy dog.",
        "max_tokens=4096 input_tokens: 120 token_count=42",
        '{"token_count": 12, "tokens": "many", "password": null}',
        "ask-anything-about-tasks and mask-ant-thing",
        "sk-short is not a key",
        "the 12:30 meeting at 10:45:00",
        "see https://example.com/path?a=1&b=2",
        "Bearer short",
        "password reset link sent",
        "東京 🚀 مرحبا שלום",
        "",
    ],
)
def test_ordinary_text_is_left_alone(text):
    assert redact(text) == text


def test_surrounding_text_is_kept_exactly():
    text = f"before\nexport OPENAI_API_KEY={OPENAI}\nexport PATH=/usr/bin\nafter"
    assert (
        redact(text)
        == "before\nexport OPENAI_API_KEY=[redacted: openai key]\nexport PATH=/usr/bin\nafter"
    )


def test_several_secrets_in_one_env_dump_are_all_counted():
    dump = "\n".join(
        [
            f"OPENAI_API_KEY={OPENAI}",
            f"GITHUB_TOKEN={GITHUB}",
            "HOME=/root",
            f"SLACK={SLACK}",
            "DB_PASSWORD=pa55word!",
        ]
    )
    out, count = redact_text(dump)
    assert count == 4
    assert "HOME=/root" in out
    for secret in (OPENAI, GITHUB, SLACK, "pa55word!"):
        assert secret not in out


def test_a_cut_private_key_block_is_hidden_to_the_end():
    """Previews cut in SQL can end inside a key block: what is there is still hidden."""
    cut = PRIVATE_KEY[:90]
    assert redact(cut) == "[redacted: private key]"


def test_non_strings_and_the_setting(settings):
    assert redact(None) is None
    assert redact(42) == 42
    settings.HERMES_REDACT_SECRETS = False
    assert redact(f"key {OPENAI}") == f"key {OPENAI}"


def test_text_whose_lowercase_changes_length_still_lines_up():
    text = "İİİ DB_PASSWORD=hunter2hunter2 İ"
    assert redact(text) == "İİİ DB_PASSWORD=[redacted: secret] İ"


@pytest.mark.parametrize("kind", ["random", "log", "prose"])
def test_a_megabyte_takes_milliseconds(kind):
    rng = random.Random(7)
    if kind == "random":
        text = "".join(
            rng.choice(string.ascii_letters + string.digits + " \n=:_-/.") for _ in range(1_000_000)
        )
    elif kind == "log":
        line = (
            "2026-01-01 INFO GET https://api.example/v1 200 12ms user=bob token_count=42 Bearer\n"
        )
        text = (line * (1_000_000 // len(line) + 1))[:1_000_000]
    else:
        text = ("The quick brown fox jumps over the lazy dog. " * 23_000)[:1_000_000]
    text = text[:500_000] + f" OPENAI_API_KEY={OPENAI} " + text[500_000:]
    started = time.perf_counter()
    out = redact(text)
    elapsed = time.perf_counter() - started
    assert OPENAI not in out
    # Measured ~15-30 ms on the 2-core CI machine; the bound leaves room for a slow run.
    assert elapsed < 0.5, f"{elapsed * 1000:.0f} ms for a megabyte"
