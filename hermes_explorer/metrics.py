"""``/metrics``: Prometheus's text format, with prometheus-client (django-prometheus would wrap
the database backends, and the state.db's is our own).

Every label takes its values from a closed set, never from what a client sends.  Not public:
staff and a scraper on the loopback address reaching the server directly; staff restricted to
some profiles see only those profiles' series.  Workers share their figures through
``PROMETHEUS_MULTIPROC_DIR``.
"""

from __future__ import annotations

import os
import time
from http import HTTPStatus

from django.db import connections
from django.db.backends.signals import connection_created
from django.http import HttpResponse, HttpResponseForbidden
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily

REQUESTS = Counter("hermes_explorer_requests", "Requests answered", ["view", "method", "status"])
LATENCY = Histogram(
    "hermes_explorer_request_seconds",
    "Time to answer a request",
    ["view"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
QUERIES = Counter("hermes_explorer_db_queries", "Statements sent", ["alias"])
QUERY_SECONDS = Counter("hermes_explorer_db_query_seconds", "Time in statements", ["alias"])
EXPORT_BYTES = Counter("hermes_explorer_export_bytes", "Bytes of streamed downloads", ["kind"])
CONSOLE_RUNS = Counter("hermes_explorer_console_runs", "SQL console statements", ["outcome"])

# The request methods a label may name (any other is "other": a client may send any word).
METHODS = frozenset("GET HEAD POST PUT PATCH DELETE OPTIONS TRACE CONNECT".split())
STATUSES = frozenset(str(s.value) for s in HTTPStatus)


def count_statement(alias: str, seconds: float) -> None:
    """One statement sent on the connection ``alias`` (also those a download reads ahead on a
    connection of its own), and the time it took."""
    alias = "app" if alias == "default" else alias
    QUERIES.labels(alias).inc()
    QUERY_SECONDS.labels(alias).inc(seconds)


def _timed(execute, sql, params, many, context):
    started = time.perf_counter()
    try:
        return execute(sql, params, many, context)
    finally:
        count_statement(context["connection"].alias, time.perf_counter() - started)


def _instrument(sender, connection, **kwargs):
    if _timed not in connection.execute_wrappers:
        connection.execute_wrappers.append(_timed)


connection_created.connect(_instrument, dispatch_uid="hermes-explorer-metrics")


class MetricsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        # Connections opened before this module was loaded count too.
        for connection in connections.all(initialized_only=True):
            _instrument(None, connection)

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        view = match.view_name if match is not None else "unresolved"
        method = request.method if request.method in METHODS else "other"
        status = str(response.status_code)
        REQUESTS.labels(view, method, status if status in STATUSES else "other").inc()
        LATENCY.labels(view).observe(time.perf_counter() - started)
        return response


def _store_families(served):
    """The health of ``served`` (stores), read when the scrape reaches it."""
    from .views import check_store

    def family(name: str, text: str, *labels: str) -> GaugeMetricFamily:
        return GaugeMetricFamily(f"hermes_explorer_store_{name}", text, labels=["profile", *labels])

    readable = family("readable", "Whether the store reads")
    size = family("size_bytes", "The store's file size")
    mode = family("journal_mode", "The store's journal mode (1 for the mode it is in)", "mode")
    lag = family("standby_lag_seconds", "How far a hot standby is behind its primary")
    replaying = family(
        "standby_replaying", "Whether a hot standby replays its primary's changes (0: stopped)"
    )
    for one in served:
        found = check_store(one)
        if standby := found.get("standby"):
            if standby["lag_seconds"] is not None:
                lag.add_metric([one.name], standby["lag_seconds"])
            replaying.add_metric([one.name], 1 if standby["replaying"] else 0)
        readable.add_metric([one.name], 1 if found["readable"] else 0)
        if found.get("size") is not None:
            size.add_metric([one.name], found["size"])
        if found.get("journal_mode"):
            mode.add_metric([one.name, found["journal_mode"]], 1)
    yield from (readable, size, mode, lag, replaying)


class _Seen:
    """The families of ``collections`` (iterables of families); with ``served`` (the stores the
    reader may see), without the samples whose ``alias`` or ``profile`` label names another
    store."""

    def __init__(self, collections, served=None):
        self.collections = collections
        self.served = served
        if served is not None:
            self.profiles = {one.name for one in served}
            self.aliases = {one.alias for one in served} | {"app"}

    def collect(self):
        for families in self.collections:
            for family in families:
                if self.served is not None:
                    family.samples = [s for s in family.samples if self.shown(s.labels)]
                yield family

    def shown(self, labels: dict) -> bool:
        if "profile" in labels and labels["profile"] not in self.profiles:
            return False
        return labels.get("alias", "app") in self.aliases


def metrics_view(request):
    from . import stores
    from .views import served_to, staff_or_local

    if not staff_or_local(request):
        return HttpResponseForbidden("Metrics are for staff and the loopback address.\n")
    registry = REGISTRY
    if os.path.isdir(os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    served = served_to(request)
    # A reader who sees every store gets every series (the "hermes" alias of a store no longer
    # served included); anyone else only the series of the stores they see.
    every = set(served) == set(stores.all_stores())
    seen = _Seen([registry.collect(), _store_families(served)], None if every else served)
    return HttpResponse(generate_latest(seen), content_type=CONTENT_TYPE_LATEST)
