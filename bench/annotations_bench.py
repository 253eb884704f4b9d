"""Time the session list filtered by a tag and the session page with 20 notes.

Builds a throwaway app database (never touches the state.db, which it opens read-only like
the explorer), tags ``--tagged`` sessions of the store spread over its whole time range, writes
20 notes on one session, and times the pages in-process through Django's test client (the
whole middleware stack, no HTTP server): median and p90 of ``--runs`` requests each.

    python bench/annotations_bench.py --store var/bench/state.db --runs 11
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", required=True)
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--tagged", type=int, default=10_000)
    args = parser.parse_args()

    workdir = tempfile.mkdtemp(prefix="annotations-bench-")
    os.environ.update(
        DJANGO_SETTINGS_MODULE="hermes_explorer.settings",
        DJANGO_SECRET_KEY="bench-only",
        DJANGO_ALLOWED_HOSTS="testserver",
        HERMES_EXPLORER_DATA_DIR=workdir,
        HERMES_STATE_DB=str(Path(args.store).resolve()),
    )
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    from annotations_app.models import AnnotatedSession, Note, SessionTag, Tag
    from annotations_app.targets import current_store
    from hermes_explorer import store

    call_command("migrate", verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)
    user = get_user_model().objects.create_user("bench", password="x", is_staff=True)
    client = Client()
    client.force_login(user)

    (total,) = store.one("SELECT COUNT(*) FROM sessions")
    step = max(1, total // args.tagged)
    rows = store.rows(
        "SELECT id, started_at, source FROM sessions WHERE rowid %% %s = 0 LIMIT %s",
        [step, args.tagged],
    )
    key = current_store()
    tag = Tag.objects.create(name="bench")
    AnnotatedSession.objects.bulk_create(
        [AnnotatedSession(store=key, session_id=i, started_at=s, source=src) for i, s, src in rows],
        batch_size=2000,
    )
    anchors = list(AnnotatedSession.objects.filter(store=key))
    tags = []
    for a in anchors:
        st = SessionTag(target=a, tag=tag)
        st.copy_keys(a)
        tags.append(st)
    SessionTag.objects.bulk_create(tags, batch_size=2000)
    noted = anchors[len(anchors) // 2]
    Note.objects.bulk_create(
        [
            Note(target=noted, author=user, author_name="bench", text=f"note {n} " * 20)
            for n in range(20)
        ]
    )
    AnnotatedSession.objects.filter(pk=noted.pk).update(notes_count=20)
    print(
        f"store {args.store}: {total:,} sessions; tagged {len(tags):,}; notes on {noted.session_id}"
    )

    def timed(path: str) -> tuple[float, float, float]:
        """Median and p90 wall time, and median CPU time of this process (ms): on a busy
        machine the CPU time says what the page costs, the wall time what a user waits."""
        client.get(path)
        wall, cpu = [], []
        for _ in range(args.runs):
            began, began_cpu = time.perf_counter(), time.process_time()
            response = client.get(path)
            wall.append((time.perf_counter() - began) * 1000)
            cpu.append((time.process_time() - began_cpu) * 1000)
            assert response.status_code == 200, (path, response.status_code)
        wall.sort()
        p90 = wall[max(0, int(len(wall) * 0.9) - 1)]
        return statistics.median(wall), p90, statistics.median(cpu)

    first = client.get("/sessions/?tag=bench")
    cursor = re.search(r"cursor=([\w-]+)", first.content.decode()).group(1)
    plain = Note.objects.exclude(target=noted).first()
    other = anchors[len(anchors) // 3].session_id if plain is None else plain.target.session_id
    pages = [
        ("/sessions/ (no filter)", "/sessions/"),
        ("/sessions/?tag=bench", "/sessions/?tag=bench"),
        ("/sessions/?tag=bench page 2", f"/sessions/?tag=bench&cursor={cursor}"),
        ("/sessions/?tag=bench&sort=started_at", "/sessions/?tag=bench&sort=started_at"),
        ("/sessions/?tag=bench&source=cli", "/sessions/?tag=bench&source=cli"),
        ("session page, 20 notes", f"/sessions/{noted.session_id}/"),
        ("session page, no notes", f"/sessions/{other}/"),
    ]
    if os.environ.get("BENCH_QUERIES"):
        from django.db import connections

        path = os.environ["BENCH_QUERIES"]
        client.get(path)
        for alias in ("default", "hermes"):
            connections[alias].force_debug_cursor = True
            connections[alias].queries_log.clear()
        began = time.perf_counter()
        client.get(path)
        print(f"total {(time.perf_counter() - began) * 1000:.1f} ms")
        for alias in ("default", "hermes"):
            for q in connections[alias].queries:
                print(f"{alias:8s} {float(q['time']) * 1000:6.1f} ms  {q['sql'][:150]}")
        return
    if os.environ.get("BENCH_PROFILE"):
        import cProfile
        import pstats

        client.get(os.environ["BENCH_PROFILE"])
        profile = cProfile.Profile()
        profile.runctx("client.get(p)", {}, {"client": client, "p": os.environ["BENCH_PROFILE"]})
        pstats.Stats(profile).sort_stats("cumulative").print_stats(45)
        return
    for label, path in pages:
        median, p90, cpu = timed(path)
        print(f"{label:42s} median {median:6.1f} ms  p90 {p90:6.1f} ms  cpu {cpu:6.1f} ms")


if __name__ == "__main__":
    main()
