"""Distinct values for filter choices (sources, models, end reasons…), cached for a few minutes
per file: columns without an index cost a scan of ``sessions``.
"""

from __future__ import annotations

from django.core.cache import cache

from hermes_explorer import store
from redaction import redact

from .models import metadata_columns

FACET_TTL = 300
FACET_LIMIT = 500


def _cached(label: str, compute):
    """``compute(cursor)`` once per file, schema version and ``FACET_TTL``."""
    key = f"facet:{store.name()}:{store.shape().schema_version}:{label}"
    value = cache.get(key)
    if value is None:
        with store.cursor() as cursor:
            value = compute(cursor)
        cache.set(key, value, FACET_TTL)
    return value


def distinct_values(column: str) -> list[str]:
    if not store.shape().has_column("sessions", column):
        return []

    def compute(cursor):
        cursor.execute(
            f'SELECT DISTINCT "{column}" FROM sessions '
            f'WHERE "{column}" IS NOT NULL AND "{column}" != \'\' LIMIT {FACET_LIMIT}'
        )
        values = {str(row[0]) for row in cursor.fetchall()}
        if column in metadata_columns("sessions"):
            # Free text shown to every role: a pasted key never reaches a filter's choices.
            values = {redact(v) for v in values}
        return sorted(values)

    return _cached(f"sessions.{column}", compute)


def source_counts() -> dict[str, int]:
    """Sessions per source (answered from the ``source`` index), cached like the facets."""

    def compute(cursor):
        cursor.execute("SELECT source, COUNT(*) FROM sessions GROUP BY source")
        return {str(source): n for source, n in cursor.fetchall()}

    return _cached("sessions.source:counts", compute)
