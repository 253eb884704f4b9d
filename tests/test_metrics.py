"""``/metrics``: Prometheus's families after a few requests, refused from elsewhere."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.roles_helpers import client_for

pytestmark = pytest.mark.django_db(databases=["default", "hermes"])


def test_metrics_families_and_labels_after_a_few_requests(current_store):
    analyst = client_for("analyst")
    assert analyst.get("/sessions/").status_code == 200
    export = analyst.get("/sessions/?_export=csv")
    assert export.status_code == 200 and b"".join(export.streaming_content)
    body = Client().get("/metrics").content.decode()  # the loopback address, signed out
    for family in (
        "hermes_explorer_requests_total",
        "hermes_explorer_request_seconds_bucket",
        "hermes_explorer_db_queries_total",
        "hermes_explorer_db_query_seconds_total",
        "hermes_explorer_export_bytes_total",
        "hermes_explorer_store_readable",
        "hermes_explorer_store_size_bytes",
        "hermes_explorer_store_journal_mode",
    ):
        assert family in body, family
    assert 'view="sessions:list"' in body and 'status="200"' in body
    assert 'alias="app"' in body and 'alias="hermes"' in body
    assert 'kind="csv"' in body
    assert 'hermes_explorer_store_readable{profile="default"} 1.0' in body


def test_metrics_are_refused_from_elsewhere(current_store):
    assert Client().get("/metrics", REMOTE_ADDR="192.0.2.9").status_code == 403
    assert Client().get("/metrics", HTTP_X_FORWARDED_FOR="192.0.2.9").status_code == 403
    assert client_for("analyst").get("/metrics", REMOTE_ADDR="192.0.2.9").status_code == 403
    assert client_for("staff").get("/metrics", REMOTE_ADDR="192.0.2.9").status_code == 200


def test_a_staff_token_scrapes_from_another_host(current_store):
    from accounts_app import tokens
    from tests.roles_helpers import make_user

    _token, staff_text = tokens.create(make_user("staff", "scraper"))
    _token, analyst_text = tokens.create(make_user("analyst", "nosy"))
    remote = {"REMOTE_ADDR": "192.0.2.9"}
    staff = Client(headers={"Authorization": f"Bearer {staff_text}"}).get("/metrics", **remote)
    assert staff.status_code == 200 and b"hermes_explorer_requests_total" in staff.content
    analyst = Client(headers={"Authorization": f"Bearer {analyst_text}"}).get("/metrics", **remote)
    assert analyst.status_code == 403
