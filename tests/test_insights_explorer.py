"""The explorer's own insights figures, checked against numbers worked out by hand.

NOW is Sunday 2026-01-11 00:00 UTC; the window is the last 7 days, [Jan 4 00:00, now); the
previous period is [Dec 28 00:00, Jan 4 00:00).

    id   source    started (UTC)      model        in    out   cache r  cache w  cost  usage row
    a    cli       Mon Jan 5 10:00    sonnet-4.5   1000  500   3000     1000     1.00  same, +200 reasoning
    b    cli       Mon Jan 5 12:00    gpt-5        2000  1000  0        0        2.00  none (all residual)
    c    telegram  Thu Jan 8 09:00    sonnet-4.5   500   100   500      0        0.50  same, +50 reasoning
    d    cli       Thu Jan 1 10:00    sonnet-4.5   100   100   0        0        0.25  same (previous period)
"""

from __future__ import annotations

import pytest
from django.db import connections

from tests.builders import StateDB
from tests.conftest import use_store

pytestmark = pytest.mark.django_db(databases=["default", "hermes"])

NOW = 1_768_089_600.0  # Sun 2026-01-11 00:00:00 UTC
DAY = 86_400.0
HOUR = 3_600.0
JAN5 = NOW - 6 * DAY
JAN8 = NOW - 3 * DAY
JAN1 = NOW - 10 * DAY


@pytest.fixture(autouse=True)
def utc(settings):
    settings.TIME_ZONE = "UTC"


@pytest.fixture
def page(tmp_path, staff_client, monkeypatch):
    db = StateDB.create(tmp_path / "small.db", "current")
    rows = [
        ("a", "cli", JAN5 + 10 * HOUR, "anthropic/claude-sonnet-4.5", 1000, 500, 3000, 1000, 1.0),
        ("b", "cli", JAN5 + 12 * HOUR, "openai/gpt-5", 2000, 1000, 0, 0, 2.0),
        ("c", "telegram", JAN8 + 9 * HOUR, "anthropic/claude-sonnet-4.5", 500, 100, 500, 0, 0.5),
        ("d", "cli", JAN1 + 10 * HOUR, "anthropic/claude-sonnet-4.5", 100, 100, 0, 0, 0.25),
    ]
    reasoning = {"a": 200, "c": 50, "d": 0}
    for sid, source, started, model, i, o, cr, cw, cost in rows:
        db.session(
            sid,
            source=source,
            model=model,
            started_at=started,
            input_tokens=i,
            output_tokens=o,
            cache_read_tokens=cr,
            cache_write_tokens=cw,
            estimated_cost_usd=cost,
        )
        if sid in reasoning:
            db.model_usage(
                sid,
                model,
                input_tokens=i,
                output_tokens=o,
                cache_read_tokens=cr,
                cache_write_tokens=cw,
                reasoning_tokens=reasoning[sid],
                estimated_cost_usd=cost,
            )
    db.close()
    use_store(tmp_path / "small.db")
    monkeypatch.setattr("insights_app.stats.current_time", lambda: NOW)
    yield staff_client
    connections["hermes"].close()


def explorer(client, query="days=7"):
    return client.get(f"/insights/?{query}&_export=json").json()["explorer"]


def test_previous_period_and_changes(page):
    data = explorer(page)
    previous = data["previous_period"]
    assert previous["started_at_min"] == NOW - 14 * DAY
    assert previous["started_at_max_exclusive"] == NOW - 7 * DAY
    assert previous["overview"]["total_sessions"] == 1  # d
    sessions = data["changes"]["total_sessions"]
    assert (sessions["current"], sessions["previous"], sessions["arrow"]) == (3, 1, "▲")
    assert sessions["change_pct"] == pytest.approx(200.0)
    cost = data["changes"]["estimated_cost"]
    assert cost["current"] == pytest.approx(3.5)  # 1.00 + 2.00 + 0.50
    assert cost["change_pct"] == pytest.approx(1300.0)  # 3.50 / 0.25 = 14×
    tokens = data["changes"]["total_tokens"]
    # a 5500 + b 3000 + c 1100 = 9600 against d 200.
    assert (tokens["current"], tokens["previous"]) == (9600, 200)


def test_all_time_has_no_previous_period(page):
    data = explorer(page, "days=all")
    assert data["previous_period"] is None and data["changes"] == {}


def test_custom_range_previous_period_is_the_same_number_of_days_before(page):
    data = explorer(page, "days=custom&start=2026-01-05&end=2026-01-08")
    # Four days before Jan 5: Jan 1 to Jan 4, which holds d.
    assert data["previous_period"]["started_at_min"] == JAN1
    assert data["previous_period"]["started_at_max_exclusive"] == JAN5
    assert data["changes"]["total_sessions"]["previous"] == 1


def test_cache_hit_rates(page):
    data = explorer(page)
    # cache read 3500 over input 3500 + cache read 3500 + cache write 1000.
    assert data["cache_hit_rate"] == pytest.approx(3500 / 8000)
    by_model = {m["model"]: m["cache_hit_rate"] for m in data["cache_hit_rate_by_model"]}
    assert by_model == {
        "claude-sonnet-4.5": pytest.approx(3500 / 6000),  # a + c
        "gpt-5": 0.0,
    }
    by_day = {d["day"]: d["cache_hit_rate"] for d in data["cache_hit_rate_by_day"]}
    assert by_day == {
        "2026-01-05": pytest.approx(3000 / 7000),  # a + b
        "2026-01-08": pytest.approx(500 / 1000),  # c
    }


@pytest.mark.render_context
def test_cost_by_day_and_model_and_projection(page):
    data = explorer(page)
    rows = [(r["day"], r["model"], r["cost"]) for r in data["cost_by_day_and_model"]]
    assert rows == [
        ("2026-01-05", "claude-sonnet-4.5", pytest.approx(1.0)),
        ("2026-01-05", "gpt-5", pytest.approx(2.0)),
        ("2026-01-08", "claude-sonnet-4.5", pytest.approx(0.5)),
    ]
    assert data["active_days"] == 2
    assert data["cost_per_active_day"] == pytest.approx(1.75)
    p = data["month_projection"]
    assert p["month"] == "2026-01"
    assert p["month_to_date_cost"] == pytest.approx(3.75)  # a, b, c and d
    assert (p["days_elapsed"], p["days_in_month"]) == (11, 31)
    assert p["projected_cost"] == pytest.approx(3.75 / 11 * 31)
    assert "Estimate" in p["method"]
    assert page.get(p["drilldown"]).context["count"].value == 4


def test_reasoning_by_model(page):
    data = explorer(page)
    assert data["reasoning_by_model"] == [
        {
            "model": "claude-sonnet-4.5",
            "reasoning_tokens": 250,
            "output_tokens": 600,
            "share_of_output": pytest.approx(250 / 600),
            "drilldown": data["cache_hit_rate_by_model"][0]["drilldown"],
        }
    ]


def test_page_and_csv_show_the_explorer_figures(page):
    html = page.get("/insights/?days=7").content.decode()
    assert "Beyond Hermes&#x27;s report" in html or "Beyond Hermes's report" in html
    assert "▲ 200.0% vs previous period" in html
    assert "Projected cost for 2026-01 (an estimate)" in html
    csv = page.get("/insights/?days=7&_export=csv&table=cache_by_day").content.decode()
    assert csv.splitlines()[0] == (
        "day,cache_hit_rate,input_tokens,cache_read_tokens,cache_write_tokens"
    )
    assert csv.splitlines()[2] == "2026-01-08,0.5,500,500,0"
    csv = page.get("/insights/?days=7&_export=csv&table=cost_by_day_model").content.decode()
    assert csv.splitlines()[1:] == [
        "2026-01-05,claude-sonnet-4.5,1.0",
        "2026-01-05,gpt-5,2.0",
        "2026-01-08,claude-sonnet-4.5,0.5",
    ]
    for table in ("cache_by_model", "reasoning_by_model"):
        assert page.get(f"/insights/?days=7&_export=csv&table={table}").status_code == 200


def test_each_model_row_adds_up_its_days(page):
    # The models table and the daily cost by model come from one grouping by start day and
    # model: a model's sessions and cost are those of its days (sonnet: a on Jan 5, c on
    # Jan 8; gpt-5: b, all residual).
    data = page.get("/insights/?days=7&_export=json").json()
    models = {m["model"]: m for m in data["models"]}
    assert {name: m["sessions"] for name, m in models.items()} == {
        "claude-sonnet-4.5": 2,
        "gpt-5": 1,
    }
    by_day: dict[str, float] = {}
    for row in data["explorer"]["cost_by_day_and_model"]:
        by_day[row["model"]] = by_day.get(row["model"], 0.0) + row["cost"]
    assert by_day == {"claude-sonnet-4.5": pytest.approx(1.5), "gpt-5": pytest.approx(2.0)}
    assert {name: m["cost"] for name, m in models.items()} == by_day
