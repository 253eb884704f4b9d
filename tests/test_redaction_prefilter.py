"""The one-pass prefilter is conservative: every text in which the engine's own gates find
something is a candidate, so a batch redacts the same with it and without it."""

from __future__ import annotations

import json
import random
import re

import pytest

from hermes_explorer.redaction import engine, prefilter, redact, redact_many
from hermes_explorer.redaction.rules import RULES

from .test_redaction import FRAGMENTS, OPENAI
from .test_redaction_shapes import CONTEXTS, SHAPES

pytest.importorskip("hyperscan")

# The literals of the gates the shared fragments leave out, so that every gate is met.
MORE = (
    *("A3T", "ABSK", "AKCp", "eyJrIjoi", "sntrys_eyJ", "rubygems_", "flwseck_test-", "tk-us-"),
    *("gocspx-", "xkeysib-", "gr1348941", "glsa_", "ks.slack.com/", "k.office.com/", "EAAM"),
    *("webhooks/", "accountkey=", "pypi-AgENdGVzdC5weXBpLm9yZw", "\\u2000", "\\uFEFF", "hvb."),
    *("Basic ", "basic\t", "cookie=", "Token ", "ghs_", "glft-", "xoxe.", "k_prod_", "\x1c"),
    *("credential", "AccountKey=", "api_org_", "a29.", "github_pat_", "-----BEGIN "),
)


@pytest.fixture(scope="module")
def one_pass():
    compiled = prefilter.compiled(engine.DECODE_GATE.pattern)
    assert compiled is not None, "hyperscan is installed: the prefilter must compile"
    return compiled


def _gated(text: str) -> bool:
    """Whether the engine's own scans find a gate (or an escape to decode) in ``text``."""
    return bool(engine.scan(text, engine.lowered(text))[0])


def _texts(seed: int, count: int = 3000) -> list[str]:
    rng = random.Random(seed)
    texts = [
        "".join(rng.choice(FRAGMENTS + MORE) for _ in range(rng.randint(0, 25)))
        for _ in range(count)
    ]
    texts += [json.dumps({"output": t}) for t in texts[: count // 5]]
    texts += [json.dumps([{"arguments": json.dumps({"command": t})}]) for t in texts[: count // 10]]
    return [t for t in texts if t.isascii()]


def _check(one_pass, texts: list[str]) -> int:
    found = one_pass.candidates(texts)
    gated = {k for k, t in enumerate(texts) if _gated(t)}
    assert gated <= found, [texts[k] for k in sorted(gated - found)][:5]
    return len(gated)


@pytest.mark.parametrize("context", CONTEXTS)
def test_every_shape_in_every_context_is_a_candidate(one_pass, context):
    texts = [CONTEXTS[context](text, secret) for _, text, secret in SHAPES]
    texts = [t for t in texts if t.isascii()]
    # Alone, and among clean texts in one batch.
    for text in texts:
        assert one_pass.candidates([text]) == {0}, text
    batch = [x for t in texts for x in ("nothing here", t)]
    assert one_pass.candidates(batch) >= set(range(1, len(batch), 2))


@pytest.mark.parametrize("seed", range(4))
def test_random_texts_the_gates_open_on_are_candidates(one_pass, seed):
    texts = _texts(seed)
    assert _check(one_pass, texts) > 1000
    # One at a time, too (a match is never lost at the edge of a batch).
    for text in texts[:400]:
        assert not _gated(text) or one_pass.candidates([text]) == {0}, text


def test_each_gate_is_met_by_the_random_texts(one_pass):
    """The random texts do exercise every pattern (else the test above proves little)."""
    texts = _texts(0) + _texts(1)
    texts += [CONTEXTS["plain"](t, s) for _, t, s in SHAPES]
    joined = "\n".join(texts)
    low = joined.lower()
    for rule in RULES:
        for gate in rule.gates:
            assert re.search(gate, low), gate
        for gate in rule.raw_gates:
            assert re.search(gate, joined), gate


def test_white_space_is_python_s(one_pass):
    """``\\s`` in a gate is Python's: the ASCII separators \\x1c-\\x1f count."""
    for space in " \t\n\x0b\x0c\r\x1c\x1d\x1e\x1f":
        text = f"Authorization: Bearer{space}abcDEF0123456789ghiJKL"
        assert _gated(text)
        assert one_pass.candidates([text]) == {0}, repr(space)


def test_relaxed_patterns_keep_every_match_end():
    """Each rewrite keeps the places where the gate's matches end (checked with Python's re
    on random texts: a lookbehind folded in, a prefix moved into a group, ``\\s`` spelled)."""
    texts = _texts(7, 800)
    low = "\n".join(texts).lower()
    raw = "\n".join(texts)
    for rule in RULES:
        for gates, hay in ((rule.gates, low), (rule.raw_gates, raw)):
            for gate in gates:
                relaxed = re.compile(prefilter.relaxed(gate))
                ends = {m.end() for m in _all_matches(re.compile(gate), hay)}
                kept = {m.end() for m in _all_matches(relaxed, hay)}
                assert ends <= kept, gate


def _all_matches(regex: re.Pattern, text: str):
    for at in range(len(text)):
        m = regex.match(text, at)
        if m:
            yield m


def test_relaxing_folds_lookbehinds_and_moves_prefixes():
    assert prefilter.relaxed("k-(?<=sk-)") == "sk-"
    assert prefilter.relaxed("key(?:(?<=[eist]key)|(?<=[eist][_\\-]key))=") == (
        "(?:[eist]key|[eist][_\\-]key)="
    )
    assert prefilter.relaxed("a(?:b|(?<=xa))") == "(?:ab|xa)"
    # A lookbehind that does not restate what precedes it is dropped (more matches, never
    # fewer).
    assert prefilter.relaxed("ab(?<=[0-9]c)d") == "abd"


@pytest.mark.parametrize("seed", range(3))
def test_a_batch_redacts_the_same_with_and_without_the_prefilter(monkeypatch, seed):
    texts = _texts(seed, 1500)
    texts += [f"x{i} OPENAI_API_KEY={OPENAI}" for i in range(20)]
    texts += ["東京 DB_PASSWORD=hunter2hunter2", None, 3, ""]
    random.Random(seed).shuffle(texts)
    fast = redact_many(texts)
    monkeypatch.setattr(prefilter, "_COMPILED", [None])
    assert redact_many(texts) == fast
    assert fast == [redact(t) for t in texts]


def test_the_compiled_automaton_is_kept_and_loaded_by_the_next_process(tmp_path, monkeypatch):
    texts = ["nothing here", f"key {OPENAI} end", "AKIA" + "A" * 16, "plain"]
    first = prefilter._build(engine.DECODE_GATE.pattern, tmp_path)
    kept = list(tmp_path.glob("redaction-prefilter-*.hsdb"))
    assert len(kept) == 1 and kept[0].stat().st_size > 1000
    assert not list(tmp_path.glob(".prefilter-*")), "no temporary file is left behind"

    import hyperscan

    def no_compiling(*args, **kwargs):
        raise AssertionError("a kept automaton is loaded, not compiled again")

    with monkeypatch.context() as m:
        m.setattr(hyperscan, "Database", no_compiling)
        second = prefilter._build(engine.DECODE_GATE.pattern, tmp_path)
    assert second is not None
    assert second.candidates(texts) == first.candidates(texts) == {1, 2}


def test_a_kept_automaton_that_does_not_load_is_compiled_again_and_replaced(tmp_path):
    prefilter._build(engine.DECODE_GATE.pattern, tmp_path)
    (kept,) = tmp_path.glob("redaction-prefilter-*.hsdb")
    kept.write_bytes(b"not an automaton")
    again = prefilter._build(engine.DECODE_GATE.pattern, tmp_path)
    assert again is not None and again.candidates([f"x {OPENAI}"]) == {0}
    assert kept.stat().st_size > 1000, "the bad file is replaced by a good one"


def test_an_unwritable_folder_only_costs_the_keeping(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        built = prefilter._build(engine.DECODE_GATE.pattern, folder / "cache")
        assert built is not None and built.candidates([f"x {OPENAI}"]) == {0}
    finally:
        folder.chmod(0o700)


def test_warm_up_readies_the_prefilter_and_opens_no_database(tmp_path, settings, monkeypatch):
    from django.db import connections

    from hermes_explorer import warmup

    opened = {alias for alias in connections if connections[alias].connection is not None}
    settings.DATA_DIR = tmp_path
    monkeypatch.setattr(prefilter, "_COMPILED", [])
    monkeypatch.setattr(warmup.gc, "freeze", lambda: None)  # keep the test process as it was
    warmup.warm_up()
    assert prefilter._COMPILED and prefilter._COMPILED[0] is not None
    assert list((tmp_path / "cache").glob("redaction-prefilter-*.hsdb"))
    assert {alias for alias in connections if connections[alias].connection is not None} <= opened


def test_warm_up_fills_every_namespace_resolver_in_every_language(monkeypatch, settings):
    from django.urls import resolvers, reverse
    from django.utils import translation

    from hermes_explorer import warmup

    monkeypatch.setattr(warmup.gc, "freeze", lambda: None)
    warmup.warm_up()
    filled = []
    real = resolvers.URLResolver._populate
    monkeypatch.setattr(
        resolvers.URLResolver, "_populate", lambda self: filled.append(self) or real(self)
    )
    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            reverse("sessions:list")
            reverse("insights:index")
            reverse("accounts:tokens")
    assert filled == []  # the first request's links find them filled
