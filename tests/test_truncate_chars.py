"""The explorer's cut of a text equals Django's ``Truncator(...).chars`` in every language,
on ASCII text (cut by slicing) and on any other text (through ``Truncator``)."""

from __future__ import annotations

import random

import pytest
from django.utils import translation
from django.utils.text import Truncator

from sessions_app import formatting

TEXTS = [
    "",
    "a",
    "short",
    "exactly ten",
    "x" * 89,
    "x" * 90,
    "x" * 91,
    "ends with the mark…",
    "ends with dots...",
    '{"id": "call_1", "function": {"name": "terminal", "arguments": "{\\"cmd\\": \\"ls\\"}"}}' * 9,
    "é" * 95,
    "cafe\u0301 " * 40,  # combining accents
    "emoji 🙂 " * 30,
    "tabs\tand\nnewlines " * 20,
]


@pytest.mark.parametrize("language", ["en", "fr"])
def test_the_cut_equals_djangos(language):
    rng = random.Random(7)
    samples = list(TEXTS) + [
        "".join(rng.choice("ab c.…\u0301é") for _ in range(rng.randrange(0, 140)))
        for _ in range(200)
    ]
    with translation.override(language):
        truncate = formatting._truncation()
        for text in samples:
            for length in (1, 2, 3, 10, 90, 200):
                assert formatting.truncate_chars(text, length) == Truncator(text).chars(
                    length, truncate=truncate
                ), (text, length)


def test_a_value_that_is_not_text_is_cut_as_django_cuts_it():
    assert formatting.truncate_chars(12345678, 4) == Truncator(12345678).chars(
        4, truncate=formatting._truncation()
    )
