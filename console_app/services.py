"""What the console does with a statement, apart from HTTP: run it fenced in (``isolation``,
``readonly``), write it to the audit trail, and shape its rows for the page or a download.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from accounts_app import audit
from accounts_app.models import AuditEvent
from hermes_explorer import store
from hermes_explorer.metrics import CONSOLE_RUNS
from redaction import redact
from sessions_app.exports import export_filename, stream_export

from . import isolation
from .readonly import ConsoleBusy, ConsoleError, ConsoleUnavailable

# Characters of one cell shown in the HTML table; exports carry the whole value.
CELL_CHARS = 2_000
# Cells of one page (a wide result shows fewer rows).
MAX_CELLS = 50_000
EXPORT_FORMATS = ("csv", "json", "jsonl")


@dataclass
class Outcome:
    """A statement run for the page: its result (display rows), or why it did not run."""

    result: isolation.Result | None = None
    error: str | None = None
    status: int = 200

    @classmethod
    def failed(cls, exc: ConsoleError) -> Outcome:
        """503 when the state.db cannot be read or the console is busy, else 400."""
        busy = isinstance(exc, ConsoleUnavailable | ConsoleBusy)
        return cls(error=str(exc), status=503 if busy else 400)


# Said with a time-out on a rollback-journal file, where the short limit is the file's.
JOURNAL_NOTE = (
    " This state.db is in rollback-journal mode: while a query runs, Hermes cannot save new"
    " messages, so every query here is limited to a fraction of a second."
)


def statement_limits(timeout: float, **limits) -> isolation.Limits:
    """Limits for one statement that cannot be cut into chunks (``timeout``, shorter on a
    rollback-journal file)."""
    budget = store.uncut_statement_budget(timeout)
    note = JOURNAL_NOTE if budget < timeout else ""
    return isolation.Limits(timeout=budget, timeout_note=note, **limits)


def run_for_page(request, sql: str, params: dict[str, str]) -> Outcome:
    """Run ``sql`` under the page's limits (audited, whatever happens)."""
    try:
        limits = statement_limits(
            settings.HERMES_SQL_TIMEOUT,
            max_rows=settings.HERMES_SQL_MAX_ROWS,
            max_bytes=settings.HERMES_SQL_MAX_BYTES,
            cell_chars=CELL_CHARS,
            max_cells=MAX_CELLS,
        )
        result = isolation.run(sql, params, path=store.name(), limits=limits, convert=display_rows)
    except ConsoleError as exc:
        CONSOLE_RUNS.labels("refused").inc()
        return Outcome.failed(exc)
    finally:
        record_run(request, sql, params)
    CONSOLE_RUNS.labels("ran").inc()
    return Outcome(result=result)


def export_response(request, sql: str, params: dict[str, str], *, fmt: str, slug: str, **style):
    """The result of ``sql`` as a download (audited; ``style``: ``spreadsheet``, or ``raw``
    without defused formulas, as :func:`stream_export` takes them); raises ConsoleError when it
    cannot run."""
    try:
        limits = statement_limits(
            settings.HERMES_EXPORT_CHUNK_TIMEOUT,
            max_rows=settings.HERMES_SQL_EXPORT_MAX_ROWS,
            max_bytes=settings.HERMES_SQL_EXPORT_MAX_BYTES,
        )
        spooled = isolation.spool(sql, params, path=store.name(), limits=limits)
    finally:
        record_run(request, sql, params)
    response = stream_export(
        fmt=fmt,
        columns=unique_columns(spooled.columns),
        chunks=(list(map(export_row, batch)) for batch in spooled.batches()),
        filename=export_filename("sql", [slug or "query"], fmt),
        **style,
    )
    if spooled.truncated == "rows":
        response["X-Rows-Truncated"] = f"at {settings.HERMES_SQL_EXPORT_MAX_ROWS} rows"
    elif spooled.truncated:
        response["X-Rows-Truncated"] = f"at {settings.HERMES_SQL_EXPORT_MAX_BYTES} bytes"
    return response


def record_run(request, sql: str, params: dict[str, str]) -> None:
    detail = sql if not params else f"{sql}\n-- parameters: {params!r}"
    audit.record(request, AuditEvent.SQL, detail=detail)


# What the child sends for the page: None, numbers, text, {"cut": text, "length": n}, {"blob": n}.
def display_rows(rows: list[list]) -> list[list[dict]]:
    return [[display_cell(v) for v in row] for row in rows]


def display_cell(value) -> dict:
    """What a cell shows: NULL, a blob's size, or text (redacted, cut for the page)."""
    if value is None:
        return {"null": True}
    if isinstance(value, dict):
        if "blob" in value:
            return {"blob": value["blob"]}
        return {"text": redact(value["cut"])[:CELL_CHARS], "cut": value["length"]}
    if isinstance(value, str):
        text = redact(value)
        if len(text) > CELL_CHARS:
            return {"text": text[:CELL_CHARS], "cut": len(text)}
        return {"text": text}
    return {"text": str(value), "number": True}


def export_row(row: list) -> list:
    """A row of a download: text redacted (blobs arrive as hex)."""
    return [redact(v) if isinstance(v, str) else v for v in row]


def unique_columns(columns: list[str]) -> list[str]:
    """``SELECT 1, 1`` has two columns called "1": exports need distinct keys."""
    seen: dict[str, int] = {}
    out = []
    for name in columns:
        name = name or "column"
        seen[name] = seen.get(name, 0) + 1
        out.append(f"{name}_{seen[name]}" if seen[name] > 1 else name)
    return out
