"""The explorer in French and English: the catalog is complete and in sync with the sources,
pages read in the language the person asked for, numbers and dates follow it, and the
spreadsheet CSV of a French page opens as columns.

The leftover-English check reads the visible text of each page (and the attributes people
read: titles, labels, placeholders) outside the store's own data (message text, titles, ids,
code), and fails on the explorer's English UI words and phrases.
"""

from __future__ import annotations

import csv
import io
import re
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.db import connections
from django.test import Client
from django.urls import reverse
from django.utils import translation

from sessions_app import formatting
from tests.conftest import use_store
from tests.roles_helpers import make_user

ROOT = Path(__file__).resolve().parents[1]
FRENCH_PO = ROOT / "locale" / "fr" / "LC_MESSAGES" / "django.po"
DBS = pytest.mark.django_db(databases=["default", "hermes"])
FR = {"HTTP_ACCEPT_LANGUAGE": "fr-FR,fr;q=0.9,en;q=0.5"}
EN = {"HTTP_ACCEPT_LANGUAGE": "en-US,en;q=0.9"}


# The catalog -------------------------------------------------------------------------------
def test_every_marked_string_has_a_french_translation():
    catalog = polib.pofile(str(FRENCH_PO))
    assert len(catalog) > 500
    untranslated = [e.msgid for e in catalog.untranslated_entries()]
    fuzzy = [e.msgid for e in catalog.fuzzy_entries()]
    assert not untranslated, f"{len(untranslated)} strings without French: {untranslated[:10]}"
    assert not fuzzy, f"{len(fuzzy)} fuzzy French strings: {fuzzy[:10]}"


def test_translations_keep_their_placeholders():
    placeholder = re.compile(r"%\([a-z_]+\)s|%%|\{n\}")
    for entry in polib.pofile(str(FRENCH_PO)):
        wanted = set(placeholder.findall(entry.msgid_plural or entry.msgid))
        forms = entry.msgstr_plural or {0: entry.msgstr}
        for index, text in forms.items():
            found = set(placeholder.findall(text))
            # A French singular may spell out the number ("Dernier jour").
            if entry.msgid_plural and int(index) == 0:
                assert found <= wanted, entry.msgid
            else:
                assert found == wanted, (entry.msgid, text)


def test_the_catalog_compiles_with_django_and_gettext(tmp_path):
    """``manage.py compilemessages`` (what ``make run`` and ``make test`` do) makes the .mo;
    the .mo is not in git."""
    import shutil

    assert shutil.which("msgfmt"), "gettext is installed by the project's own commands"
    check = subprocess.run(
        ["msgfmt", "--check", "-o", str(tmp_path / "x.mo"), str(FRENCH_PO)],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stderr
    tracked = subprocess.run(
        ["git", "ls-files", "locale"], cwd=ROOT, capture_output=True, text=True
    ).stdout.split()
    assert not [t for t in tracked if t.endswith(".mo")]


def test_catalog_is_in_sync_with_the_sources(tmp_path):
    """makemessages over the sources finds exactly the catalog's strings: a new string is not
    left untranslated and a removed one does not linger."""
    if subprocess.run(["which", "xgettext"], capture_output=True).returncode != 0:
        pytest.skip("xgettext (the gettext package) is not installed")
    copy = tmp_path / "src"
    ignore = {".git", ".venv", "var", "test-artifacts", "locale", "node_modules", ".pytest_cache"}
    copy.mkdir()
    for item in ROOT.iterdir():
        if item.name in ignore:
            continue
        (copy / item.name).symlink_to(item)
    (copy / "locale").mkdir()
    env = {
        "PATH": "/usr/bin:/bin",
        "DJANGO_DEBUG": "1",
        "DJANGO_SETTINGS_MODULE": "hermes_explorer.settings",
        "HERMES_EXPLORER_DATA_DIR": str(tmp_path / "data"),
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "makemessages", "-l", "fr", "--no-location", "--symlinks"]
        + [f"--ignore={d}/*" for d in ("tests", "bench", "hermes_fixtures", "docs", "var")],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    fresh = polib.pofile(str(copy / "locale" / "fr" / "LC_MESSAGES" / "django.po"))
    ours = polib.pofile(str(FRENCH_PO))
    keys = {(e.msgctxt, e.msgid) for e in fresh if e.msgid}
    have = {(e.msgctxt, e.msgid) for e in ours if e.msgid and not e.obsolete}
    assert not keys - have, f"marked but not in the catalog: {sorted(keys - have)[:10]}"
    assert not have - keys, f"in the catalog but no longer marked: {sorted(have - keys)[:10]}"


# Formats -----------------------------------------------------------------------------------
def test_numbers_money_and_durations_follow_the_language():
    with translation.override("en"):
        assert formatting.number(1234567) == "1,234,567"
        assert formatting.usd(1234.5, 2) == "$1,234.50"
        assert formatting.compact(1_234_567) == "1.2M"
        assert formatting.duration(3900) == "1h 05m"
    with translation.override("fr"):
        assert formatting.number(1234567) == "1\xa0234\xa0567"
        assert formatting.number(1234.56, 2) == "1\xa0234,56"
        assert formatting.usd(12.34, 2) == "12,34\xa0$US"
        assert formatting.usd(1234.5, 2) == "1\xa0234,50\xa0$US"
        assert formatting.compact(1_234_567) == "1,2\xa0M"
        assert formatting.duration(3900) == "1\xa0h 05\xa0min"


def test_dates_follow_the_language():
    import datetime as dt

    moment = dt.datetime(2026, 11, 30, 14, 5, 9)
    with translation.override("en"):
        assert formatting.datetime_text(moment) == "2026-11-30 14:05"
        assert formatting.long_date_text(moment.date()) == "Nov 30, 2026"
        assert formatting.month_text(moment.date()) == "November 2026"
    with translation.override("fr"):
        assert formatting.datetime_text(moment) == "30/11/2026 14:05"
        assert formatting.datetime_text(moment, seconds=True) == "30/11/2026 14:05:09"
        assert formatting.long_date_text(moment.date()) == "30\xa0nov.\xa02026"
        assert formatting.month_text(moment.date()) == "novembre 2026"
        assert formatting.chart_day_label(moment.date())[0].startswith("lun")


# Pages -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def demo_store(tmp_path_factory):
    from hermes_fixtures.demo import build_demo_db

    path = tmp_path_factory.mktemp("i18n") / "demo.db"
    build_demo_db(path, sessions=40, messages=1500, seed=5, days=20, now=time.time())
    return path


@pytest.fixture
def demo(demo_store):
    use_store(demo_store)
    yield demo_store
    connections["hermes"].close()


@pytest.fixture
def staff():
    client = Client()
    client.force_login(make_user("staff", "staff-i18n"))
    return client


class VisibleText(HTMLParser):
    """The text a person reads, minus the store's data: message bodies, snippets, titles
    and previews, ids, code and tool or model names."""

    SKIP_TAGS = {"script", "style", "pre", "code", "textarea", "datalist", "option", "title"}
    SKIP_CLASSES = {
        "snippet",
        "preview",
        "untitled",
        "tool-name",
        "tool-badge",
        "source",
        "chart-label",
        "hit-link",
        "session-head",
        "who",
        "store-banner",
        "fields",
    }
    VOID = {"br", "img", "input", "meta", "link", "hr", "rect", "line", "path", "circle"}
    READ_ATTRS = ("title", "aria-label", "placeholder", "alt")

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[bool] = []
        self.parts: list[str] = []
        self.structural: list[str] = []
        self.struct_depth = 0

    def _skipping(self) -> bool:
        return any(self.stack)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = set((attrs.get("class") or "").split())
        href = attrs.get("href") or ""
        # Links into one session carry its title: data.
        data_link = tag == "a" and re.match(r"^/sessions/[^/?]+/", href)
        skip = tag in self.SKIP_TAGS or bool(classes & self.SKIP_CLASSES) or bool(data_link)
        if not self._skipping() and not skip:
            for name in self.READ_ATTRS:
                if attrs.get(name):
                    self.parts.append(attrs[name])
        if tag in self.VOID:
            return
        self.stack.append(skip)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        if self.stack:
            self.stack.pop()

    def handle_data(self, data):
        if not self._skipping() and data.strip():
            self.parts.append(data.strip())


def visible_text(html: str) -> str:
    parser = VisibleText()
    parser.feed(html)
    return "\n".join(parser.parts)


# English UI phrases and words the French pages must not show (whole words, case-sensitive).
ENGLISH_UI = [
    "Sign out",
    "Sign in",
    "Skip to content",
    "API tokens",
    "Overview",
    "Insights",
    "Failures",
    "Search",
    "Filter",
    "Reset",
    "Show",
    "Started",
    "Ended",
    "Tokens",
    "Cost",
    "Model",
    "Tool",
    "Tools",
    "Duration",
    "Title",
    "Previous",
    "Next",
    "First page",
    "Download",
    "Copy",
    "Reasoning",
    "Transcript",
    "Details",
    "Usage",
    "Lineage",
    "Platform",
    "Platforms",
    "Skills",
    "Activity",
    "Time",
    "Role",
    "Content",
    "Summary",
    "Latest",
    "Estimated",
    "estimated",
    "per session",
    "Last activity",
    "Tool calls",
    "tool calls",
    "API calls",
    "cache read",
    "cache write",
    "read-only",
    "not a bill",
    "Demo data",
    "no content",
    "never closed",
    "clock drift",
    "ran out of time",
    "No session",
    "No message",
    "No tool",
    "Nothing",
    "Untitled",
    "Apply",
    "Show also",
    "Which messages",
    "main loop",
    "over time",
    "Over time",
    "Busiest",
    "busiest",
    "active day",
    "the",
    "and",
    "with",
    "of",
    "per",
    "Mon",
    "Tue",
    "Wed",
    "Sun",
    "January",
    "February",
    "March",
    "November",
    "December",
]
ENGLISH_PATTERN = re.compile(
    r"(?<![\w/.-])(?:" + "|".join(map(re.escape, ENGLISH_UI)) + r")(?![\w/-])"
)


def english_leftovers(html: str, data: frozenset[str] = frozenset()) -> list[str]:
    """English UI words in the page's visible text; lines holding ``data`` (session
    titles of the store) are the store's words, not the explorer's."""
    text = visible_text(html)
    found = []
    for line in text.splitlines():
        if any(item in line for item in data):
            continue
        for match in ENGLISH_PATTERN.finditer(line):
            found.append(f"{match.group(0)!r} in {line[:120]!r}")
    return found


def french_pages(client) -> dict[str, str]:
    """The main pages, fetched in French: {url: html}."""
    from annotations_app.models import Note, Tag
    from sessions_app.models import Message, Session

    session = Session.objects.using("hermes").order_by("-started_at").first()
    message = Message.objects.using("hermes").filter(session_id=session.id).order_by("id").first()
    # The session's annotations panel with a star, a tag and a note (the staff's own).
    tag = Tag.objects.create(name="incident", colour="red", description="Things that broke")
    for name, data in (("star", {}), ("add_tag", {"tag": tag.pk}), ("add_note", {"text": "x"})):
        client.post(reverse(f"annotations:{name}", args=[session.id]), data, **FR)
    note = Note.objects.first()
    urls = [
        reverse("annotations:tags"),
        reverse("annotations:tag_edit", args=[tag.pk]),
        reverse("annotations:views"),
        reverse("annotations:orphans"),
        reverse("annotations:edit_note", args=[note.pk]),
        reverse("sessions:list") + "?tag=incident&starred=1",
        "/",
        reverse("sessions:list"),
        reverse("sessions:list") + "?source=none-such",
        reverse("sessions:detail", args=[session.id]),
        reverse("messages:list"),
        reverse("search:results"),
        reverse("search:results") + "?q=deploy",
        reverse("search:results") + "?q=zzqqxxnothing",
        reverse("insights:index"),
        reverse("insights:index") + "?days=all",
        reverse("live:index"),
        reverse("failures:index"),
        reverse("failures:index") + "?days=365&kind=tool_error",
        reverse("sessions:timeline", args=[session.id]),
        reverse("people:list") + "?days=365",
        reverse("review:scores"),
        reverse("review:next"),
        reverse("accounts:tokens"),
        reverse("sql:console"),
        reverse("sql:saved"),
        "/state",
        # The page of an old URL shows stored text in its cells: none here.
        "/state/sessions?source=none-such",
        "/sessions/no-such-session/",
    ]
    if message is not None:
        urls.append(reverse("sessions:message", args=[session.id, message.id]))
    pages = {}
    for url in urls:
        response = client.get(url, follow=True, **FR)
        assert response.status_code in (200, 404), (url, response.status_code)
        pages[url] = response.content.decode()
    return pages


@DBS
def test_main_pages_read_in_french(demo, staff):
    from sessions_app.models import Session

    titles = frozenset(
        t for t in Session.objects.using("hermes").values_list("title", flat=True) if t
    )
    leftovers = {}
    for url, html in french_pages(staff).items():
        assert '<html lang="fr"' in html, url
        found = english_leftovers(html, titles)
        if found:
            leftovers[url] = found[:40]
    report = "\n".join(f"{url}: {item}" for url, items in leftovers.items() for item in items)
    assert not leftovers, report


@DBS
def test_signed_out_pages_read_in_french(demo):
    client = Client()
    login = client.get(reverse("login"), **FR).content.decode()
    assert "Se connecter" in login and "Nom d’utilisateur" in login
    assert not english_leftovers(login), english_leftovers(login)
    bad = client.post(reverse("login"), {"username": "x", "password": "y"}, **FR)
    assert "Saisissez un nom d’utilisateur et un mot de passe valides" in bad.content.decode()


@DBS
def test_french_numbers_and_dates_on_pages(demo, staff):
    html = staff.get(reverse("sessions:list"), **FR).content.decode()
    assert re.search(r"\d{2}/\d{2}/\d{4} \d{2}:\d{2}", html)
    assert "il y a" in html
    assert "$US" in html
    insights = staff.get(reverse("insights:index") + "?days=all", **FR).content.decode()
    assert re.search(r"\d\xa0\d{3}", insights) or re.search(r"\d&nbsp;\d{3}", insights)
    assert ">lun<" in insights or "lun " in insights


@DBS
def test_english_stays_english(demo, staff):
    html = staff.get(reverse("sessions:list"), **EN).content.decode()
    assert '<html lang="en"' in html
    assert "Sign out" in html and "Sessions" in html and "Se déconnecter" not in html
    assert re.search(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", html)
    # No Accept-Language at all: the default, English.
    assert '<html lang="en"' in staff.get("/").content.decode()


@DBS
def test_unknown_language_falls_back_to_english(demo, staff):
    html = staff.get("/", HTTP_ACCEPT_LANGUAGE="de-DE,de;q=0.9").content.decode()
    assert '<html lang="en"' in html


@DBS
def test_switch_sets_and_remembers_the_language(demo, staff):
    page = staff.get(reverse("sessions:list"), **EN).content.decode()
    assert 'action="/i18n/setlang/"' in page and 'name="language" value="fr"' in page
    response = staff.post(
        reverse("set_language"), {"language": "fr", "next": reverse("sessions:list")}, **EN
    )
    assert response.status_code == 302 and response["Location"] == reverse("sessions:list")
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "fr"
    # The choice beats the browser's English from now on.
    again = staff.get(reverse("sessions:list"), **EN).content.decode()
    assert '<html lang="fr"' in again and "Se déconnecter" in again
    staff.post(reverse("set_language"), {"language": "en", "next": "/"}, **FR)
    assert '<html lang="en"' in staff.get("/", **FR).content.decode()


@DBS
def test_switch_works_signed_out():
    client = Client()
    response = client.post(reverse("set_language"), {"language": "fr", "next": "/accounts/login/"})
    assert response.status_code == 302
    assert "Se connecter" in client.get(reverse("login")).content.decode()


@DBS
def test_error_pages_in_french(demo, staff):
    viewer = Client()
    viewer.force_login(make_user("viewer", "viewer-i18n"))
    forbidden = viewer.get(reverse("messages:list"), **FR)
    assert forbidden.status_code == 403
    assert "Votre rôle ne permet pas de lire le contenu des messages" in forbidden.content.decode()
    missing = staff.get("/sessions/no-such-session/", **FR)
    assert missing.status_code == 404 and "Introuvable" in missing.content.decode()


@DBS
def test_exports_keep_their_english_column_names_in_french(demo, staff):
    url = reverse("sessions:list") + "?_export=csv"
    english = staff.get(url, **EN)
    french = staff.get(url, **FR)
    en_head = b"".join(english.streaming_content).split(b"\r\n", 1)[0]
    fr_head = b"".join(french.streaming_content).split(b"\r\n", 1)[0]
    assert en_head == fr_head and b"started_at" in fr_head


# The spreadsheet CSV ------------------------------------------------------------------------
def _body(response) -> str:
    raw = b"".join(response.streaming_content) if response.streaming else response.content
    return raw.decode("utf-8-sig")


@DBS
def test_french_spreadsheet_csv_has_semicolons_and_decimal_commas(demo, staff):
    url = reverse("sessions:list") + "?_export=csv&_bom=1"
    text = _body(staff.get(url, **FR))
    rows = list(csv.reader(io.StringIO(text), delimiter=";"))
    header, body = rows[0], rows[1:]
    assert "started_at" in header and len(header) > 5
    assert body and all(len(row) == len(header) for row in body)
    cost = header.index("estimated_cost_usd")
    values = [row[cost] for row in body if row[cost]]
    assert values and all("." not in v for v in values)
    assert any("," in v for v in values)


@DBS
def test_plain_csv_and_english_spreadsheet_are_unchanged(demo, staff):
    plain_fr = _body(staff.get(reverse("sessions:list") + "?_export=csv", **FR))
    plain_en = _body(staff.get(reverse("sessions:list") + "?_export=csv", **EN))
    assert plain_fr == plain_en
    sheet_en = _body(staff.get(reverse("sessions:list") + "?_export=csv&_bom=1", **EN))
    assert next(csv.reader(io.StringIO(sheet_en)))[0] == next(csv.reader(io.StringIO(plain_en)))[0]
    legacy_fr = _body(staff.get("/state/sessions.csv", **FR))
    legacy_en = _body(staff.get("/state/sessions.csv", **EN))
    assert legacy_fr == legacy_en
