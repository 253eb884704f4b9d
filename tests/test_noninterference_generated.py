"""Non-interference, generated: Hypothesis's full-text and list queries answer alike from the
twins (``tests/test_noninterference.py`` holds the twins, the crawl and the strategies; these
tests are a module of their own so that the parallel run can give them to the other worker)."""

from __future__ import annotations

import pytest

from tests.roles_helpers import client_for
from tests.test_noninterference import (  # noqa: F401 (the module-scoped fixture)
    LAYOUTS,
    ROLES,
    _generated,
    list_url,
    search_url,
    twins,
)

pytestmark = pytest.mark.django_db(databases=["default", "hermes"])


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("role", ROLES)
def test_generated_searches_answer_the_same_from_both_twins(twins, layout, role):
    found = _generated(client_for(role), twins[layout], search_url(twins[layout]))
    assert not found, f"{len(found)} differ:\n" + "\n\n".join(found[:10])


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("role", ROLES)
def test_generated_list_queries_answer_the_same_from_both_twins(twins, layout, role):
    found = _generated(client_for(role), twins[layout], list_url(twins[layout]), "fr")
    assert not found, f"{len(found)} differ:\n" + "\n\n".join(found[:10])
