"""A copy of a state.db with N times the sessions a day, for measuring how pages grow.

    nice -n 10 .venv/bin/python bench/grow.py --source var/bench/state.db \\
        --target var/bench10/state.db --times 10

The source is only read (copied with SQLite's backup API).  Into the copy, every session is
added ``times - 1`` more times under a new id (``<id>~<k>``) over the same dates, with its
messages (new ids: ``id + k * <largest id>``), its model and daily usage rows.  A parent link
points to the parent's copy of the same round, a title gets `` ~<k>`` (titles are unique).
Messages go in through the file's own triggers, so its full-text indexes stay consistent.
Each round is one transaction, with the journal and syncing off while the copy is built.
"""

from __future__ import annotations

import argparse
import sqlite3
import time
from pathlib import Path

# Per-session tables copied with their session; (table, column naming the session).
USAGE = (("session_model_usage", "session_id"), ("session_daily_usage", "session_id"))


def columns(db: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in db.execute(f'PRAGMA table_info("{table}")')]


def copy_rows(db: sqlite3.Connection, table: str, changed: dict[str, str], where: str = "") -> int:
    """INSERT…SELECT every row of ``table`` into itself, with ``changed`` columns computed."""
    names = columns(db, table)
    if not names:
        return 0
    shown = ", ".join(f'"{n}"' for n in names)
    values = ", ".join(changed.get(n, f'"{n}"') for n in names)
    cursor = db.execute(f'INSERT INTO "{table}" ({shown}) SELECT {values} FROM "{table}" {where}')
    return cursor.rowcount


def grow(source: Path, target: Path, times: int) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    for leftover in (target, Path(f"{target}-wal"), Path(f"{target}-shm")):
        leftover.unlink(missing_ok=True)
    started = time.monotonic()
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    db = sqlite3.connect(target, isolation_level=None)
    src.backup(db)
    src.close()
    print(f"copied in {time.monotonic() - started:.0f} s", flush=True)
    db.executescript(
        "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-1000000;"
        "PRAGMA temp_store=MEMORY;"
    )
    (stride,) = db.execute("SELECT COALESCE(MAX(id), 0) FROM messages").fetchone()
    # The source's rows end at these rowids: each round copies those alone.
    last = {
        table: db.execute(f'SELECT COALESCE(MAX(rowid), 0) FROM "{table}"').fetchone()[0]
        for table in ("sessions", *(t for t, _c in USAGE))
        if columns(db, table)
    }
    for k in range(1, times):
        suffix = f"'~{k}'"
        db.execute("BEGIN")
        session_cols = columns(db, "sessions")
        changed = {"id": f"id || {suffix}"}
        if "parent_session_id" in session_cols:
            changed["parent_session_id"] = f"parent_session_id || {suffix}"
        if "title" in session_cols:
            changed["title"] = f"title || ' ' || {suffix}"
        copy_rows(db, "sessions", changed, f"WHERE rowid <= {last['sessions']}")
        copy_rows(
            db,
            "messages",
            {"id": f"id + {k * stride}", "session_id": f"session_id || {suffix}"},
            f"WHERE id <= {stride} ORDER BY id",
        )
        for table, column in USAGE:
            if table in last:
                copy_rows(
                    db, table, {column: f"{column} || {suffix}"}, f"WHERE rowid <= {last[table]}"
                )
        db.execute("COMMIT")
        print(f"round {k}/{times - 1} done at {time.monotonic() - started:.0f} s", flush=True)
    db.execute("PRAGMA journal_mode=DELETE")
    db.close()
    print(f"{target}: {target.stat().st_size / 1e9:.2f} GB in {time.monotonic() - started:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", type=Path, required=True, help="the store to grow (read only)")
    parser.add_argument("--target", type=Path, required=True, help="the grown copy (replaced)")
    parser.add_argument("--times", type=int, default=10, help="sessions a day, times the source's")
    args = parser.parse_args()
    if args.times < 1:
        parser.error("--times must be at least 1")
    if args.target.resolve() == args.source.resolve():
        parser.error("--target must differ from --source")
    grow(args.source, args.target, args.times)


if __name__ == "__main__":
    main()
