"""A copy of a state.db with N times the sessions a day, for measuring how pages grow.

    nice -n 10 .venv/bin/python bench/grow.py --source var/bench/state.db \\
        --target var/bench10/state.db --times 10

The source is only read (copied with SQLite's backup API, then attached read-only).  In the
copy, every session is there ``times`` times over the same dates: as itself and as
``<id>~<k>`` for k = 1 … times - 1, with its model and daily usage rows; a parent link points
to the parent's copy of the same round, a title gets `` ~<k>`` (titles are unique).  Messages
are written again with ids ``id * times + k`` in id order, so ids still grow with time as a
writer's do (the pages that search ids by time rely on it), through the file's own triggers:
its full-text indexes are emptied first and end up consistent.  The journal and syncing are
off while the copy is built.
"""

from __future__ import annotations

import argparse
import sqlite3
import time
from pathlib import Path

# Per-session tables copied with their session; (table, column naming the session).
USAGE = (("session_model_usage", "session_id"), ("session_daily_usage", "session_id"))
CHUNK = 50_000  # source message ids per transaction


def columns(db: sqlite3.Connection, table: str, schema: str = "main") -> list[str]:
    return [row[1] for row in db.execute(f'PRAGMA {schema}.table_info("{table}")')]


def copy_rows(db, table: str, changed: dict[str, str], source: str, where: str = "") -> None:
    """INSERT…SELECT the rows of ``source`` into ``table``, ``changed`` columns computed."""
    names = columns(db, table)
    shown = ", ".join(f'"{n}"' for n in names)
    values = ", ".join(changed.get(n, f'"{n}"') for n in names)
    db.execute(f'INSERT INTO "{table}" ({shown}) SELECT {values} FROM {source} {where}')


def empty_messages(db: sqlite3.Connection) -> None:
    """No message left, and none in the full-text indexes the triggers keep; the triggers
    are put back as they were."""
    triggers = db.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'messages'"
    ).fetchall()
    indexes = db.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL%'"
    ).fetchall()
    kept = [(name, sql) for name, sql in indexes if any(name in t for _n, t in triggers)]
    for name, _sql in triggers:
        db.execute(f'DROP TRIGGER "{name}"')
    db.execute("DELETE FROM messages")
    for name, sql in kept:
        if "content=" in sql.replace(" ", ""):
            db.execute(f'INSERT INTO "{name}" ("{name}") VALUES (\'delete-all\')')
        else:
            db.execute(f'DELETE FROM "{name}"')
    for _name, sql in triggers:
        db.execute(sql)


def grow(source: Path, target: Path, times: int) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    for leftover in (target, Path(f"{target}-wal"), Path(f"{target}-shm")):
        leftover.unlink(missing_ok=True)
    started = time.monotonic()

    def say(what: str) -> None:
        print(f"{what} at {time.monotonic() - started:.0f} s", flush=True)

    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    db = sqlite3.connect(f"file:{target}", uri=True, isolation_level=None)
    src.backup(db)
    src.close()
    say("copied")
    db.executescript(
        "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-1000000;"
        "PRAGMA temp_store=MEMORY;"
    )
    db.execute("ATTACH ? AS src", [f"file:{source}?mode=ro"])
    db.execute("BEGIN")
    empty_messages(db)
    db.execute("COMMIT")
    say("messages emptied")
    session_cols = columns(db, "sessions")
    rounds = ", ".join(f"({k})" for k in range(times))
    db.execute("BEGIN")
    for k in range(1, times):
        suffix = f"'~{k}'"
        changed = {"id": f"id || {suffix}"}
        if "parent_session_id" in session_cols:
            changed["parent_session_id"] = f"parent_session_id || {suffix}"
        if "title" in session_cols:
            changed["title"] = f"title || ' ' || {suffix}"
        copy_rows(db, "sessions", changed, "src.sessions")
        for table, column in USAGE:
            if columns(db, table, "src"):
                copy_rows(db, table, {column: f"{column} || {suffix}"}, f'src."{table}"')
    db.execute("COMMIT")
    say("sessions copied")
    (top,) = db.execute("SELECT COALESCE(MAX(id), 0) FROM src.messages").fetchone()
    session = "CASE WHEN k = 0 THEN session_id ELSE session_id || '~' || k END"
    for low in range(0, top, CHUNK):
        db.execute("BEGIN")
        copy_rows(
            db,
            "messages",
            {"id": f"id * {times} + k", "session_id": session},
            f"src.messages, (SELECT column1 AS k FROM (VALUES {rounds}))",
            f"WHERE id > {low} AND id <= {low + CHUNK} ORDER BY id, k",
        )
        db.execute("COMMIT")
        say(f"messages up to id {min(low + CHUNK, top):,} of {top:,} written")
    db.execute("DETACH src")
    db.execute("PRAGMA journal_mode=DELETE")
    db.close()
    say(f"{target}: {target.stat().st_size / 1e9:.2f} GB")


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
