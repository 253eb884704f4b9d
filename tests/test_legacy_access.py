"""The old URLs are no oracle: a column filter never confirms what the role cannot read.

Each attack is a series of probes whose answers would spell out a secret (a binary search over
a hidden system prompt, ``content__contains`` one more character of a redacted key at a time);
the tests check that every probe gets the same answer, while staff (who may reveal) still get
Datasette's answers.
"""

from __future__ import annotations

import json
import re
import sqlite3

import pytest
from django.db import connections
from django.http import QueryDict

from legacy_app.api import policy as access
from legacy_app.api.operators import OPERATORS, PRESENCE_OPS
from redaction import redact
from tests.builders import NASTY_NOW, StateDB
from tests.conftest import use_store
from tests.roles_helpers import client_for, make_user

pytestmark = pytest.mark.django_db(databases=["default", "hermes"])
OPS = frozenset(OPERATORS)

SECRET_SID = "20260101_080000_5ec7e7"
PLAIN_SID = "20260101_090000_c1ea12"
PROMPT = "You are the deploy bot. The vault passphrase is tangerine-42."
API_KEY = "sk-proj-" + "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv"


@pytest.fixture
def oracle_store(tmp_path):
    path = tmp_path / "oracle.db"
    with StateDB.create(path, "current") as db:
        db.session(
            SECRET_SID,
            source="telegram",
            title="Deploy",
            system_prompt=PROMPT,
            model_config={"model": "openai/gpt-5", "api_key": API_KEY},
            started_at=NASTY_NOW - 7200,
        )
        db.session(PLAIN_SID, source="cli", title="Chat", started_at=NASTY_NOW - 3600)
        db.message(SECRET_SID, "user", f"deploy with OPENAI_API_KEY={API_KEY} please")
        db.message(SECRET_SID, "assistant", "Deployed.")
        db.message(PLAIN_SID, "user", "hello there")
        db.refresh_counters()
    use_store(path)
    yield path
    connections["hermes"].close()


def answer(client, url, params):
    """Everything a prober observes: status, type and body (minus per-request tokens)."""
    response = client.get(url, params)
    body = response.content.decode()
    body = re.sub(r'(csrfmiddlewaretoken" value|nonce)="[^"]*"', r'\1=""', body)
    return response.status_code, response.get("Content-Type"), body


def page_column(response, name="id"):
    """One column of the old URL's page, as shown."""
    at = response.context["columns"].index(name)
    return [row[at][0] for row in response.context["rows"]]


def without_notes(body):
    return re.sub(r'<ul class="notes".*?</ul>', "", body, flags=re.S)


def assert_all_equal(answers):
    first = answers[0]
    for other in answers[1:]:
        assert other == first


def ids(path, sql):
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return [r[0] for r in conn.execute(sql)]


# Viewers: hidden columns -------------------------------------------------------------------
# A binary search over the prompt: each probe halves the candidates for the next character.
PROMPT_PROBES = ["", "A", "Y", "You", "You are the d", "You are the e", PROMPT, PROMPT + "!", "z"]


@pytest.mark.render_context
def test_a_viewer_binary_searching_the_system_prompt_learns_nothing(oracle_store):
    viewer = client_for("viewer")
    answers = [
        answer(viewer, "/state/sessions", {"system_prompt__gte": probe}) for probe in PROMPT_PROBES
    ]
    assert_all_equal(answers)
    status, _, body = answers[0]
    assert status == 400
    assert "your role cannot read system_prompt" in body
    assert SECRET_SID not in body and PLAIN_SID not in body
    # The same probes are an oracle for staff, who may read the prompt: the test would see it.
    staff = client_for("staff")
    staff_answers = {
        probe: page_column(staff.get("/state/sessions", {"system_prompt__gte": probe}))
        for probe in ("You", "Z")
    }
    assert staff_answers["You"] == [SECRET_SID]
    assert staff_answers["Z"] == []


@pytest.mark.parametrize(
    "params",
    [
        {"model_config__contains": "api_key"},
        {"model_config__contains": API_KEY[:12]},
        {"model_config__contains": "no such text"},
        {"model_config__gte": '{"model'},
        {"model_config__startswith": '{"model": "openai'},
        {"model_config": "{}"},
        {"system_prompt__notnull": "1"},
        {"system_prompt__isnull": "1"},
        {"origin_json__isblank": "1"},
        {"system_prompt__like": "You%"},
        {"_sort": "system_prompt"},
        {"_sort_desc": "model_config"},
        {"source": "telegram", "model_config__contains": "sk-"},
    ],
)
def test_a_viewer_probing_hidden_session_columns_gets_one_answer(oracle_store, params):
    viewer = client_for("viewer")
    baseline = answer(viewer, "/state/sessions", {"model_config__contains": "zzz"})
    status, _, body = answer(viewer, "/state/sessions", params)
    assert status == 400
    assert "is refused: your role cannot read" in body
    assert SECRET_SID not in body and PLAIN_SID not in body
    # Only the note naming the refused parameter differs from the baseline's answer.
    assert without_notes(body) == without_notes(baseline[2])


def test_a_viewer_cannot_reach_message_columns_at_all(oracle_store):
    viewer = client_for("viewer")
    answers = [
        answer(viewer, "/state/messages", {"content__contains": probe})
        for probe in ("sk-", API_KEY[:12], "nothing like it")
    ]
    assert_all_equal(answers)
    assert answers[0][0] == 403


@pytest.mark.render_context
def test_viewers_keep_the_filters_on_columns_they_can_read(oracle_store):
    viewer = client_for("viewer")
    response = viewer.get("/state/sessions", {"message_count__gte": "2", "source__not": "cli"})
    assert response.status_code == 200
    assert page_column(response) == [SECRET_SID]
    chat = viewer.get("/state/sessions", {"title__contains": "Chat"})
    assert chat.status_code == 200
    assert page_column(chat) == [PLAIN_SID]


# Analysts: redacted content ----------------------------------------------------------------
@pytest.mark.render_context
def test_an_analyst_probing_a_redacted_key_gets_no_rows(oracle_store):
    analyst = client_for("analyst")
    assert API_KEY not in redact(f"deploy with OPENAI_API_KEY={API_KEY} please")
    # Each probe one character longer, as the attack went; then probes that match nothing.
    prefixes = [API_KEY[:n] for n in range(3, 16)]
    probes = [*prefixes, "sk-proj-Zz", "not in any message"]
    answers = [answer(analyst, "/state/messages", {"content__contains": p}) for p in probes]
    assert_all_equal(answers)
    status, _, body = answers[0]
    assert status == 400
    assert "content may hold redacted secrets" in body
    assert "deploy with" not in body
    response = analyst.get("/state/messages", {"content__contains": API_KEY[:12]})
    assert "rows" not in response.context
    # Staff may reveal the key anyway: for them the filter is Datasette's.
    staff = client_for("staff").get("/state/messages", {"content__contains": API_KEY[:12]})
    assert page_column(staff, "session_id") == [SECRET_SID]


@pytest.mark.parametrize(
    ("column", "op", "value"),
    [
        ("content", "startswith", "deploy with OPENAI_API_KEY=sk-"),
        ("content", "endswith", "Uv please"),
        ("content", "gte", "deploy with OPENAI_API_KEY=sk-proj-A"),
        ("content", "exact", f"deploy with OPENAI_API_KEY={API_KEY} please"),
        ("content", "in", f'["deploy with OPENAI_API_KEY={API_KEY} please"]'),
        ("content", "not", "x"),
        ("content", "notcontains", "sk-proj-A"),
        ("content", "glob", "*sk-proj-A*"),
        ("tool_calls", "contains", "sk-"),
        ("reasoning", "lt", "m"),
    ],
)
def test_analysts_may_not_compare_redacted_message_columns(oracle_store, column, op, value):
    analyst = client_for("analyst")
    key = f"{column}__{op}"
    status, _, body = answer(analyst, "/state/messages", {key: value, "role": "user"})
    assert status == 400
    assert f"The filter “{key}” is refused" in body
    assert "deploy with" not in body


@pytest.mark.render_context
def test_analysts_may_ask_whether_a_redacted_column_is_empty(oracle_store):
    analyst = client_for("analyst")
    response = analyst.get("/state/messages", {"content__notblank": "1", "role": "user"})
    assert response.status_code == 200
    assert [int(i) for i in page_column(response)] == ids(
        oracle_store, "SELECT id FROM messages WHERE content != '' AND role = 'user' ORDER BY id"
    )
    sessions = analyst.get("/state/sessions", {"system_prompt__notnull": "1", "_sort": "id"})
    assert page_column(sessions) == [SECRET_SID]


def test_analysts_may_not_compare_or_sort_redacted_session_columns(oracle_store):
    analyst = client_for("analyst")
    answers = [
        answer(analyst, "/state/sessions", {"system_prompt__gte": probe}) for probe in PROMPT_PROBES
    ]
    assert_all_equal(answers)
    assert answers[0][0] == 400
    assert "system_prompt may hold redacted secrets" in answers[0][2]
    status, _, body = answer(analyst, "/state/sessions", {"_sort": "model_config"})
    assert status == 400 and "Sorting by model_config is refused" in body


def test_a_refused_download_answers_a_clear_400(oracle_store):
    analyst = client_for("analyst")
    answers = [
        answer(analyst, "/state/messages.json", {"content__contains": p})
        for p in (API_KEY[:10], "absent")
    ]
    assert_all_equal(answers)
    status, content_type, body = answers[0]
    assert status == 400 and content_type == "application/json"
    error = json.loads(body)
    assert error["ok"] is False and error["status"] == 400
    assert "content__contains" in error["error"]
    status, content_type, body = answer(
        analyst, "/state/sessions.csv", {"system_prompt__contains": "vault"}
    )
    assert status == 400 and content_type.startswith("text/plain")
    assert "system_prompt__contains" in body and PROMPT not in body


def test_a_refused_filter_is_refused_before_search_and_row_shortcuts(oracle_store):
    analyst = client_for("analyst")
    response = analyst.get("/state/messages", {"_search": "deploy", "content__contains": "sk-"})
    assert response.status_code == 400
    viewer = client_for("viewer")
    response = viewer.get("/state/sessions", {"id": SECRET_SID, "system_prompt__gte": "Y"})
    assert response.status_code == 400


def test_refusals_name_every_comparing_operator_and_any_new_one():
    analyst = make_user("analyst", "refusal-analyst")
    for op in [*OPS, "like", "glob", "arraycontains", "date", "regex"]:
        reasons = access.refusals("messages", QueryDict(f"content__{op}=x"), analyst)
        assert bool(reasons) == (op not in PRESENCE_OPS), op
    staff = make_user("staff", "refusal-staff")
    assert access.refusals("messages", QueryDict("content__gte=x&_sort=content"), staff) == []
    viewer = make_user("viewer", "refusal-viewer")
    assert access.refusals("sessions", QueryDict("_sort=started_at&source=cli"), viewer) == []
    assert len(access.refusals("sessions", QueryDict("_sort=a&_sort=system_prompt"), viewer)) == 1
