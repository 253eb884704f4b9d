"""The insights report as JSON (Hermes's dictionary) and its tables as CSV."""

from __future__ import annotations

import csv
import io
from typing import Any

from django.http import HttpResponse, HttpResponseBadRequest, JsonResponse

from sessions_app.exports import neutralise_formula
from sessions_app.timefmt import iso

from .explorer import Extras
from .figures.models import TABLE_KEYS as MODEL_KEYS
from .figures.registry import TOKEN_KEYS
from .stats import Report

# Each CSV table and its columns, in the order the page offers them.
_CACHE_COLUMNS = ["cache_hit_rate", "input_tokens", "cache_read_tokens", "cache_write_tokens"]
CSV_COLUMNS = {
    "models": ["model", *MODEL_KEYS],
    "platforms": [
        "platform",
        "sessions",
        "messages",
        *TOKEN_KEYS,
        "total_tokens",
        "tool_calls",
        "estimated_cost",
    ],
    "tools": ["tool", "count", "percentage"],
    "tool_latency": ["tool", "calls", "median_s", "p95_s", "max_s"],
    "skills": ["skill", "view_count", "manage_count", "total_count", "last_used_at"],
    "daily": ["day", "sessions", "messages", *TOKEN_KEYS, "total_tokens", "cost"],
    # The explorer's own tables: each is the Extras attribute of its name.
    "cache_by_model": ["model", *_CACHE_COLUMNS],
    "cache_by_day": ["day", *_CACHE_COLUMNS],
    "cost_by_day_model": ["day", "model", "cost"],
    "reasoning_by_model": ["model", "reasoning_tokens", "output_tokens", "share_of_output"],
}
CSV_TABLES = tuple(CSV_COLUMNS)


def refusal(fmt: str, table: str) -> HttpResponse | None:
    """A 400 for an ``_export`` this page does not make (checked before any query); else None."""
    tables = "|".join(CSV_TABLES)
    if fmt not in ("", "json", "csv"):
        message = f"Unknown _export format: use json, or csv with table={tables}."
    elif fmt == "csv" and table not in CSV_TABLES:
        message = f"CSV export needs table={tables}."
    else:
        return None
    return HttpResponseBadRequest(message, content_type="text/plain; charset=utf-8")


def json_response(
    report: Report,
    linked: dict[str, list[dict[str, Any]]],
    sessions_url: str,
    extra: Extras,
    profiles: list[dict] | None,
) -> JsonResponse:
    """Hermes's report dictionary with the page's links, ``drilldown`` (the window's session
    list), ``explorer`` (our own figures) and, over several profiles, ``profiles`` (one row
    per profile of the totals)."""
    data = report.as_hermes_dict()
    data["drilldown"] = sessions_url
    data["skills"] = {**data["skills"], "top_skills": linked["top_skills"]}
    data["explorer"] = extra.as_dict()
    for key in ("models", "platforms", "tools", "top_sessions", "daily_by_start_day"):
        data[key] = linked[key]
    if profiles is not None:
        data["profiles"] = profiles
    response = JsonResponse(_costs_rounded(data), json_dumps_params={"ensure_ascii": False})
    response["Content-Disposition"] = f'inline; filename="{_filename(report, "report", "json")}"'
    return response


def _costs_rounded(value, key: str = ""):
    """``value`` with each cost to a ten-billionth of a dollar: a cost is a sum of floats,
    whose last binary digits depend on the order they were added in (a PostgreSQL schema's
    sums, a staged read)."""
    if isinstance(value, dict):
        return {k: _costs_rounded(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_costs_rounded(v, key) for v in value]
    return round(value, 10) if isinstance(value, float) and "cost" in key else value


def _filename(report: Report, table: str, ext: str) -> str:
    w = report.window
    if w.is_custom:
        span = f"{w.start_day or 'start'}_{w.end_day or 'today'}"
    else:
        span = "all-time" if w.days is None else f"{w.days}d"
    return f"hermes-insights-{table}-{span}.{ext}"


def _csv_rows(report: Report, table: str, basis: str, extra: Extras) -> list[dict]:
    if table == "tools":
        return [{**t, "percentage": round(t["percentage"], 4)} for t in report.tools]
    if table == "skills":
        skills = report.skills["top_skills"]
        return [{**s, "last_used_at": iso(s["last_used_at"])} for s in skills]
    if table == "daily":
        return [d.as_dict() for d in report.day_rows(basis)]
    if table in ("models", "platforms", "tool_latency"):
        return getattr(report, table) or []
    return getattr(extra, table)


def csv_response(report: Report, table: str, basis: str, extra: Extras) -> HttpResponse:
    """One table of the report as a CSV download, its text cells defused for spreadsheets."""
    header = CSV_COLUMNS[table]
    found = _costs_rounded(_csv_rows(report, table, basis, extra))
    rows = [[row[k] for k in header] for row in found]
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(header)
    # Names come from the state.db: text cells are defused as in every spreadsheet CSV.
    writer.writerows([[neutralise_formula(v) for v in row] for row in rows])
    response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{_filename(report, table, "csv")}"'
    return response
