"""Datasette's JSON: the default object and every ``_shape``, ``_nl``, ``_json`` (see
``docs/old-urls.md``).  A blob is its UTF-8 text, or ``{"$base64": true, "encoded": …}``.
"""

from __future__ import annotations

import base64
import functools
import json
import math
import time

from django.http import HttpResponse

from hermes_explorer import host_slots

from .errors import ApiError
from .params import as_boolean, first
from .tokens import key_path

# ``_shape=array&_nl=on``: one JSON object per line, said to be so (Datasette said text/plain).
NDJSON = "application/x-ndjson; charset=utf-8"


class Encoder(json.JSONEncoder):
    def default(self, o):
        if isinstance(o, bytes):
            try:
                return o.decode("utf-8")
            except UnicodeDecodeError:
                return {"$base64": True, "encoded": base64.b64encode(o).decode("latin1")}
        return super().default(o)


dumps = functools.partial(json.dumps, cls=Encoder)


def _finite(row):
    if isinstance(row, dict):
        return dict(zip(row, _finite(list(row.values())), strict=True))
    if any(isinstance(v, float) and math.isinf(v) for v in row):
        return [None if isinstance(v, float) and math.isinf(v) else v for v in row]
    return row


def _loads(value):
    try:
        return json.loads(value)
    except (TypeError, ValueError):
        return value


def json_response(data: dict, params, *, status: int = 200, started: float | None = None):
    """The response for ``data`` (a table, row or query dict) shaped as the URL asks;
    ``query_ms`` counts from ``started`` (a ``time.perf_counter()``)."""
    if started is not None:
        data["query_ms"] = (time.perf_counter() - started) * 1000
    wanted = set(params.getlist("_json"))
    if "rows" in data and wanted.intersection(data.get("columns") or ()):
        columns = data["columns"]
        data["rows"] = [
            {k: _loads(v) if k in wanted else v for k, v in row.items()}
            if isinstance(row, dict)
            else [_loads(v) if c in wanted else v for c, v in zip(columns, row, strict=False)]
            for row in data["rows"]
        ]
    if "rows" in data and not as_boolean(first(params, "_json_infinity", "0")):
        data["rows"] = [_finite(r) for r in data["rows"]]
    shape = "arrays" if data.get("error") else first(params, "_shape", "arrays")
    body = data
    if shape == "arrayfirst":
        body = [row[0] for row in data["rows"]]
    elif shape in ("objects", "object", "array"):
        columns, rows = data.get("columns"), data.get("rows")
        if rows and columns:
            data["rows"] = [
                row if isinstance(row, dict) else dict(zip(columns, row, strict=False))
                for row in rows
            ]
        if shape == "object":
            if "primary_keys" not in data:
                raise ApiError("_shape=object is only available on tables")
            pks = data["primary_keys"]
            if not pks:
                raise ApiError("_shape=object not available for tables with no primary keys")
            body = {
                key_path(
                    [row[pk]["value"] if isinstance(row[pk], dict) else row[pk] for pk in pks]
                ): row
                for row in data["rows"]
            }
        elif shape == "array":
            body = data["rows"]
    elif shape != "arrays":
        raise ApiError(f"Invalid _shape: {shape}")
    if first(params, "_nl", "") and shape == "array":
        text = "\n".join(dumps(item) for item in body)
        content_type = NDJSON
    else:
        text = dumps(body)
        content_type = "application/json; charset=utf-8"
    response = HttpResponse(text, status=status, content_type=content_type)
    if data.get("next_url"):
        response["Link"] = f'<{data["next_url"]}>; rel="next"'
    return response


def error_response(error: ApiError, fmt: str | None):
    """A refusal: Datasette's error object for ``.json``, one plain line for ``.csv``; a
    "busy" (429) says when to retry."""
    if fmt == "csv":
        response = HttpResponse(
            error.message + "\n", status=error.status, content_type="text/plain; charset=utf-8"
        )
    else:
        body = {"ok": False, "error": error.message, "status": error.status, "title": error.title}
        response = HttpResponse(dumps(body), status=error.status, content_type="application/json")
    if error.status == 429:
        response["Retry-After"] = str(host_slots.RETRY_SECONDS)
    return response
