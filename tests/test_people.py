"""``/people/``: one row per user of the window, against direct SQL on every layout."""

from __future__ import annotations

import csv
import io
import json
import sqlite3

import pytest
from django.db import connections

from hermes_fixtures.ddl import RELEASE_LAYOUTS, SHAPES
from tests.builders import NASTY_NOW, StateDB
from tests.conftest import use_store
from tests.profile_home import PROFILE_DBS, serve_home
from tests.roles_helpers import client_for
from tests.test_timeline import BARE

pytestmark = pytest.mark.render_context

DAY = 86_400.0


def build_people(path, layout) -> dict:
    """u1 on telegram and discord (a display name that changed), u2 with a secret-looking id,
    a cron session without a user, and u3 only before the 30-day window."""
    db = StateDB.create(path, layout)
    sessions = [
        ("a", "telegram", "u1", "Ann", NASTY_NOW - 20 * DAY, 100, 0.5),
        ("b", "discord", "u1", "Annie", NASTY_NOW - 2 * DAY, 300, 1.25),
        ("c", "telegram", "u2", None, NASTY_NOW - 5 * DAY, 40, None),
        ("d", "cron", None, None, NASTY_NOW - 3 * DAY, 999, 9.0),
        ("e", "telegram", "", None, NASTY_NOW - 3 * DAY, 999, 9.0),
        ("f", "slack", "u3", "Old", NASTY_NOW - 60 * DAY, 10, 0.1),
    ]
    for sid, source, user, name, started, tokens, cost in sessions:
        db.session(
            sid,
            source=source,
            user_id=user,
            display_name=name,
            started_at=started,
            input_tokens=tokens,
            output_tokens=tokens // 2,
            cache_read_tokens=7,
            estimated_cost_usd=cost,
        )
        for n in range(3 if sid != "b" else 5):
            db.message(sid, "user" if n % 2 == 0 else "assistant", f"m{n}")
    # Auxiliary usage (title generation) is only in session_model_usage: it counts.
    db.model_usage("b", "gpt-5", input_tokens=300, output_tokens=150, estimated_cost_usd=1.25)
    db.model_usage("b", "mini", task="title_generation", input_tokens=20, estimated_cost_usd=0.01)
    db.refresh_counters()
    db.commit()
    db.close()
    return {"path": str(path)}


def oracle(path, since: float) -> dict:
    """Per user, straight from SQL: each session's counters, or its usage rows when they say
    more (Hermes's residual rule), summed."""
    conn = sqlite3.connect(path)
    scols = {r[1] for r in conn.execute("PRAGMA table_info(sessions)")}
    if "user_id" not in scols:
        return {}
    has_usage = bool(
        conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'session_model_usage'").fetchone()
    )
    col = lambda n: n if n in scols else "0"  # noqa: E731
    out = {}
    for sid, uid, source, started, mc, i, o, cr, cw, cost in conn.execute(
        f"SELECT id, user_id, source, started_at, message_count, input_tokens, output_tokens,"
        f" {col('cache_read_tokens')}, {col('cache_write_tokens')}, {col('estimated_cost_usd')}"
        " FROM sessions WHERE started_at >= ? AND user_id IS NOT NULL AND user_id <> ''",
        [since],
    ):
        counters = [i or 0, o or 0, cr or 0, cw or 0, cost or 0.0]
        if has_usage:
            usage = conn.execute(
                "SELECT COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0),"
                " COALESCE(SUM(cache_read_tokens), 0), COALESCE(SUM(cache_write_tokens), 0),"
                " COALESCE(SUM(estimated_cost_usd), 0) FROM session_model_usage WHERE session_id = ?",
                [sid],
            ).fetchone()
            counters = [max(a, b) for a, b in zip(counters, usage, strict=True)]
        row = out.setdefault(
            uid, {"sessions": 0, "messages": 0, "tokens": 0, "cost": 0.0, "platforms": set()}
        )
        row["sessions"] += 1
        row["messages"] += mc or 0
        row["tokens"] += sum(counters[:4])
        row["cost"] += counters[4]
        row["platforms"].add(source)
    conn.close()
    return out


@pytest.fixture(params=[*dict.fromkeys([*RELEASE_LAYOUTS, *SHAPES]), "random-7", BARE])
def people_store(request, tmp_path, insights_now):
    name = getattr(request.param, "name", request.param)
    facts = build_people(tmp_path / f"{name}.db", request.param)
    use_store(facts["path"])
    yield facts
    connections["hermes"].close()


def _json(client, query):
    response = client.get(f"/people/?_export=json&{query}")
    assert response.status_code == 200
    return json.loads(b"".join(response.streaming_content))


@pytest.mark.django_db(databases=["default", "hermes"])
def test_people_match_direct_sql_on_every_layout(people_store):
    client = client_for("analyst")
    rows = {r["user_id"]: r for r in _json(client, "days=30")}
    expected = oracle(people_store["path"], NASTY_NOW - 30 * DAY)
    assert set(rows) == set(expected)
    for uid, want in expected.items():
        got = rows[uid]
        assert (got["sessions"], got["messages"], got["tokens"]) == (
            want["sessions"],
            want["messages"],
            want["tokens"],
        )
        assert got["estimated_cost_usd"] == pytest.approx(want["cost"], abs=1e-6)
        assert set(got["platforms"].split(",")) == want["platforms"]
    page = client.get("/people/?days=30")
    assert page.status_code == 200
    if not expected:
        assert "does not record who a session was with" in page.content.decode()
    else:
        assert rows["u1"]["platforms"] == "discord,telegram"  # one user, two platforms
        assert "/sessions/?user_id=u1" in page.content.decode()
        assert "u3" not in rows and "u3" in {r["user_id"] for r in _json(client, "days=365")}


@pytest.mark.django_db(databases=["default", "hermes"])
def test_display_names_filters_sort_and_csv(tmp_path, insights_now):
    use_store(build_people(tmp_path / "current.db", "current")["path"])
    client = client_for("viewer")
    page = client.get("/people/?days=30&sort=-tokens")
    assert page.status_code == 200
    table = page.context["table"]
    assert [r.record.user_id for r in table.rows] == ["u1", "u2"]
    assert table.rows[0].record.display_name == "Annie"  # the latest name
    assert client.get("/people/?days=30&_export=csv").status_code == 403  # viewers: no export
    analyst = client_for("analyst")
    rows = _json(analyst, "days=30&source=telegram")
    assert [(r["user_id"], r["sessions"]) for r in rows] == [("u2", 1), ("u1", 1)]
    assert [r["user_id"] for r in _json(analyst, "days=30&user=ANNIE")] == ["u1"]
    body = b"".join(analyst.get("/people/?days=30&_export=csv").streaming_content).decode()
    header = next(csv.reader(io.StringIO(body)))
    assert header[:2] == ["user_id", "display_name"] and "sessions" in header
    assert "messages" in header
    bad = client.get("/people/?days=nope")
    assert bad.status_code == 200 and "whole number of days" in bad.content.decode()
    sessions = client.get("/sessions/?user_id=u1").context["table"]
    assert {r.record.id for r in sessions.rows} == {"a", "b"}
    connections["hermes"].close()


@pytest.mark.django_db(databases=PROFILE_DBS)
def test_people_span_every_profile(tmp_path, settings, request, insights_now):
    """Without ``/p/…`` a user's rows of every profile are added up and the profiles named;
    under ``/p/<profile>/`` only that profile's."""
    from hermes_explorer.stores import REGISTRY

    home = tmp_path / ".hermes"
    (home / "profiles" / "bot").mkdir(parents=True)
    build_people(home / "state.db", "current")
    build_people(home / "profiles" / "bot" / "state.db", "v10")
    serve_home(settings, home, request)
    try:
        analyst = client_for("analyst")
        since = NASTY_NOW - 30 * DAY
        each = [oracle(home / "state.db", since), oracle(home / "profiles/bot/state.db", since)]
        rows = {r["user_id"]: r for r in _json(analyst, "days=30")}
        for uid in ("u1", "u2"):
            assert rows[uid]["sessions"] == sum(o[uid]["sessions"] for o in each)
            assert rows[uid]["tokens"] == sum(o[uid]["tokens"] for o in each)
            assert rows[uid]["profiles"] == "bot,default"
        bot = analyst.get("/p/bot/people/?days=30&_export=json")
        only = {r["user_id"]: r for r in json.loads(b"".join(bot.streaming_content))}
        assert only["u1"]["sessions"] == each[1]["u1"]["sessions"]
    finally:
        REGISTRY.rescan()


@pytest.mark.django_db(databases=["default", "hermes"])
@pytest.mark.parametrize(
    "sort", ["display_name", "-display_name", "user_id", "-estimated_cost_usd", "first_session_at"]
)
def test_every_sort_answers(tmp_path, insights_now, sort):
    use_store(build_people(tmp_path / "current.db", "current")["path"])
    response = client_for("viewer").get(f"/people/?days=30&sort={sort}")
    assert response.status_code == 200
    assert len(response.context["table"].rows) == 2
    connections["hermes"].close()


# People are people: staff join one person's ids across platforms ------------------------------
def _keys(client, query="days=30") -> dict[str, list]:
    """``{user id: [profile, platform, user id]}`` as the staff page offers them to join."""
    page = client.get(f"/people/?{query}")
    return {
        key[2] + "@" + key[1]: list(key)
        for r in page.context["table"].rows
        for key in r.record.keys
    }


def _join(client, name, *keys, query="days=30"):
    return client.post(
        "/people/join", {"name": name, "id": [json.dumps(k) for k in keys], "next": f"?{query}"}
    )


@pytest.mark.django_db(databases=["default", "hermes"])
def test_staff_join_a_persons_ids_and_every_figure_counts_them_once(tmp_path, insights_now):
    use_store(build_people(tmp_path / "current.db", "current")["path"])
    staff = client_for("staff")
    keys = _keys(staff)
    assert set(keys) == {"u1@telegram", "u1@discord", "u2@telegram"}
    # u1 on telegram and u2 (a second telegram account) are Ann; u1 on discord stays as it is.
    response = _join(staff, "Ann", keys["u1@telegram"], keys["u2@telegram"])
    assert response.status_code == 302 and response["Location"] == "/people/?days=30"
    analyst = client_for("analyst")
    rows = {r["person"] or r["user_id"]: r for r in _json(analyst, "days=30")}
    assert set(rows) == {"Ann", "u1"}
    assert (rows["Ann"]["user_id"], rows["Ann"]["sessions"], rows["Ann"]["platforms"]) == (
        "u1, u2",
        2,
        "telegram",
    )
    assert rows["u1"]["platforms"] == "discord" and rows["u1"]["person"] is None
    assert [r["person"] for r in _json(analyst, "days=30&user=u2")] == ["Ann"]  # by any id
    assert {r["person"] for r in _json(analyst, "days=30&user=ann")} == {"Ann", None}  # Annie
    # The page shows the person's name and still each id, to a viewer too.
    viewer = client_for("viewer")
    page = viewer.get("/people/?days=30")
    body = page.content.decode()
    assert "/sessions/?user_id=Ann" in body and "/sessions/?user_id=u2" in body
    assert 'name="id"' not in body and "Join the chosen ids" not in body  # staff only
    assert viewer.post("/people/join", {"name": "X", "id": []}).status_code == 403
    # The session list's user filter knows the person: their ids on their platforms.
    listed = viewer.get("/sessions/?user_id=Ann").context["table"]
    assert {r.record.id for r in listed.rows} == {"a", "c"}
    assert {r.record.id for r in viewer.get("/sessions/?user_id=u1").context["table"].rows} == {
        "a",
        "b",
    }
    # Joining the discord id too, then separating everything: back to one row per id.
    _join(staff, "Ann", keys["u1@discord"])
    assert [r["sessions"] for r in _json(analyst, "days=30")] == [3]
    _join(staff, "", *keys.values())
    assert {r["user_id"]: r["person"] for r in _json(analyst, "days=30")} == {
        "u1": None,
        "u2": None,
    }
    from insights_app.models import Person

    assert not Person.objects.exists()
    connections["hermes"].close()


@pytest.mark.django_db(databases=["default", "hermes"])
def test_a_bad_join_gets_a_message_and_changes_nothing(tmp_path, insights_now):
    use_store(build_people(tmp_path / "current.db", "current")["path"])
    staff = client_for("staff")
    key = _keys(staff)["u1@telegram"]
    for ids in ([], ["not json"], [json.dumps(["elsewhere", "telegram", "u1"])], ["[1, 2, 3]"]):
        response = staff.post("/people/join", {"name": "Ann", "id": ids}, follow=True)
        assert response.status_code == 200 and response.context["messages"]
    assert (
        staff.post("/people/join", {"name": "x" * 101, "id": [json.dumps(key)]}).status_code == 302
    )
    from insights_app.models import Person

    assert not Person.objects.exists()
    connections["hermes"].close()


@pytest.mark.django_db(databases=PROFILE_DBS)
def test_restricted_staff_join_only_ids_of_their_profiles(
    tmp_path, settings, request, insights_now
):
    from hermes_explorer.stores import REGISTRY
    from insights_app.models import PersonId
    from profiles_app.models import ProfileRestriction
    from tests.roles_helpers import make_user

    home = tmp_path / ".hermes"
    (home / "profiles" / "bot").mkdir(parents=True)
    build_people(home / "state.db", "current")
    build_people(home / "profiles" / "bot" / "state.db", "v10")
    serve_home(settings, home, request)
    try:
        staff = client_for("staff")
        keys = _keys(staff)
        assert keys["u2@telegram"][0] in {"bot", "default"}
        bot = ["bot", "telegram", "u2"]
        mallory = make_user("staff", "mallory")
        ProfileRestriction.objects.create(user=mallory, profiles="bot")
        from django.test import Client

        restricted = Client()
        restricted.force_login(mallory)
        _join(restricted, "Ann", ["default", "telegram", "u1"], bot)
        assert not PersonId.objects.exists()
        _join(restricted, "Ann", bot, ["bot", "telegram", "u1"])
        assert set(PersonId.objects.values_list("store", flat=True)) == {"bot"}
        # Over every profile, the default profile's u1 and u2 stay apart.
        rows = {r["person"] or r["user_id"]: r for r in _json(client_for("analyst"), "days=30")}
        assert rows["Ann"]["profiles"] == "bot" and rows["u2"]["profiles"] == "default"
    finally:
        REGISTRY.rescan()


@pytest.mark.django_db(databases=["default", "hermes"])
def test_user_ids_sort_on_their_redacted_text(tmp_path, insights_now):
    from tests.test_redaction import GITHUB

    db = StateDB.create(tmp_path / "s.db", "current")
    for sid, user in (("a", "a-user"), ("g", GITHUB), ("h", "h-user")):
        db.session(sid, source="telegram", user_id=user, started_at=NASTY_NOW - DAY)
    db.close()
    use_store(str(tmp_path / "s.db"))
    page = client_for("viewer").get("/people/?days=30&sort=user_id")
    ids = [r.record.user_id for r in page.context["table"].rows]
    assert GITHUB not in page.content.decode() and GITHUB not in ids
    assert ids == sorted(ids) and ids[1:] == ["a-user", "h-user"]  # "[redacted…" first
    connections["hermes"].close()
