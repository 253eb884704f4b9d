"""One definition of a language's numbers, money and dates: its format module under
``hermes_explorer/formats``, read through Django's ``get_format`` by ``sessions_app.formatting``
and by nothing else."""

from __future__ import annotations

import ast
import datetime as dt
import textwrap
from pathlib import Path

import pytest
from django.conf import settings
from django.test import override_settings
from django.utils import formats, translation

from insights_app import charts
from sessions_app import formatting
from sessions_app.exports.http import spreadsheet_style
from sessions_app.templatetags import explorer

ROOT = Path(__file__).resolve().parent.parent

# A made-up German, every name the English module defines, none of them like English or French:
# dots group digits (the decimal separator is a comma), and its short date has letters
# ``strftime`` does not write the same (``j``, ``n``).
GERMAN = """
    SHORT_DATE_FORMAT = "j.n.Y"
    SHORT_DATETIME_FORMAT = "d.m.Y H:i"
    YEAR_MONTH_FORMAT = "F Y"
    DECIMAL_SEPARATOR = ","
    THOUSAND_SEPARATOR = "."
    LONG_DATE_FORMAT = "j. F Y"
    WEEK_DATE_FORMAT = "d.m."
    CHART_DAY_FORMAT = "D, j. F Y"
    DAY_TICK_FORMAT = "j.n."
    MONTH_TICK_FORMAT = "m/y"
    MONTH_LABEL_FORMAT = "F Y"
    MONEY_FORMAT = "%s US-$"
    COMPACT_SUFFIXES = (" Tsd.", " Mio.", " Mrd.")
    DURATION_UNITS = (" Std.", " Min.", " Sek.")
"""


def _forget_formats():
    formats.reset_format_cache()
    formatting._formats.cache_clear()


@pytest.fixture
def german(tmp_path, monkeypatch):
    """Formats for ``de`` (a language Django has a catalog for) in a package of the test's own,
    named by ``FORMAT_MODULE_PATH``: no code of the explorer knows it."""
    (tmp_path / "made_up_formats" / "de").mkdir(parents=True)
    for folder in ("made_up_formats", "made_up_formats/de"):
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "made_up_formats" / "de" / "formats.py").write_text(textwrap.dedent(GERMAN))
    monkeypatch.syspath_prepend(str(tmp_path))
    _forget_formats()
    with override_settings(FORMAT_MODULE_PATH=["made_up_formats"]), translation.override("de"):
        yield
    _forget_formats()


def test_a_third_language_needs_only_its_format_module(german):
    moment = dt.datetime(2026, 11, 3, 14, 5, 9)
    assert formatting.number(1234567) == "1.234.567"
    assert formatting.number(1234567.25, 2) == "1.234.567,25"
    assert formatting.decimal(12.34) == "12,3"
    assert formatting.usd(1234.5, 2) == "1.234,50 US-$"
    assert formatting.compact(2_500_000) == "2,5 Mio."
    assert formatting.duration(3900) == "1 Std. 05 Min."
    assert formatting.seconds_text(4.25) == "4,2\xa0s"
    assert formatting.datetime_text(moment, seconds=True) == "03.11.2026 14:05:09"
    assert formatting.iso_text("2026-11-03T14:05:09+01:00") == "03.11.2026 14:05:09"
    assert formatting.date_text(moment.date()) == "3.11.2026"
    assert formatting.long_date_text(moment.date()) == "3. November 2026"
    assert formatting.chart_day_label(moment.date()) == ("Di, 3. November 2026", "3.11.")
    assert formatting.date_format(moment.date(), "MONTH_TICK_FORMAT") == "11/26"
    assert explorer.month_label("2026-11") == "November 2026"
    assert explorer.notable_value({"metric": "messages", "raw_value": 1234, "value": "x"}) == (
        "1.234 msgs"
    )
    label, buckets = charts.buckets([], dt.date(2025, 1, 1), dt.date(2026, 4, 20))
    assert label == "week" and buckets[1].label == "week of 06.01."
    # A decimal comma: spreadsheets get ``;`` between the fields.
    assert spreadsheet_style() == "spreadsheet_semicolon"


def test_english_and_french_charts_months_and_cells():
    """What English and French pages wrote before their formats moved to the format modules."""
    day, week = dt.date(2026, 11, 30), dt.date(2025, 1, 1)
    with translation.override("en"):
        assert charts.buckets([], week, dt.date(2026, 4, 20))[1][1].label == "week of Jan 06, 2025"
        assert charts.buckets([], day, day)[1][0].label == "Mon Nov 30, 2026"
        assert explorer.month_label("2026-11") == "2026-11"
        assert explorer.notable_value(
            {"metric": "longest", "raw_value": 11100, "value": "3h 5m"}
        ) == ("3h 5m")
        assert spreadsheet_style() == "spreadsheet"
        assert formatting.iso_text("2026-11-30T14:05:09+01:00") == "2026-11-30 14:05:09"
    with translation.override("fr"):
        assert charts.buckets([], week, dt.date(2026, 4, 20))[1][1].label == (
            "semaine du 6\xa0jan.\xa02025"
        )
        assert explorer.month_label("2026-11") == "novembre 2026"
        assert explorer.month_label("2026-13") == "2026-13"
        assert explorer.notable_value({"metric": "longest", "raw_value": 11100, "value": "x"}) == (
            "3\xa0h 05\xa0min"
        )
        assert spreadsheet_style() == "spreadsheet_semicolon"
        assert formatting.iso_text("2026-11-30T14:05:09+01:00") == "30/11/2026 14:05:09"
        assert formatting.seconds_text(4.25, formatting.page_formats()) == "4,2\xa0s"
        assert str(explorer.time_html(0, seconds=True)).endswith(">01/01/1970 00:00:00</time>")


def test_every_language_names_every_format_of_the_explorer():
    from hermes_explorer.formats.en import formats as english

    names = {name for name in vars(english) if name.isupper()}
    for code, _name in settings.LANGUAGES:
        module = __import__(f"hermes_explorer.formats.{code}.formats", fromlist=["formats"])
        assert names <= set(vars(module)), (code, names - set(vars(module)))


def _language_tests(path: Path) -> list[str]:
    """Where ``path`` decides by the page's language: ``french``, or the language (a call of
    ``get_language``/``language``, or a code of ``settings.LANGUAGES``) compared or prefixed."""
    codes = {code for code, _name in settings.LANGUAGES}
    tree = ast.parse(path.read_text(), str(path))

    def about_language(node) -> bool:
        for inner in ast.walk(node):
            if isinstance(inner, ast.Call):
                func = inner.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name in ("get_language", "language"):
                    return True
            if isinstance(inner, ast.Constant) and inner.value in codes:
                return True
        return False

    found = []
    for node in ast.walk(tree):
        named = getattr(node, "id", None) or getattr(node, "attr", None)
        if named == "french":
            found.append(f"{path}:{node.lineno}: french")
        elif isinstance(node, ast.Compare) and about_language(node):
            found.append(f"{path}:{node.lineno}: {ast.unparse(node)}")
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", "") in ("startswith", "split", "partition")
            and about_language(node)
        ):
            found.append(f"{path}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_runtime_module_but_formatting_tests_the_language():
    runtime = [
        path
        for package in ROOT.glob("*/__init__.py")
        if package.parent.name not in ("tests", "bench")
        for path in package.parent.rglob("*.py")
        if "migrations" not in path.parts
    ]
    assert len(runtime) > 50
    skip = {ROOT / "sessions_app" / "formatting.py", ROOT / "hermes_explorer" / "settings.py"}
    found = [hit for path in runtime if path not in skip for hit in _language_tests(path)]
    assert found == []
    # The check finds what it looks for.
    assert _language_tests(ROOT / "sessions_app" / "formatting.py")
