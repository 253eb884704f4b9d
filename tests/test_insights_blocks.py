"""The pass over kept whole days (insights_app.figures.blocks).

Adding up kept days and reading the rest must give the figures of the single statement on every
layout, for the report and for the previous period; a kept day is reused only while its
sessions and usage rows are unchanged (a changed counter, model text, usage row, a new session,
a session whose start is not a number), is shared through the app database, and the state.db
is never written.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import sqlite3

import pytest
from django.db import connections

from insights_app import explorer, summaries
from insights_app.figures import blocks
from insights_app.models import PassBlock
from insights_app.stats import Window, build_report
from insights_app.window import Scope
from tests.conftest import use_store
from tests.test_insights import utc  # noqa: F401 (fixture)
from tests.test_insights_lanes import _close, _figures

pytestmark = [
    pytest.mark.django_db(databases=["default", "hermes"]),
    pytest.mark.usefixtures("utc"),
]

NOW = 1_760_000_000.0
DAY = 86_400


@pytest.fixture(autouse=True)
def every_day_in_the_report(monkeypatch):
    """Days to compute are computed by the report itself (not kept beside), whatever their
    number, unless a test says otherwise."""
    monkeypatch.setattr(blocks, "MAX_DIRTY_DAYS", 10**6)


@pytest.fixture(scope="module")
def demo_stores(tmp_path_factory):
    """A generated store of a layout (300 sessions over 120 days), built when first asked."""
    from hermes_fixtures.demo import build_demo_db

    base = tmp_path_factory.mktemp("blocks")
    built = {}

    def store_of(shape: str):
        if shape not in built:
            path = base / f"{shape}.db"
            build_demo_db(path, sessions=300, messages=6000, seed=5, now=NOW, shape=shape)
            built[shape] = path
        return built[shape]

    return store_of


@pytest.fixture
def writable(demo_stores, tmp_path):
    """A copy of the current-layout store that a test may change (as Hermes would)."""
    path = tmp_path / "state.db"
    shutil.copy(demo_stores("current"), path)
    use_store(path)
    yield path
    connections["hermes"].close()


@pytest.fixture
def computed_days(monkeypatch):
    """The day blocks computed (not taken from the app database), in order."""
    seen: list[int] = []
    real = blocks._day_scope

    def watched(scope, day):
        seen.append(day)
        return real(scope, day)

    monkeypatch.setattr(blocks, "_day_scope", watched)
    return seen


def _plain(monkeypatch, window: Window):
    monkeypatch.setattr(blocks, "BLOCKS_FROM", 10**9)
    report = build_report(window, now=NOW)
    monkeypatch.setattr(blocks, "BLOCKS_FROM", 0)
    return report


def _kept(window: Window):
    summaries.forget_all()  # as a new process
    return build_report(window, now=NOW)


@pytest.mark.parametrize("shape", ["current", "legacy", "doc"])
@pytest.mark.parametrize("days", [30, 365, None])
def test_kept_days_add_up_to_the_figures_of_one_statement(
    demo_stores, monkeypatch, computed_days, shape, days
):
    use_store(demo_stores(shape))
    try:
        window = Window(days=days)
        plain = _plain(monkeypatch, window)
        first = _kept(window)
        assert first.overview["total_sessions"] > 50
        assert len(computed_days) > 20  # every whole day computed once, and kept
        _close(_figures(first), _figures(plain))
        computed_days.clear()
        again = _kept(window)
        # The template statement names the first day; no day's pass runs again.
        assert len(computed_days) == 1
        _close(_figures(again), _figures(plain))
        assert PassBlock.objects.filter(store_key=summaries.file_key()).count() >= 20
    finally:
        connections["hermes"].close()


def test_the_previous_period_adds_up_too(demo_stores, monkeypatch):
    use_store(demo_stores("current"))
    try:
        window = Window(days=30)
        earlier = explorer.previous_window(window, NOW)
        monkeypatch.setattr(blocks, "BLOCKS_FROM", 10**9)
        plain = explorer.previous_report(earlier, NOW)
        monkeypatch.setattr(blocks, "BLOCKS_FROM", 0)
        kept = explorer.previous_report(earlier, NOW)
        assert kept.overview["total_sessions"] > 20
        _close(kept.overview, plain.overview)
    finally:
        connections["hermes"].close()


def _change(path, sql: str, params=()) -> None:
    """Write to the store as Hermes would (the explorer's own connection stays read-only)."""
    connections["hermes"].close()
    db = sqlite3.connect(path)
    db.execute(sql, params)
    db.commit()
    db.close()


def _old_session(path, with_usage: bool) -> tuple[str, float]:
    """A session started ~60 days before NOW (inside a whole day of a 365-day window)."""
    db = sqlite3.connect(path)
    have = "" if with_usage else "NOT "
    row = db.execute(
        f"SELECT id, started_at FROM sessions s WHERE started_at < ? AND {have}EXISTS"
        " (SELECT 1 FROM session_model_usage u WHERE u.session_id = s.id)"
        " ORDER BY started_at DESC LIMIT 1",
        [NOW - 60 * DAY],
    ).fetchone()
    db.close()
    return row


CHANGES = {
    "a counter": ("UPDATE sessions SET input_tokens = input_tokens + 1 WHERE id = ?", False),
    "a counter after the prompt": (
        "UPDATE sessions SET cache_read_tokens = cache_read_tokens + 7 WHERE id = ?",
        False,
    ),
    "the model, same length": (
        "UPDATE sessions SET model = substr(model, 1, length(model) - 1) || 'Z' WHERE id = ?",
        False,
    ),
    "the cost status": ("UPDATE sessions SET cost_status = 'included' WHERE id = ?", False),
    "its end": ("UPDATE sessions SET ended_at = ended_at + 3600 WHERE id = ?", False),
    "a usage row's counter": (
        "UPDATE session_model_usage SET output_tokens = output_tokens + 5 WHERE session_id = ?",
        True,
    ),
    "a usage row's model": (
        "UPDATE session_model_usage SET model = model || '-x' WHERE session_id = ?",
        True,
    ),
    "a usage row deleted": ("DELETE FROM session_model_usage WHERE session_id = ?", True),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_changed_day_is_computed_again_and_only_it(writable, monkeypatch, computed_days, change):
    window = Window(days=365)
    monkeypatch.setattr(blocks, "BLOCKS_FROM", 0)
    _kept(window)
    sql, with_usage = CHANGES[change]
    sid, started = _old_session(writable, with_usage)
    _change(writable, sql, [sid])
    computed_days.clear()
    after = _kept(window)
    # The template, then the changed session's day, alone.
    assert computed_days[1:] == [int(started) // DAY]
    _close(_figures(after), _figures(_plain(monkeypatch, window)))


def test_new_sessions_in_an_old_day_and_with_a_text_start_are_counted(
    writable, monkeypatch, computed_days
):
    window = Window(days=365)
    monkeypatch.setattr(blocks, "BLOCKS_FROM", 0)
    before = _kept(window)
    sid, started = _old_session(writable, False)
    _change(
        writable,
        "INSERT INTO sessions (id, source, model, started_at, ended_at, message_count,"
        " input_tokens, output_tokens) VALUES ('new-old', 'cli', 'm/x', ?, ?, 3, 10, 20)",
        [started + 1, started + 100],
    )
    _change(
        writable,
        "INSERT INTO sessions (id, source, started_at, message_count) VALUES"
        " ('text-start', 'cli', '2025-01-01 10:00', 2)",
    )
    computed_days.clear()
    after = _kept(window)
    assert computed_days[1:] == [int(started) // DAY]
    assert after.overview["total_sessions"] == before.overview["total_sessions"] + 2
    _close(_figures(after), _figures(_plain(monkeypatch, window)))


def test_kept_days_never_write_the_state_db(writable, monkeypatch):
    digest = hashlib.sha256(writable.read_bytes()).hexdigest()
    monkeypatch.setattr(blocks, "BLOCKS_FROM", 0)
    _kept(Window(days=365))
    _kept(Window(days=30))
    connections["hermes"].close()
    assert hashlib.sha256(writable.read_bytes()).hexdigest() == digest
    assert PassBlock.objects.exists()


def test_a_stored_block_with_another_digest_is_not_used(writable, monkeypatch, computed_days):
    window = Window(days=365)
    monkeypatch.setattr(blocks, "BLOCKS_FROM", 0)
    good = _kept(window)
    block = PassBlock.objects.order_by("day")[5]
    block.rows = block.rows.replace("1", "9")  # figures no longer those of the sessions
    block.digest = "0" * 64
    block.save()
    computed_days.clear()
    again = _kept(window)
    assert computed_days[1:] == [block.day]
    _close(_figures(again), _figures(good))


def test_an_unreadable_app_database_falls_back_to_the_plain_pass(writable, monkeypatch):
    from django.db import DatabaseError

    window = Window(days=365)
    plain = _plain(monkeypatch, window)

    def broken(*args, **kwargs):
        raise DatabaseError("app database down")

    monkeypatch.setattr(blocks, "_kept", broken)
    _close(_figures(_kept(window)), _figures(plain))


def _scope(bounds, span) -> Scope:
    return Scope(
        shape=None, where="1", params=(), sessions=10**6, time_bounds=bounds, started_span=span
    )


def test_whole_days_of_a_window():
    # 30 days back from a moment inside a day: the first partial day is left out, and the
    # last start's day too (it may still gain sessions).
    lo = 100 * DAY + 5
    assert blocks.whole_days(_scope((lo, None), (lo + 10, 130 * DAY + 7))) == (101, 130)
    # An upper bound before the last start ends the days there.
    assert blocks.whole_days(_scope((lo, 120 * DAY), (lo, 130 * DAY))) == (101, 120)
    # All time: from the first start.
    assert blocks.whole_days(_scope((None, None), (50 * DAY - 1, 60 * DAY))) == (50, 60)
    # Too few whole days, a start that is not a number, a filtered window: none.
    assert blocks.whole_days(_scope((lo, None), (lo, 102 * DAY))) is None
    assert blocks.whole_days(_scope((lo, None), (lo, "2025-01-01"))) is None
    assert blocks.whole_days(_scope(None, (lo, 130 * DAY))) is None


def test_windows_of_any_length_share_the_kept_days(writable, monkeypatch, computed_days):
    monkeypatch.setattr(blocks, "BLOCKS_FROM", 0)
    _kept(Window(days=365))
    computed_days.clear()
    short = _kept(Window(days=30))
    assert computed_days == [0]  # the template only: every whole day of 30 was kept
    _close(_figures(short), _figures(_plain(monkeypatch, Window(days=30))))


def test_insights_warm_keeps_the_days_of_both_passes(writable, monkeypatch, computed_days):
    from django.core.management import call_command

    from insights_app import figures

    monkeypatch.setattr(blocks, "BLOCKS_FROM", 0)
    call_command("insights_warm", "--no-failures", stdout=io.StringIO())
    names = set(PassBlock.objects.values_list("figures", flat=True))
    assert names == {
        ",".join(f.name for f in figures.FIGURES),
        ",".join(f.name for f in explorer.PREVIOUS_FIGURES),
    }
    computed_days.clear()
    _kept(Window(days=90))
    explorer.previous_report(explorer.previous_window(Window(days=30), NOW), NOW)
    assert set(computed_days) == {0}


def test_a_first_report_runs_the_plain_pass_and_keeps_the_days_beside(
    writable, monkeypatch, computed_days
):
    from hermes_explorer import lanes

    window = Window(days=365)
    plain = _plain(monkeypatch, window)
    monkeypatch.setattr(blocks, "MAX_DIRTY_DAYS", 16)
    ran_beside = []

    def at_once(work, **options):  # a lane that runs the work as soon as it is handed over
        ran_beside.append(work.__name__)
        result = work()
        return lambda: result

    monkeypatch.setattr(lanes, "beside", at_once)
    first = _kept(window)
    _close(_figures(first), _figures(plain))
    assert "keep" in ran_beside
    assert len(computed_days) > 20
    assert PassBlock.objects.count() == len(computed_days) - 1  # all but the template
    computed_days.clear()
    again = _kept(window)
    assert computed_days == [0]
    _close(_figures(again), _figures(plain))
    # Twenty days lost (more than a report computes itself): the plain pass again, and
    # exactly those days kept beside.
    lost = list(PassBlock.objects.order_by("day").values_list("day", flat=True)[10:30])
    PassBlock.objects.filter(day__in=lost).delete()
    computed_days.clear()
    ran_beside.clear()
    _close(_figures(_kept(window)), _figures(plain))
    assert "keep" in ran_beside
    assert sorted(computed_days[1:]) == lost
    assert not blocks._keeping


@pytest.mark.parametrize("shape", ["current", "legacy", "doc"])
def test_the_days_digest_covers_every_column_the_pass_reads(demo_stores, shape):
    """A column the pass reads but the fingerprints do not would let a changed day pass for
    unchanged: every ``s.<column>`` of the per-session rows is in the fingerprints."""
    import re

    from insights_app.figures.per_session import per_session
    from insights_app.localtime import OffsetSegments
    from insights_app.window import scope_of

    use_store(demo_stores(shape))
    try:
        scope = scope_of(Window(days=30), NOW)
        read = set(re.findall(r"\bs\.(\w+)", per_session(scope, OffsetSegments(first=0)).columns))
        assert read  # the pattern finds them
        assert read <= set(blocks._SESSION_NUMBERS) | set(blocks._SESSION_TEXTS)
    finally:
        connections["hermes"].close()
