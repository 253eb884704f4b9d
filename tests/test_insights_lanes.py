"""The insights pass split in two statements side by side, and the spare lane that runs one.

The split must give exactly the figures of the single statement (on every layout), fall back
to running inline when no lane is free, carry the request's store and deadline into the lane,
and leave no connection open there.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connections

from hermes_explorer import lanes, store
from hermes_explorer.hermes_db.deadline import QueryTimeout, query_budget
from insights_app import figures
from insights_app.stats import Window, build_report
from tests.conftest import use_store
from tests.test_insights import NOW, build_fixture, current, shaped, utc  # noqa: F401 (fixtures)

pytestmark = [
    pytest.mark.django_db(databases=["default", "hermes"]),
    pytest.mark.usefixtures("utc"),
]


def _figures(report):
    return (
        report.overview,
        report.models,
        report.platforms,
        report.heatmap,
        [d.as_dict() for d in report.days_by_start],
        report.top_sessions,
        report.day_models,
        report.tools,
        report.skills,
    )


@pytest.mark.usefixtures("shaped")
@pytest.mark.parametrize("days", [7, 30, None])
def test_the_split_pass_gives_the_figures_of_one_statement(monkeypatch, days):
    whole = build_report(Window(days=days), now=NOW)
    used = []
    real = lanes.beside

    def watched(work, **options):
        used.append(work)
        return real(work, **options)

    monkeypatch.setattr(figures, "SPLIT_FROM", 0)
    monkeypatch.setattr(lanes, "beside", watched)
    split = build_report(Window(days=days), now=NOW)
    assert used, "the pass was not split"
    assert _figures(split) == _figures(whole)


@pytest.fixture
def one_lane():
    """Every spare lane but one taken (as by other requests)."""
    free, _pool = lanes._lanes()
    taken = [free.acquire(blocking=False) for _ in range(lanes.spare_lanes() - 1)]
    assert all(taken)
    yield free
    for _ in taken:
        free.release()


def test_no_free_lane_runs_the_work_here(one_lane):
    ran_in = []
    assert one_lane.acquire(blocking=False)
    try:
        later = lanes.beside(lambda: ran_in.append(threading.current_thread()) or 7)
        assert ran_in == []  # nothing ran yet: it runs when its result is asked for
        assert later() == 7
        assert ran_in == [threading.current_thread()]
    finally:
        one_lane.release()


def test_a_lane_runs_beside_and_frees_itself(one_lane):
    ran_in = []
    started = threading.Event()
    go = threading.Event()

    def work():
        ran_in.append(threading.current_thread())
        started.set()
        go.wait(5)
        return "done"

    later = lanes.beside(work)
    assert started.wait(5)
    # The last lane is taken: the next caller's work runs in its own thread.
    assert lanes.beside(lambda: threading.current_thread())() is threading.current_thread()
    go.set()
    assert later() == "done"
    assert ran_in and ran_in[0] is not threading.current_thread()
    # Free again (the lane frees itself just after handing its result over).
    deadline = time.monotonic() + 5
    while lanes.beside(threading.current_thread)() is threading.current_thread():
        assert time.monotonic() < deadline
        time.sleep(0.01)


@pytest.fixture
def all_lanes_busy():
    """Every spare lane running a request's part until ``release`` is set."""
    release = threading.Event()
    started = []
    for _ in range(lanes.spare_lanes()):
        began = threading.Event()

        def hold(began=began):
            began.set()
            release.wait(10)
            return threading.current_thread()

        started.append((lanes.beside(hold), began))
    assert all(began.wait(5) for _later, began in started)
    yield release, [later for later, _began in started]
    release.set()


def test_work_in_line_goes_to_the_first_lane_that_frees_up(all_lanes_busy):
    release, busy = all_lanes_busy
    ran_in = []
    later = lanes.beside(lambda: ran_in.append(threading.current_thread()) or "mine")
    assert ran_in == []
    release.set()
    held = {part() for part in busy}  # the lanes' own parts end, then they take the line
    assert later() == "mine"
    assert ran_in[0] is not threading.current_thread()
    assert ran_in[0] in held


def test_work_in_line_that_no_lane_took_runs_in_its_caller(all_lanes_busy):
    _release, _busy = all_lanes_busy
    later = lanes.beside(lambda: threading.current_thread())
    assert later() is threading.current_thread()
    assert not any(later_one for later_one in lanes._waiting)  # not left in line


def test_work_in_line_raises_in_its_caller_what_it_raised_in_a_lane(all_lanes_busy):
    release, busy = all_lanes_busy

    def boom():
        raise ValueError("in a lane")

    later = lanes.beside(boom)
    release.set()
    for part in busy:
        part()
    with pytest.raises(ValueError, match="in a lane"):
        later()


def test_work_asked_to_go_last_never_takes_a_free_lane():
    ran_in = []
    later = lanes.beside(lambda: ran_in.append(threading.current_thread()), in_line=True)
    # A free lane stays free for the bigger parts asked for after it.
    part = lanes.beside(lambda: threading.current_thread())
    assert part() is not threading.current_thread()
    later()
    assert ran_in  # run once, by the lane that ended its part or by its caller


def test_parts_go_before_what_asked_to_go_last(all_lanes_busy):
    release, busy = all_lanes_busy
    order = []
    last = lanes.beside(lambda: order.append("last"), in_line=True)
    part = lanes.beside(lambda: order.append("part"))
    release.set()
    for one in busy:
        one()
    part()
    last()
    assert order == ["part", "last"]


def test_a_lane_hands_its_result_over_before_taking_work_in_line(all_lanes_busy):
    release, busy = all_lanes_busy
    go = threading.Event()
    waiting = [lanes.beside(lambda: go.wait(30)) for _ in busy]
    release.set()
    started = time.monotonic()
    for part in busy:
        part()  # not held until the lane has also run what it took from the line
    assert time.monotonic() - started < 5
    go.set()
    assert all(later() for later in waiting)


def test_a_part_put_in_line_while_a_lane_runs_the_last_goes_next(all_lanes_busy):
    release, busy = all_lanes_busy
    last_started, last_go, part_ran = threading.Event(), threading.Event(), threading.Event()
    hold_others = threading.Event()

    def last():
        last_started.set()
        last_go.wait(5)

    last_later = lanes.beside(last, in_line=True)
    release.set()
    for one in busy:
        one()
    assert last_started.wait(5)  # a lane runs what asked to go last
    others = []
    for _ in range(lanes.spare_lanes() - 1):  # every other lane busy again
        began = threading.Event()
        others.append(lanes.beside(lambda began=began: began.set() or hold_others.wait(30)))
        assert began.wait(5)
    part = lanes.beside(lambda: part_ran.set() or threading.current_thread())
    last_go.set()
    # The lane that ran the last one takes the part next, before its caller asks for it
    # (the other lanes are held much longer than this waits).
    assert part_ran.wait(3)
    assert part() is not threading.current_thread()
    hold_others.set()
    for one in others:
        one()
    last_later()


@pytest.mark.django_db(databases=["default"])
def test_work_reading_app_data_stays_here_inside_a_transaction():
    # pytest-django runs this test in a transaction: a lane's connection would not see it.
    from django.db import connection

    assert connection.in_atomic_block
    assert lanes.beside(threading.current_thread, reads_app_data=True)() is (
        threading.current_thread()
    )


@pytest.mark.django_db(transaction=True, databases=["default", "hermes"])
def test_work_reading_app_data_goes_beside_outside_a_transaction():
    assert lanes.beside(threading.current_thread, reads_app_data=True)() is not (
        threading.current_thread()
    )


def test_no_lanes_on_a_one_core_host(settings):
    settings.HERMES_SPARE_LANES = 0
    assert lanes.beside(threading.current_thread)() is threading.current_thread()


def test_a_lane_raises_what_its_work_raised_and_stays_usable():
    def boom():
        raise ValueError("no")

    with pytest.raises(ValueError):
        lanes.beside(boom)()
    assert lanes.beside(lambda: 3)() == 3


def test_a_lane_reads_the_request_store_and_keeps_its_deadline(tmp_path):
    use_store(build_fixture(tmp_path / "current.db", "current"))
    try:
        path = store.path()
        assert lanes.beside(store.path)() == path
        slow = (
            "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c"
        )
        started = time.monotonic()
        with query_budget(0.2), pytest.raises(QueryTimeout):
            lanes.beside(lambda: store.rows(slow, []))()
        assert time.monotonic() - started < 3
    finally:
        connections["hermes"].close()


def test_a_lane_closes_the_connections_it_opened(tmp_path):
    use_store(build_fixture(tmp_path / "current.db", "current"))
    seen = []

    def work():
        store.rows("SELECT COUNT(*) FROM sessions", [])
        seen.append(connections["hermes"])
        return True

    try:
        assert lanes.beside(work)()
        assert seen and seen[0].connection is None
    finally:
        connections["hermes"].close()


def _close(a, b, where="report"):
    """Equal, floats up to their last binary digits (sums in another order)."""
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            _close(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _close(x, y, f"{where}[{i}]")
    elif isinstance(a, float):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-9), where
    else:
        assert a == b, where


@pytest.mark.parametrize("shape", ["current", "legacy", "doc"])
@pytest.mark.parametrize("days", [30, None])
def test_the_halves_add_up_on_a_generated_store(tmp_path, monkeypatch, days, shape):
    from hermes_fixtures.demo import build_demo_db

    now = 1_760_000_000.0
    build_demo_db(tmp_path / "demo.db", sessions=300, messages=6000, seed=11, now=now, shape=shape)
    use_store(tmp_path / "demo.db")
    try:
        whole = build_report(Window(days=days), now=now)
        monkeypatch.setattr(figures, "SPLIT_FROM", 0)
        split = build_report(Window(days=days), now=now)
        assert split.overview["total_sessions"] > 50
        _close(_figures(split), _figures(whole))
    finally:
        connections["hermes"].close()


def test_top_sessions_of_two_halves_follow_the_parts_order():
    from insights_app.figures import top_sessions

    def row(kind, value, started, sid):
        return (kind, {"session_id": sid, "started_at": started, "value": value})

    one = [row("messages", 5, 10.0, "a"), row("longest", 9.0, None, "b")]
    other = [row("messages", 5, 12.0, "c"), row("longest", 9.0, 1.0, "d"), row("tokens", 1, 1, "e")]
    best = dict(top_sessions.combine(one, other))
    assert best["messages"]["session_id"] == "c"  # same value: the later start
    assert best["longest"]["session_id"] == "d"  # a start beats none
    assert best["tokens"]["session_id"] == "e"


@pytest.mark.usefixtures("shaped")
def test_columns_combine_by_their_aggregate():
    from insights_app.figures import FIGURES
    from insights_app.figures.registry import column_rules, combined
    from insights_app.window import scope_of

    scope = scope_of(Window(days=30), NOW)
    for figure in FIGURES:
        if figure.combine is None:
            assert column_rules(figure, scope)  # every column has a rule
    platforms = next(f for f in FIGURES if f.name == "platforms")
    one = {"platforms": [("cli", {"sessions": 2, "first_started": None, "last_started": 5.0})]}
    other = {"platforms": [("cli", {"sessions": 3, "first_started": 4.0, "last_started": 9.0})]}
    expected = {"sessions": 5, "first_started": 4.0, "last_started": 9.0}
    rules = column_rules(platforms, scope)
    merged = dict(combined(scope, [platforms], one, other)["platforms"])["cli"]
    assert {k: merged[k] for k in expected} == expected
    assert rules["first_started"](None, None) is None


@pytest.mark.usefixtures("shaped")
@pytest.mark.parametrize("days", [7, 30])
def test_a_narrow_window_found_by_index_gives_the_figures_of_a_table_scan(monkeypatch, days):
    from insights_app import window
    from insights_app.figures import per_session

    made = []
    real_cte = per_session.per_session_cte

    def recorded(scope, segments):
        made.append(real_cte(scope, segments))
        return made[-1]

    monkeypatch.setattr(per_session, "per_session_cte", recorded)
    monkeypatch.setattr("insights_app.figures.registry.per_session_cte", recorded)
    monkeypatch.setattr(window, "NARROW_SHARE", 0.0)  # never narrow: the table in rowid order
    scanned = build_report(Window(days=days), now=NOW)
    assert made and not any("+s.rowid" in sql for sql in made)
    made.clear()
    monkeypatch.setattr(window, "NARROW_SHARE", 2.0)  # always narrow
    narrow = build_report(Window(days=days), now=NOW)
    if store.shape().has_model_usage:  # the only layout whose pass groups by session
        assert made and all("GROUP BY +s.rowid" in sql for sql in made)
    assert _figures(narrow) == _figures(scanned)


@pytest.mark.usefixtures("current")
def test_a_narrow_window_reads_the_start_index_and_a_wide_one_the_table(monkeypatch):
    from django.utils import timezone

    from insights_app import window as window_module

    monkeypatch.setattr(window_module, "NARROW_SHARE", 0.2)  # one session of eight is narrow

    from insights_app.figures.per_session import per_session_cte
    from insights_app.localtime import offset_segments
    from insights_app.window import scope_of, window_span

    def plan(window):
        scope, first, last = window_span(scope_of(window, NOW))
        segments = offset_segments(timezone.get_current_timezone(), first, last)
        sql = f"WITH {per_session_cte(scope, segments)} SELECT COUNT(*) FROM per"
        rows = store.rows(f"EXPLAIN QUERY PLAN {sql}", scope.params)
        return scope, " | ".join(str(r[-1]) for r in rows)

    scope, steps = plan(Window(days=2))  # one of the fixture's eight sessions
    assert scope.narrow and "USING INDEX idx_sessions_started" in steps
    scope, steps = plan(Window(days=None))  # all time: no start bound, the whole table
    assert not scope.narrow and "SCAN s" in steps
