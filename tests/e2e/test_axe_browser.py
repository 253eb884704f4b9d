"""axe-core on every page family, in English and French, light and dark: no serious or critical
violation (axe-playwright-python runs the axe-core bundled with it, no network)."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import E2E_DBS
from tests.e2e.test_pages_browser import tour

pytestmark = pytest.mark.django_db(transaction=True, databases=E2E_DBS)

FAMILIES = [
    "/live/",
    "/failures/",
    "/annotations/tags/",
    "/annotations/views/",
    "/accounts/tokens/",
    "/state",
    "/state/sessions?_size=5",
    "/insights/?days=365",
    "/people/?days=365",
    "/annotations/orphans/",
    "/review/scores/",
    "/sql/saved/",
]


def serious(results) -> list[str]:
    found = []
    for violation in results.response["violations"]:
        if violation.get("impact") in ("serious", "critical"):
            nodes = [n.get("html", "")[:120] for n in violation.get("nodes", [])][:3]
            found.append(f"{violation['id']} ({violation['impact']}): {nodes}")
    return found


# Each theme and each language crawls every page once (pairwise): the colours that contrast
# depend on the theme only, the accessible names and the page's language on the language only.
@pytest.mark.parametrize("language, scheme", [("en", "light"), ("fr", "dark")])
def test_no_serious_axe_violation_on_any_page_family(browse, demo, scheme, language):
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    page = browse.page(role="staff", color_scheme=scheme, locale=language)
    problems = {}
    for url in [u for _name, u, _title in tour(demo)] + FAMILIES:
        response = page.goto(url)
        assert response.status == 200, url
        found = serious(axe.run(page))
        if found:
            problems[url] = found
    assert not problems, problems


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("language", ["en", "fr"])
def test_no_serious_axe_violation_signed_out(browse, demo, scheme, language):
    from axe_playwright_python.sync_playwright import Axe

    page = browse.page(role=None, color_scheme=scheme, locale=language)
    page.goto("/accounts/login/")
    assert not serious(Axe().run(page))
