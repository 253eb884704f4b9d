"""``manage.py make_demo_db PATH``: write a realistic, seeded Hermes state.db (demo and
benchmark stores), renamed into place only when complete so no reader sees a half-built file.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from hermes_fixtures.ddl import SHAPES
from hermes_fixtures.demo import build_demo_db


def _remove_sidecars(path: Path) -> None:
    # A stale -wal next to a new main file could be replayed into it: never leave one.
    for suffix in ("-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


class Command(BaseCommand):
    help = "Build a demo/benchmark Hermes state.db (seeded, deterministic) at PATH."
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="where to write the state.db")
        parser.add_argument("--sessions", type=int, default=300)
        parser.add_argument("--messages", type=int, default=15_000)
        parser.add_argument("--seed", type=int, default=42)
        parser.add_argument("--days", type=int, default=120, help="time window of the data")
        parser.add_argument("--shape", choices=SHAPES, default="current")
        parser.add_argument(
            "--force", action="store_true", help="replace PATH if it already exists"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path = Path(options["path"]).expanduser().resolve()
        if path.exists() and not options["force"]:
            raise CommandError(f"{path} exists; use --force to replace it")
        if options["sessions"] < 1 or options["messages"] < 0:
            raise CommandError("--sessions must be at least 1 and --messages at least 0")
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.building-{os.getpid()}")
        _remove_sidecars(tmp)
        tmp.unlink(missing_ok=True)

        verbose = options["verbosity"] >= 1
        started = time.monotonic()
        try:
            counts = build_demo_db(
                tmp,
                sessions=options["sessions"],
                messages=options["messages"],
                seed=options["seed"],
                shape=options["shape"],
                days=options["days"],
                progress=self.stdout.write if verbose else None,
            )
            _remove_sidecars(path)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            _remove_sidecars(tmp)
            raise
        elapsed = time.monotonic() - started

        if options["verbosity"] < 1:
            return
        size_mb = path.stat().st_size / 1e6
        self.stdout.write(
            self.style.SUCCESS(
                f"Wrote {path} ({options['shape']} shape, {size_mb:,.1f} MB) in {elapsed:.1f}s: "
                f"{counts['sessions']:,} sessions, {counts['messages']:,} messages, "
                f"{counts['tool_calls']:,} tool calls, "
                f"{counts['model_usage_rows']:,} model-usage rows, "
                f"{counts['daily_usage_rows']:,} daily-usage rows"
            )
        )
