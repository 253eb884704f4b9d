"""What one session's summary counts, call by call: the walk of ``tool_calls`` in SQL
(:data:`insights_app.summaries.SUMMARY_SQL`) against literals worked out by hand.

Hermes counts a call when ``tool_calls`` is a JSON list whose entry is an object with a
``function`` object whose ``name`` is non-empty text; a skill call also names its skill in its
arguments (a JSON string inside the JSON, or an object).  Anything else is not a call.
"""

from __future__ import annotations

import json

import pytest
from django.db import connections

from insights_app import summaries
from tests.builders import StateDB, tool_call
from tests.conftest import use_store

pytestmark = pytest.mark.django_db(databases=["default", "hermes"])

T0 = 1_767_000_000.123456789  # 17 significant digits: JSON text would keep 15


@pytest.fixture
def odd_calls(tmp_path):
    db = StateDB.create(tmp_path / "state.db", "current")
    db.session("odd", started_at=T0, message_count=9)
    db.message("odd", "user", "go", timestamp=T0)
    shapes = [
        [tool_call("terminal", {"command": "ls"}), tool_call("terminal", {"command": "pwd"})],
        # Nested one level too deep, or under another key: not calls.
        [[tool_call("terminal", {})]],
        [{"wrapper": {"function": {"name": "terminal"}}}],
        # Names with the characters a separator would have used.
        [tool_call('we,ird"name\x1f', {}), tool_call("[x]", {})],
        # Not text, empty, or not under an array: not calls.
        [{"function": {"name": 42}}, {"function": {"name": ""}}],
        {"function": {"name": "terminal"}},
        "not json [",
    ]
    for i, calls in enumerate(shapes):
        text = calls if isinstance(calls, str) else json.dumps(calls)
        db.message("odd", "assistant", None, timestamp=T0 + 1 + i, tool_calls=text)
    # Skills: arguments as a JSON string and as an object; the last use is exact.
    db.message(
        "odd",
        "assistant",
        None,
        timestamp=T0 + 20.000000123,
        tool_calls=json.dumps(
            [
                tool_call("skill_view", {"name": "github-pr"}),
                {"function": {"name": "skill_manage", "arguments": {"name": "github-pr"}}},
                tool_call("skill_view", {"name": "   "}),  # a blank skill: a call, no skill
            ]
        ),
    )
    db.message("odd", "tool", "out", tool_name="terminal", timestamp=T0 + 30)
    db.message("odd", "tool", "out", tool_name=None, timestamp=T0 + 31)
    db.close()
    use_store(tmp_path / "state.db")
    summaries.forget_all()
    yield
    summaries.forget_all()
    connections["hermes"].close()


def test_only_well_formed_calls_count_and_names_survive_any_character(odd_calls):
    s = summaries.compute(["odd", "nobody"], {"odd": 9})
    odd = s["odd"]
    assert (odd.user, odd.assistant, odd.tool, odd.stored) == (1, 8, 2, 11)
    assert odd.tools == (
        ("[x]", 1, 0),
        ("skill_manage", 1, 0),
        ("skill_view", 2, 0),
        ("terminal", 2, 1),  # 2 calls, 1 tool row: the larger
        ('we,ird"name\x1f', 1, 0),
    )
    assert odd.skills == (("github-pr", 1, 1, T0 + 20.000000123),)
    assert odd.message_count == 9
    assert s["nobody"] == summaries.SessionSummary(None, 0, 0, 0, 0, (), ())
