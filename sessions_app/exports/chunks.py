"""Rows of a queryset in keyset order, one short statement per chunk (:func:`keyset_chunks`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from django.conf import settings
from django.db import connections

from hermes_explorer import store
from hermes_explorer.hermes_db.deadline import query_budget

from ..pagination import Keyset

# Rows per chunk query (a few ms on the 1M-message store).
EXPORT_CHUNK_ROWS = 1000
# A chunk of big texts shrinks the next to about this much text, so memory is bounded by bytes
# too (an ordinary chunk of the 1M store holds ~1 MB).
EXPORT_CHUNK_BYTES = 16 * 1024 * 1024
# On a rollback-journal file a chunk follows its statement's time, down to this many rows.
SHORT_READ_MIN_ROWS = 50


def keyset_chunks(
    queryset,
    keyset: Keyset,
    *,
    to_row: Callable | None = None,
    chunk_size: int = EXPORT_CHUNK_ROWS,
    max_chunk_bytes: int = EXPORT_CHUNK_BYTES,
    to_rows: Callable[[list], list] | None = None,
    keys_of: Callable | None = None,
    text_size: Callable[[list], int] | None = None,
) -> Iterator[list]:
    """The rows of ``queryset`` in ``keyset`` order, in lists of ``to_row(row)`` (dicts), or
    ``to_rows(rows)`` of a whole chunk.

    Each chunk is one statement read to the end before it is yielded, so no read transaction
    spans chunks; the next starts strictly after the last row's keys (``keys_of``); big rows
    (``text_size``) shrink the next chunk, so memory is bounded by bytes too."""
    keys_of = keys_of or keyset.values_of
    size = max(1, chunk_size)
    if hasattr(connections[queryset.db], "pipelined") and to_rows and text_size:
        yield from _pipelined(queryset, keyset, keys_of, to_rows, text_size, size, max_chunk_bytes)
        return
    clock = store.ChunkClock(
        size, minimum=min(size, SHORT_READ_MIN_ROWS), maximum=size, alias=queryset.db
    )
    last: list | None = None
    while True:

        def fetch(n: int, last=last, size=size) -> tuple[int, list]:
            # The smaller of the two bounds: time (the clock's ``n``) and bytes (``size``).
            limit = min(n, size)
            return limit, list(_chunk(queryset, keyset, last, limit))

        with query_budget(settings.HERMES_EXPORT_CHUNK_TIMEOUT):
            _, (limit, raw) = clock.run(fetch)
        if not raw:
            return
        last = keys_of(raw[-1])
        full = len(raw) == limit
        used = text_size(raw) if text_size else 0
        rows = to_rows(raw) if to_rows is not None else [to_row(r) for r in raw]
        del raw
        if not text_size:
            used = sum(len(v) for row in rows for v in row.values() if isinstance(v, str))
        size = _next_size(size, used, chunk_size, max_chunk_bytes)
        # Handed over, not kept, so its text is freed once the consumer is done with it.
        handed = [rows]
        del rows
        yield handed.pop()
        if not full:
            return


def _next_size(size: int, used: int, chunk_size: int, max_chunk_bytes: int) -> int:
    """The next chunk's rows, after one of ``size`` rows held ``used`` bytes of text."""
    if used > max_chunk_bytes:
        return max(1, int(size * max_chunk_bytes / used))
    return min(chunk_size, size * 2)


def _chunk(queryset, keyset: Keyset, last: list | None, limit: int):
    """The ``values_list()`` of the chunk after ``last`` (all from the start: None)."""
    qs = queryset if last is None else queryset.filter(keyset.after(last))
    return qs.order_by(*keyset.order_by())[:limit]


def _pipelined(queryset, keyset, keys_of, to_rows, text_size, size, max_chunk_bytes):
    """:func:`keyset_chunks` of whole chunks (``to_rows``, sized by ``text_size``) on a
    PostgreSQL store: each chunk's statement is sent as soon as
    the previous chunk's last keys are known, before that chunk is encoded, so the server
    reads the next chunk while the worker writes this one (``Pipelined``).

    Measured on the 1M-message schema beside the revision before, same rounds
    (``bench/benchmark.py --baseline 292181f --postgres --exports "messages CSV (all)"``,
    ``docs/performance.md``): the full messages CSV 51.6 → 76.5 MB/s."""
    chunk_size = size
    with connections[queryset.db].pipelined() as pipe:

        def send(last: list | None, limit: int):
            with query_budget(settings.HERMES_EXPORT_CHUNK_TIMEOUT):
                return pipe.send(_chunk(queryset, keyset, last, limit)), limit

        pending, limit = send(None, size)
        while True:
            raw = pending.rows()
            if not raw:
                return
            full = len(raw) == limit
            size = _next_size(limit, text_size(raw), chunk_size, max_chunk_bytes)
            if full:
                pending, limit = send(keys_of(raw[-1]), size)
            # Handed over, not kept (nor its rows read), as keyset_chunks hands its chunks.
            handed = [to_rows(raw)]
            del raw
            yield handed.pop()
            if not full:
                return
