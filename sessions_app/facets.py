"""Distinct values for filter choices (sources, models, end reasons…), cached briefly.

``SELECT DISTINCT source`` is answered from the ``source`` index; columns without an index
cost a scan of ``sessions`` (tens of thousands of rows, not millions), so each answer is
cached for a few minutes per file.
"""

from __future__ import annotations

from django.core.cache import cache
from django.db import connections

FACET_TTL = 300
FACET_LIMIT = 500


def distinct_values(column: str, *, table: str = "sessions") -> list[str]:
    shape = connections["hermes"].hermes_shape_now()
    if not shape.has_column(table, column):
        return []
    name = connections["hermes"].settings_dict["NAME"]
    key = f"facet:{name}:{shape.schema_version}:{table}.{column}"
    values = cache.get(key)
    if values is None:
        with connections["hermes"].cursor() as cursor:
            cursor.execute(
                f'SELECT DISTINCT "{column}" FROM "{table}" '
                f'WHERE "{column}" IS NOT NULL AND "{column}" != \'\' LIMIT {FACET_LIMIT}'
            )
            values = sorted(str(row[0]) for row in cursor.fetchall())
        cache.set(key, values, FACET_TTL)
    return values


def source_counts() -> dict[str, int]:
    """Sessions per source (answered from the ``source`` index), cached like the facets."""
    shape = connections["hermes"].hermes_shape_now()
    name = connections["hermes"].settings_dict["NAME"]
    key = f"facet-counts:{name}:{shape.schema_version}:sessions.source"
    counts = cache.get(key)
    if counts is None:
        with connections["hermes"].cursor() as cursor:
            cursor.execute("SELECT source, COUNT(*) FROM sessions GROUP BY source")
            counts = {str(source): n for source, n in cursor.fetchall()}
        cache.set(key, counts, FACET_TTL)
    return counts
