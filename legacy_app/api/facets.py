"""``_facet``, ``_facet_date`` and ``_facet_array``: Datasette's ``facet_results``, each one
``GROUP BY`` over the matching rows after ``_next`` (as Datasette counted); a facet out of time
is left out, as in Datasette.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode

from hermes_explorer import dialect

from .errors import ApiError
from .operators import number_kind, quote
from .params import FACET_TYPES, Facet, TableRequest
from .query import Statement

FACET_BUDGET = 1.0


def _url(query_path: str, pairs) -> str:
    qs = urlencode(pairs)
    return query_path + (f"?{qs}" if qs else "")


def _sql(facet: Facet, inner: str, limit: int, seen: frozenset[str], number: bool) -> str:
    col = quote(facet.column)
    if facet.kind != "array":
        # Free-text metadata is counted as shown (redacted), as on the page.
        value = f"hermes_redact({col})" if facet.column in seen else col
        if facet.kind == "date":
            col = value = dialect.sqlite_date(col, number)
        return (
            f"select {value} as value, count(*) as count from ({inner}) as matched "
            f"where {col} is not null group by {value} order by count desc, value limit {limit}"
        )
    return (
        f"with inner_rows as ({inner}), deduped_array_items as (select distinct j.value, "
        f"inner_rows.* from inner_rows, {dialect.json_values(f'inner_rows.{col}')}) "
        "select value as value, count(*) as count from deduped_array_items group by value "
        f"order by count(*) desc, value limit {limit}"
    )


def facet_results(request, req: TableRequest, base: Statement, run, *, policy, labels, seen):
    """``{name: facet}`` for every facet the URL asks for (Datasette's JSON layout)."""
    # "selected" compares with every pair; the URLs keep the non-blank ones, as Datasette did.
    query_string, path = request.META.get("QUERY_STRING", ""), request.path
    absolute = request.build_absolute_uri
    pairs = parse_qsl(query_string, keep_blank_values=True)
    url_pairs = parse_qsl(query_string)
    results: dict = {}
    for facet in req.facets:
        number = number_kind(req.table, facet.column)
        sql = _sql(facet, base.sql, req.facet_size + 1, seen, number=number)
        statement = Statement(sql, base.params, base.table)
        try:
            _columns, rows = run(statement, budget=FACET_BUDGET)
        except ApiError as exc:
            if exc.title == "SQL Interrupted":
                continue
            raise
        shown = rows[: req.facet_size]
        expanded = labels(facet.column, [r[0] for r in shown])
        column = facet.column
        column_qs = {"array": f"{column}__arraycontains", "date": f"{column}__date"}.get(
            facet.kind, f"{column}__exact" if column.startswith("_") else column
        )
        values = []
        for value, count in shown:
            if facet.kind == "array":
                value = str(value)
            pair = (column_qs, str(value))
            selected = pair in pairs
            kept = [p for p in url_pairs if p != pair]
            toggle = kept if selected else [*url_pairs, (column_qs, value)]
            shown_value = policy.value(facet.column, value)
            label = expanded.get(value, value) if facet.kind == "column" else value
            values.append(
                {
                    "value": shown_value,
                    "label": policy.value(facet.column, label) if label == value else label,
                    "count": count,
                    # A value the redactor changed is not written into a URL.
                    "toggle_url": absolute(_url(path, toggle)) if shown_value == value else None,
                    "selected": selected,
                }
            )
        key = facet.column
        n = 1
        while key in results:
            n += 1
            key = f"{facet.column}_{n}"
        param = next(k for k, kind in FACET_TYPES.items() if kind == facet.kind)
        results[key] = {
            "name": facet.column,
            "type": facet.kind,
            "hideable": True,
            "toggle_url": _url(path, [p for p in url_pairs if p != (param, facet.column)]),
            "results": values,
            "truncated": len(rows) > req.facet_size,
        }
    return results
