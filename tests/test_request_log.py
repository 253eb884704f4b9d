"""One structured line per request, with nothing the logs' readers should not see."""

from __future__ import annotations

import json
import logging

import pytest

from accounts_app.request_log import JsonFormatter
from tests.roles_helpers import client_for

pytestmark = pytest.mark.django_db(databases=["default", "hermes"])


def test_each_request_logs_who_what_and_how_long_without_the_query(current_store, caplog):
    client = client_for("analyst")
    with caplog.at_level(logging.INFO, logger="hermes_explorer.requests"):
        assert client.get("/search/", {"q": "sk-secret-words"}).status_code == 200
        client.get("/sessions/no-such-session/")
    lines = [r for r in caplog.records if r.name == "hermes_explorer.requests"]
    first, missing = (r.request_fields for r in lines[-2:])
    assert first["user"] == "user-analyst" and first["role"] == "analyst"
    assert first["view"] == "search:results" and first["status"] == 200
    assert first["path"] == "/search/" and first["duration_ms"] >= 0
    assert first["profile"] == "default"
    assert missing["status"] == 404
    assert not any("sk-secret-words" in r.getMessage() for r in lines)


def test_json_lines_carry_the_fields_and_an_errors_traceback():
    formatter = JsonFormatter()
    record = logging.LogRecord(
        "hermes_explorer.requests", logging.INFO, "x", 1, "GET / 200", (), None
    )
    record.request_fields = {"user": "alice", "status": 200}
    line = json.loads(formatter.format(record))
    assert line["user"] == "alice" and line["status"] == 200 and line["level"] == "INFO"
    try:
        raise ValueError("boom")
    except ValueError:
        import sys

        failed = logging.LogRecord(
            "django.request", logging.ERROR, "x", 1, "oops", (), sys.exc_info()
        )
    line = json.loads(formatter.format(failed))
    assert "ValueError: boom" in line["traceback"] and "\n" not in formatter.format(failed)
