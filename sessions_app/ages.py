"""A moment's age in words ("3 hours ago", "il y a 2 jours"), as Django's ``naturaltime``
writes it, with its translated words looked up once per language and count.

The tables show an age on every row; ``naturaltime`` translates two or three plural phrases
for each (a catalog lookup through a lazy proxy every time).  Here the same formatter runs with
its phrases wrapped so that each (language, phrase, values) is translated once and then read
from a dictionary: the text is the same, the calendar arithmetic is still Django's.
"""

from __future__ import annotations

from django.contrib.humanize.templatetags.humanize import NaturalTimeFormatter
from django.utils import translation

from .formatting import language

# Distinct (language, phrase, values) kept before the cache starts again.
CACHE_LIMIT = 4096


class _Remembered:
    """A lazily translated phrase whose ``phrase % values`` is remembered per language."""

    __slots__ = ("phrase", "texts")

    def __init__(self, phrase) -> None:
        self.phrase = phrase
        self.texts: dict[tuple, str] = {}

    def __mod__(self, values: dict) -> str:
        lang = language()
        key = (lang, *values.values())
        text = self.texts.get(key)
        if text is None:
            if len(self.texts) > CACHE_LIMIT:
                self.texts.clear()
            with translation.override(lang):
                text = self.texts[key] = str(self.phrase % values)
        return text

    def __str__(self) -> str:
        return str(self.phrase)


def _remembered(phrases: dict) -> dict:
    return {name: _Remembered(phrase) for name, phrase in phrases.items()}


class _Formatter(NaturalTimeFormatter):
    time_strings = _remembered(NaturalTimeFormatter.time_strings)
    past_substrings = _remembered(NaturalTimeFormatter.past_substrings)
    future_substrings = _remembered(NaturalTimeFormatter.future_substrings)


def natural_age(moment) -> str:
    """``naturaltime(moment)`` as text in the page's language."""
    return str(_Formatter.string_for(moment))
