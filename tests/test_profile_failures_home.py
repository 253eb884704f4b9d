"""The home page and the failures page over several profiles of different layouts: the
figures of "All profiles" are the sum of each profile's own, the lists page through every
profile, and a user restricted to some profiles sees only theirs."""

from __future__ import annotations

import csv
import io
import time

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.core.management import call_command

from tests.profile_home import PROFILE_DBS, serve_home
from tests.test_home import build_home

pytestmark = [pytest.mark.django_db(databases=PROFILE_DBS), pytest.mark.render_context]

LAYOUTS = {"default": "current", "support": "legacy", "coder": "doc"}
FAILURES = "/failures/?days=30"


@pytest.fixture
def three(settings, tmp_path, request):
    for alias in ("default", "failures", "reports"):
        caches[alias].clear()
    for name, layout in LAYOUTS.items():
        path = tmp_path / "state.db" if name == "default" else tmp_path / "profiles" / name
        if name != "default":
            path.mkdir(parents=True)
            path = path / "state.db"
        build_home(path, layout)
    serve_home(settings, tmp_path, request)
    yield tmp_path
    from hermes_explorer.stores import REGISTRY

    REGISTRY.rescan()


def _figures(response) -> dict:
    return {
        (row["metric"], cell["period"].key): cell["value"]
        for row in response.context["figures"]["table"]
        for cell in row["cells"]
    }


def _summed(parts: list[dict]) -> dict:
    return {key: pytest.approx(sum(p[key] for p in parts)) for key in parts[0]}


def _counts(data: dict) -> dict:
    keys = ("failures", "tool_calls", "sessions", "failed_sessions")
    return {**{k: data[k] for k in keys}, **{f"kind:{k}": v for k, v in data["by_kind"].items()}}


def _rows(client, url: str) -> list[dict]:
    response = client.get(url + "&_export=csv&rows=1")
    assert response.status_code == 200
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))


def test_failures_of_all_profiles_are_the_sum_of_each_profiles(three, staff_client):
    merged = staff_client.get(FAILURES + "&_export=json").json()
    alone = {p: staff_client.get(f"/p/{p}{FAILURES}&_export=json").json() for p in LAYOUTS}
    assert all(a["failures"] for a in alone.values())
    assert _counts(merged) == _summed([_counts(a) for a in alone.values()])
    tools = {g["key"]: g for g in merged["groups"] if g["group"] == "tool"}
    assert tools["terminal"]["failures"] == sum(
        g["failures"] for a in alone.values() for g in a["groups"] if g["key"] == "terminal"
    )
    rows = _rows(staff_client, FAILURES)
    assert len(rows) == merged["failures"]
    assert {p: sum(r["profile"] == p for r in rows) for p in LAYOUTS} == {
        p: a["failures"] for p, a in alone.items()
    }
    page = staff_client.get(FAILURES)
    listed = page.context["failing"] + page.context["failed_sessions"]
    assert {r["profile"] for r in listed} == set(LAYOUTS)
    html = page.content.decode()
    for profile in LAYOUTS:
        if profile != "default":
            assert f'href="/p/{profile}/sessions/h-' in html


def test_the_failures_lists_page_through_every_profile(three, staff_client, monkeypatch):
    from live_app import views_failures

    monkeypatch.setattr(views_failures, "LIST_LIMIT", 2)
    expected = {
        (r["profile"], r["message_id"] or r["session_id"]) for r in _rows(staff_client, FAILURES)
    }
    seen: list[tuple] = []
    for name, anchor in (("failing", "older_failing"), ("failed_sessions", "older_failed")):
        url, pages, times = FAILURES, 0, []
        while url:
            response = staff_client.get(url if url.startswith("/") else "/failures/" + url)
            assert response.status_code == 200
            rows = response.context[name]
            assert len(rows) <= 2 and (rows or pages == 0)
            seen += [(r["profile"], str(r["message_id"] or r["session_id"])) for r in rows]
            times += [r["timestamp"] for r in rows]
            url, pages = response.context[anchor], pages + 1
        if name == "failed_sessions":
            assert times == sorted(times, reverse=True)
        # Messages: each profile's in its own order (newest id first), merged by time.
        for profile in LAYOUTS:
            ids = [int(i) for p, i in seen if p == profile and i.isdigit()]
            assert ids == sorted(ids, reverse=True)
        assert pages > 1, name
    assert len(seen) == len(set(seen)) and set(seen) == expected


def test_home_figures_of_all_profiles_are_the_sum_of_each_profiles(three, staff_client):
    merged = _figures(staff_client.get("/"))
    alone = [_figures(staff_client.get(f"/p/{p}/")) for p in LAYOUTS]
    assert merged[("sessions", "today")] >= len(LAYOUTS)
    assert merged == _summed(alone)
    response = staff_client.get("/")
    stores = {s["store"].name for s in response.context["figures"]["costliest"]}
    stores |= {e["store"].name for e in response.context["latest_failures"]}
    assert len(stores) > 1
    # The failures figure leads to the failures page of the same scope, with the same count.
    cell = next(
        c
        for row in response.context["figures"]["table"]
        if row["metric"] == "failures"
        for c in row["cells"]
        if c["period"].key == "week"
    )
    behind = staff_client.get(cell["href"] + "&_export=csv&rows=1")
    assert len(b"".join(behind.streaming_content).decode().splitlines()) - 1 == cell["value"]


def test_a_restricted_user_sees_only_their_profiles(three, staff_client, client):
    user = get_user_model().objects.create_user("erin", password="pw-erin-123")
    call_command("roles", "grant", "erin", "analyst")
    call_command("profiles", "restrict", "erin", "support", "coder")
    client.force_login(user)
    allowed = ("support", "coder")
    home = _figures(client.get("/"))
    assert home == _summed([_figures(staff_client.get(f"/p/{p}/")) for p in allowed])
    response = client.get("/")
    named = {s["store"].name for s in response.context["figures"]["costliest"]}
    named |= {e["store"].name for e in response.context["latest_failures"]}
    assert named <= set(allowed)
    failures = client.get(FAILURES + "&_export=json").json()
    alone = [staff_client.get(f"/p/{p}{FAILURES}&_export=json").json() for p in allowed]
    assert _counts(failures) == _summed([_counts(a) for a in alone])
    assert {r["profile"] for r in _rows(client, FAILURES)} <= set(allowed)
    assert client.get(f"/p/default{FAILURES}").status_code == 404
    assert time.time()


def test_profiles_chosen_on_the_page_are_kept_in_its_links(three, staff_client):
    chosen = "&profile=support&profile=coder"
    failures = staff_client.get(FAILURES + chosen + "&_export=json").json()
    alone = [
        staff_client.get(f"/p/{p}{FAILURES}&_export=json").json() for p in ("support", "coder")
    ]
    assert _counts(failures) == _summed([_counts(a) for a in alone])
    page = staff_client.get(FAILURES + chosen)
    links = [link for _k, _label, _n, link in page.context["kinds"]]
    assert all("profile=support&profile=coder" in link for link in links)
    home = staff_client.get("/?profile=support")
    assert _figures(home) == _figures(staff_client.get("/p/support/"))
    for row in home.context["figures"]["table"]:
        for cell in row["cells"]:
            assert "profile=support" in cell["href"]


def test_an_unreadable_profile_is_named_and_the_others_are_summed(three, staff_client):
    corrupt = three / "profiles" / "corrupt" / "state.db"
    corrupt.parent.mkdir(parents=True)
    corrupt.write_text("this is not an sqlite file " * 100)
    from hermes_explorer.stores import REGISTRY

    REGISTRY.rescan()
    for url in ("/", FAILURES):
        response = staff_client.get(url)
        assert response.status_code == 200, url
        assert any("corrupt" in str(note) for note in response.context["notes"]), url
    merged = staff_client.get(FAILURES + "&_export=json").json()
    alone = [staff_client.get(f"/p/{p}{FAILURES}&_export=json").json() for p in LAYOUTS]
    assert _counts(merged) == _summed([_counts(a) for a in alone])
    assert len(_rows(staff_client, FAILURES)) == merged["failures"]
