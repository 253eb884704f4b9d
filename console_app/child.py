"""The process one console statement runs in: ``python -m console_app.child``.

``isolation.py`` writes the request as JSON to its stdin and reads frames from its stdout (a
4-byte big-endian length, then a JSON object): ``{"columns": [...]}``, any number of
``{"rows": [[...], ...]}``, then one of ``end`` (``truncated``: false, "rows" or "bytes";
``row_cap``), ``too_large``, ``failed`` or ``unavailable``.

Only the standard library and ``readonly.py`` are imported, so it starts in tens of ms (on a
PostgreSQL profile, the driver too).
"""

from __future__ import annotations

import decimal
import json
import math
import os
import resource
import sqlite3
import sys
import time

from console_app.readonly import (
    POSTGRES_READS,
    denied_postgres_function,
    leading_keyword,
    open_readonly,
    pyformat,
)

MAX_REQUEST_BYTES = 4 * 1024 * 1024
FRAME_BYTES = 256 * 1024
# A value counts at least this much (numbers and NULLs cost memory too).
MIN_CELL_BYTES = 8
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def main() -> int:
    request = json.loads(sys.stdin.buffer.read(MAX_REQUEST_BYTES))
    memory = int(request["memory_bytes"])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    cpu = math.ceil(float(request["timeout"])) + 2
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (memory, memory))  # SQLite's temporary files
    os.nice(5)  # pages of other people come first
    try:
        run(request)
    except MemoryError:
        send({"failed": {"text": "out of memory", "refusal": None, "programming": False}})
    except BrokenPipeError:
        return 1  # the web process gave up on us
    return 0


def send(message: dict | bytes) -> None:
    """One length-prefixed JSON frame on stdout (``message``, or its encoding)."""
    payload = message if isinstance(message, bytes) else _ENCODE(message).encode()
    view = memoryview(len(payload).to_bytes(4, "big") + payload)
    while view:
        view = view[os.write(sys.stdout.fileno(), view) :]


def run(request: dict) -> None:
    if request.get("postgres"):
        return run_postgres(request)
    expires_at = time.monotonic() + float(request["timeout"])
    try:
        conn, authorizer = open_readonly(
            request["path"],
            busy_timeout=max(0.05, min(float(request["timeout"]), 5.0)),
            heap_limit=int(request["memory_bytes"]) // 2,
        )
    except sqlite3.Error as exc:
        send({"unavailable": str(exc)})
        return
    conn.set_progress_handler(
        lambda: 1 if time.monotonic() > expires_at else 0, int(request["progress_steps"])
    )
    try:
        cursor = conn.execute(request["sql"], request["params"])
        columns = [d[0] for d in cursor.description or ()]
        send({"columns": columns})
        _send_rows(cursor, len(columns), request)  # (no rows when there are no columns)
    except sqlite3.ProgrammingError as exc:
        send({"failed": {"text": str(exc), "refusal": None, "programming": True}})
    except sqlite3.DatabaseError as exc:
        refusal = authorizer.refusal
        send({"failed": {"text": str(exc), "refusal": refusal, "programming": False}})
    finally:
        conn.close()


def run_postgres(request: dict) -> None:
    """The statement on a PostgreSQL schema: a cursor's query (so a statement that reads,
    and only one) in a read-only transaction under ``statement_timeout``, rows fetched a few
    at a time, as SQLite would give them (JSON as text, exact numbers as floats)."""
    import psycopg

    keyword = leading_keyword(request["sql"])
    denied = denied_postgres_function(request["sql"])
    if keyword not in POSTGRES_READS or denied:
        text = (
            f"the function {denied}() is not allowed in the console"
            if denied
            else f"only {', '.join(sorted(POSTGRES_READS))} statements run here"
        )
        send({"failed": {"text": text, "sqlstate": "hermes-read-only"}})
        return
    try:
        conn = psycopg.connect(**request["postgres"])
    except psycopg.Error as exc:
        send({"unavailable": str(exc), "database": "PostgreSQL"})
        return
    try:
        conn.read_only = True
        ms = max(1, math.ceil(float(request["timeout"]) * 1000))
        conn.execute(f"SET LOCAL statement_timeout = {ms}")
        with conn.cursor(name="hermes_console") as cursor:
            cursor.execute(pyformat(request["sql"]), request["params"])
            columns = [d[0] for d in cursor.description or ()]
            send({"columns": columns})
            rows = (tuple(map(_sqlite_value, row)) for row in cursor)
            _send_rows(rows, len(columns), request)
    except psycopg.Error as exc:
        send({"failed": {"text": str(exc).strip(), "sqlstate": exc.sqlstate or ""}})
    finally:
        conn.close()


def _sqlite_value(value):
    if value is None or isinstance(value, int | float | str | bytes):
        return value
    if isinstance(value, decimal.Decimal):
        exact = value == value.to_integral_value() and value.as_tuple().exponent >= 0
        return int(value) if exact else float(value)
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _send_rows(cursor, width: int, request: dict) -> None:
    max_rows, max_bytes = int(request["max_rows"]), int(request["max_bytes"])
    if request.get("max_cells"):  # a wide result shows fewer rows
        max_rows = min(max_rows, max(1, int(request["max_cells"]) // max(width, 1)))
    max_row_bytes = int(request["max_row_bytes"])
    keep = request.get("cell_chars")  # the page: cut text, blobs as their size
    shape = _page_cell if keep is not None else _export_cell
    sent = total = 0
    batch: list[str] = []
    batch_bytes = 0
    # One row at a time, measured before the next is fetched.
    for row in cursor:
        if sent >= max_rows:
            _flush(batch)
            send({"end": {"truncated": "rows", "row_cap": max_rows}})
            return
        encoded = _ENCODE([shape(v, keep) for v in row])
        measured = sum(len(v) if isinstance(v, str | bytes) else MIN_CELL_BYTES for v in row)
        total += max(measured, len(encoded))
        if len(encoded) > max_row_bytes or total > max_bytes:
            _flush(batch)
            if len(encoded) > max_row_bytes:
                send({"too_large": {"limit": max_row_bytes, "row": True}})
            elif keep is None:  # a download keeps the rows that fit
                send({"end": {"truncated": "bytes"}})
            else:
                send({"too_large": {"limit": max_bytes, "row": False}})
            return
        del row
        batch.append(encoded)
        batch_bytes += len(encoded)
        sent += 1
        if batch_bytes >= FRAME_BYTES:
            _flush(batch)
            batch_bytes = 0
    _flush(batch)
    send({"end": {"truncated": False}})


def _flush(batch: list[str]) -> None:
    if batch:
        send(('{"rows":[' + ",".join(batch) + "]}").encode())
        batch.clear()


def _page_cell(value, keep: int):
    if isinstance(value, bytes):
        return {"blob": len(value)}
    if isinstance(value, str) and len(value) > keep:
        return {"cut": value[:keep], "length": len(value)}
    return value


def _export_cell(value, keep):
    return value.hex() if isinstance(value, bytes) else value


if __name__ == "__main__":
    sys.exit(main())
