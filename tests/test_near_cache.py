"""The per-process copy of shared-cache entries that cannot go stale (near_cache.py)."""

from __future__ import annotations

import pytest
from django.core.cache import caches

from hermes_explorer import near_cache
from insights_app import reports
from insights_app.stats import Report


@pytest.fixture(autouse=True)
def _empty():
    caches["default"].clear()
    yield
    caches["default"].clear()


def test_an_entry_read_once_is_read_again_without_the_shared_cache():
    caches["default"].set("near-test:a", {"n": 1}, 60)
    assert near_cache.get("near-test:a", timeout=60) == {"n": 1}
    caches["default"].delete("near-test:a")
    assert near_cache.get("near-test:a", timeout=60) == {"n": 1}


def test_a_set_goes_to_the_shared_cache_too():
    near_cache.set("near-test:b", [1, 2], 60)
    assert caches["default"].get("near-test:b") == [1, 2]


def test_false_and_zero_are_values_not_misses():
    near_cache.set("near-test:f", False, 60)
    near_cache.set("near-test:z", 0, 60)
    caches["default"].delete_many(["near-test:f", "near-test:z"])
    assert near_cache.get("near-test:f", timeout=60) is False
    assert near_cache.get("near-test:z", timeout=60) == 0


def test_each_read_is_a_copy_that_cannot_change_another_readers():
    near_cache.set("near-test:c", {"rows": [1]}, 60)
    got = near_cache.get("near-test:c", timeout=60)
    got["rows"].append(2)
    assert near_cache.get("near-test:c", timeout=60) == {"rows": [1]}


def test_a_copy_ends_with_its_lifetime(monkeypatch):
    clock = [1_000.0]
    monkeypatch.setattr(near_cache.time, "time", lambda: clock[0])
    near_cache.set("near-test:d", "v", 30)
    caches["default"].delete("near-test:d")
    clock[0] += 29
    assert near_cache.get("near-test:d", timeout=30) == "v"
    clock[0] += 2
    assert near_cache.get("near-test:d", timeout=30) is None


def test_a_stamped_entry_ends_at_the_moment_stored_with_it_in_every_worker(monkeypatch):
    clock = [1_000.0]
    monkeypatch.setattr(near_cache.time, "time", lambda: clock[0])
    near_cache.set_stamped("near-test:s", ["telegram"], 300)
    assert caches["default"].get("near-test:s") == (1_300.0, ["telegram"])
    near_cache.clear()  # another worker: only the shared entry
    clock[0] += 250
    assert near_cache.get_stamped("near-test:s") == ["telegram"]
    clock[0] += 60  # past the stored moment: this worker's copy ends with it
    assert near_cache.get_stamped("near-test:s") is None


def test_a_stamped_read_of_a_value_kept_otherwise_is_a_miss():
    caches["default"].set("near-test:old", ["cli"], 60)
    assert near_cache.get_stamped("near-test:old") is None


def test_a_report_copy_ends_report_ttl_after_it_was_computed(monkeypatch):
    clock = [5_000.0]
    monkeypatch.setattr(near_cache.time, "time", lambda: clock[0])
    report = Report(window=None, now=4_950.0, lo=None, hi=None, generated_at=4_950.0)
    reports.keep_report("near-test:r", report)
    caches["default"].delete("near-test:r")
    clock[0] = 4_950.0 + reports.REPORT_TTL - 1
    assert reports.cached_report("near-test:r").generated_at == 4_950.0
    clock[0] = 4_950.0 + reports.REPORT_TTL + 1
    assert reports.cached_report("near-test:r") is None


def test_the_copies_are_bounded_in_bytes_least_recently_used_first_out(settings):
    settings.NEAR_CACHE_BYTES = 64 * 1024
    for i in range(20):
        near_cache.set(f"near-test:big{i}", "x" * 5_000, 60)
        caches["default"].delete(f"near-test:big{i}")
    assert near_cache._size <= 64 * 1024
    assert near_cache.get("near-test:big19", timeout=60) is not None
    assert near_cache.get("near-test:big0", timeout=60) is None
    near_cache.set("near-test:huge", "x" * 64 * 1024, 60)
    caches["default"].delete("near-test:huge")
    assert near_cache.get("near-test:huge", timeout=60) is None, "too large to keep here"


def test_no_copies_when_turned_off(settings):
    settings.NEAR_CACHE_BYTES = 0
    near_cache.set("near-test:off", 1, 60)
    caches["default"].delete("near-test:off")
    assert near_cache.get("near-test:off", timeout=60) is None


def test_clearing_the_shared_cache_forgets_this_processs_copies():
    near_cache.set("near-test:e", 1, 60)
    caches["default"].clear()
    assert near_cache.get("near-test:e", timeout=60) is None
