"""Browser fixtures: one headless Debian Chromium per test session, the app on a live server.

The app is served by pytest-django's ``live_server`` (a threaded WSGI server inside the test
process, with the test settings): users made in the test thread are visible to it, and the
``hermes`` alias is pointed at a fixture store exactly as the other tests do it (the alias's
settings dict is shared by every thread, and each request thread opens its own read-only
connection).  Because the ``hermes`` backend has no transactions, these tests run with
TransactionTestCase semantics anyway, which ``live_server`` needs.

The browser is the system's ``/usr/bin/chromium`` (``make test`` installs it with apt when it
is missing); nothing is ever downloaded.  Every page a test opens is guarded: a console
error, an uncaught exception or a request to any host but the live server fails the test.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.conf import settings
from django.db import connections
from django.test import Client

from hermes_fixtures.demo import build_demo_db
from tests.builders import NastyFacts, build_nasty_db
from tests.conftest import use_store
from tests.roles_helpers import make_user

# Playwright's sync API keeps an asyncio loop in this thread; the ORM calls the tests make
# between browser steps (creating users) are plain synchronous code, so let Django allow them.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = Path(os.environ.get("HERMES_E2E_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
SCREENSHOTS = ARTIFACTS / "screenshots"
DESKTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
LOCAL_HOSTS = {"127.0.0.1", "localhost"}
# Auto-waiting assertions give up after this long (the default 5 s hides nothing here).
EXPECT_TIMEOUT_MS = 5_000
E2E_DBS = ["default", "hermes"]


def pytest_collection_modifyitems(items):
    """Every test under tests/e2e/ is a browser test (``-m "not browser"`` skips them)."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)


# The browser -----------------------------------------------------------------------------
@pytest.fixture(scope="session")
def browser():
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"{CHROMIUM} is missing: the browser tests drive Debian's Chromium. "
            "Run `make test` (installs it with apt as root) or `sudo apt-get install -y chromium`."
        )
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=EXPECT_TIMEOUT_MS)
    with sync_playwright() as playwright:
        # launch() gives the browser a fresh temporary profile (user-data dir) of its own and
        # removes it on close; contexts inside it share nothing (cookies, storage, cache).
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()


# The data --------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def e2e_store(tmp_path_factory) -> NastyFacts:
    """The nasty fixture (current shape), dated so that it ends now: insights windows see it."""
    path = tmp_path_factory.mktemp("e2e") / "nasty-current.db"
    return build_nasty_db(path, "current", now=time.time())


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory) -> Path:
    """A small realistic store for the screenshots (what the team sees every day)."""
    path = tmp_path_factory.mktemp("e2e") / "demo.db"
    build_demo_db(path, sessions=160, messages=4000, seed=7)
    return path


@pytest.fixture
def facts(e2e_store) -> Iterator[NastyFacts]:
    """The nasty store, with the ``hermes`` alias pointed at it for this test."""
    use_store(e2e_store.path)
    yield e2e_store
    connections["hermes"].close()


@pytest.fixture
def demo(demo_store) -> Iterator[Path]:
    """The demo store, with the ``hermes`` alias pointed at it for this test."""
    use_store(demo_store)
    yield demo_store
    connections["hermes"].close()


# The app ---------------------------------------------------------------------------------
@pytest.fixture
def app_url(live_server) -> str:
    """The live server's address (a test also asks for ``facts`` or ``demo``: the data)."""
    return live_server.url


@dataclass
class PageProblems:
    """What a guarded page did wrong: console errors, page errors, external requests."""

    console: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)
    # Console errors a test expects (a 403 page logs "Failed to load resource … 403").
    allowed: list[re.Pattern] = field(default_factory=list)

    def allow(self, pattern: str) -> None:
        self.allowed.append(re.compile(pattern))

    def unexpected(self) -> list[str]:
        console = [c for c in self.console if not any(p.search(c) for p in self.allowed)]
        return (
            [f"console error: {c}" for c in console]
            + [f"page error: {e}" for e in self.page_errors]
            + [f"external request: {u}" for u in self.external]
        )


class Browse:
    """Opens guarded pages in fresh browser contexts, signed in as a given role."""

    def __init__(self, browser, base_url: str) -> None:
        self.browser = browser
        self.base_url = base_url
        self.contexts = []
        self.problems = PageProblems()
        self._users: dict[str, object] = {}

    def user(self, role: str | None):
        key = role or "none"
        if key not in self._users:
            self._users[key] = make_user(role, username=f"e2e-{key}")
        return self._users[key]

    def context(self, role: str | None = "analyst", **options):
        """A new browser context; signed in as ``role`` unless ``role`` is None."""
        options.setdefault("viewport", DESKTOP)
        options.setdefault("base_url", self.base_url)
        options.setdefault("locale", "en-US")
        context = self.browser.new_context(**options)
        context.set_default_timeout(10_000)
        context.route("**/*", self._only_local)
        if role is not None:
            client = Client()
            client.force_login(self.user(role))
            cookie = client.cookies[settings.SESSION_COOKIE_NAME]
            context.add_cookies([{"name": cookie.key, "value": cookie.value, "url": self.base_url}])
        self.contexts.append(context)
        return context

    def page(self, role: str | None = "analyst", **options):
        """A guarded page in a new context (see :meth:`context`)."""
        page = self.context(role, **options).new_page()
        self.guard(page)
        return page

    def guard(self, page) -> None:
        page.on(
            "console",
            lambda msg: (
                msg.type == "error" and self.problems.console.append(f"{msg.text} ({page.url})")
            ),
        )
        page.on("pageerror", lambda exc: self.problems.page_errors.append(f"{exc} ({page.url})"))

    def _only_local(self, route) -> None:
        url = route.request.url
        if urlsplit(url).hostname in LOCAL_HOSTS:
            route.continue_()
        else:
            self.problems.external.append(url)
            route.abort()

    def close(self) -> None:
        for context in self.contexts:
            context.close()


@pytest.fixture
def browse(request, browser, app_url) -> Iterator[Browse]:
    """``browse.page(role)``; at the end, the test fails on any console error or page error
    and on any request that left the live server.  The app reads the nasty store unless the
    test asks for ``demo``."""
    if "demo" not in request.fixturenames:
        request.getfixturevalue("facts")
    session = Browse(browser, app_url)
    yield session
    session.close()
    problems = session.problems.unexpected()
    assert not problems, "\n".join(problems)


# Checks shared by the journeys -----------------------------------------------------------
def screenshot(page, name: str, *, full_page: bool = True) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


def relative_luminance(rgb: tuple[float, float, float]) -> float:
    def channel(c: float) -> float:
        c = c / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(fg: tuple[float, float, float], bg: tuple[float, float, float]) -> float:
    """WCAG 2 contrast ratio of two opaque sRGB colours."""
    light, dark = sorted((relative_luminance(fg), relative_luminance(bg)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def parse_rgb(css: str) -> tuple[float, float, float]:
    """``rgb(…)``/``rgba(…)`` from getComputedStyle (alpha must be opaque)."""
    match = re.fullmatch(r"rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)", css)
    assert match, f"unexpected colour {css!r}"
    assert match.group(4) in (None, "1"), f"translucent colour {css!r}"
    return float(match.group(1)), float(match.group(2)), float(match.group(3))


FOCUS_OUTLINE_JS = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const style = getComputedStyle(el);
  return {tag: el.tagName, text: (el.textContent || el.value || '').trim().slice(0, 40),
          style: style.outlineStyle, width: parseFloat(style.outlineWidth)};
}"""

# Visible, user-operable form controls (hidden inputs and offscreen helpers excluded).
CONTROLS = "input:not([type=hidden]):visible, select:visible, textarea:visible, button:visible"


def check_accessibility_basics(page, title: str | re.Pattern, *, nav: bool = True) -> None:
    """Landmarks, language, a title that says where you are, and a name on every control.
    (``nav=False`` for pages seen signed out, which have no navigation.)"""
    from playwright.sync_api import expect

    expect(page).to_have_title(title)
    assert page.locator("html").get_attribute("lang"), "<html> has no lang"
    landmarks = ("main", "banner", "navigation") if nav else ("main", "banner")
    for landmark in landmarks:
        assert page.get_by_role(landmark).count() >= 1, f"no {landmark} landmark"
    assert page.locator("main").count() == 1
    assert page.locator("header").count() >= 1
    assert page.locator("h1").count() == 1, "a page has one <h1>"
    controls = page.locator(CONTROLS)
    for i in range(controls.count()):
        control = controls.nth(i)
        try:
            expect(control).to_have_accessible_name(re.compile(r"\S"), timeout=1_000)
        except AssertionError:
            html = control.evaluate("e => e.outerHTML")
            raise AssertionError(f"form control without a label on {page.url}: {html}") from None


def check_focus_visible(page, presses: int = 4) -> None:
    """Tab through the first few focusable elements of a freshly loaded page: each shows
    an outline."""
    for _ in range(presses):
        page.keyboard.press("Tab")
        info = page.evaluate(FOCUS_OUTLINE_JS)
        assert info is not None, "Tab focused nothing"
        assert info["style"] != "none" and info["width"] >= 2, f"focus not visible on {info}"


CONTRAST_JS = """() => {
  const body = getComputedStyle(document.body);
  const link = document.querySelector('main a') || document.querySelector('.site-header a:not(.skip-link)');
  return {fg: body.color, bg: body.backgroundColor,
          link: link ? getComputedStyle(link).color : null};
}"""


def check_contrast(page, minimum: float = 4.5) -> dict[str, float]:
    colours = page.evaluate(CONTRAST_JS)
    bg = parse_rgb(colours["bg"])
    ratios = {"text": contrast_ratio(parse_rgb(colours["fg"]), bg)}
    if colours["link"]:
        ratios["link"] = contrast_ratio(parse_rgb(colours["link"]), bg)
    for what, ratio in ratios.items():
        assert ratio >= minimum, f"{what} contrast {ratio:.2f}:1 < {minimum}:1 ({colours})"
    return ratios
