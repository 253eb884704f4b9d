"""The benchmark in multi-store mode: five profiles totalling 1M messages, over HTTP.

    .venv/bin/python bench/multistore.py [--home var/bench-home] [--runs 11]

It builds (or reuses) a ``HERMES_HOME`` of five profiles with the demo generator — ``default``
600k messages (current layout), ``support`` 150k (legacy), ``coder`` 100k (current), ``cron``
100k (doc), ``ops`` 50k (legacy) — serves it with gunicorn as deployed, signs in and times the
pages that span every profile, beside the same pages of the largest profile alone
(``/p/default/…``, which is the single-store page).  Warm-up rounds come first, so insights
figures are the warm ones.  A measurement, not a test: it prints numbers and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmark import (  # noqa: E402
    PY,
    ROOT,
    Explorer,
    fetch,
    free_port,
    log,
    percentile,
)

# profile: (layout, sessions, messages, seed)
PROFILES = {
    "default": ("current", 12_000, 600_000, 7),
    "support": ("legacy", 3_000, 150_000, 8),
    "coder": ("current", 2_000, 100_000, 9),
    "cron": ("doc", 2_000, 100_000, 10),
    "ops": ("legacy", 1_000, 50_000, 11),
}


def store_path(home: Path, profile: str) -> Path:
    return home / "state.db" if profile == "default" else home / "profiles" / profile / "state.db"


def ensure_home(home: Path, scale: float = 1.0) -> None:
    for profile, (layout, sessions, messages, seed) in PROFILES.items():
        sessions, messages = max(1, int(sessions * scale)), int(messages * scale)
        path = store_path(home, profile)
        if path.exists():
            log(f"reusing {path}")
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        log(f"building {profile}: {messages:,} messages, {layout} layout …")
        started = time.monotonic()
        subprocess.run(
            [PY, "manage.py", "make_demo_db", str(path), "--shape", layout]
            + ["--sessions", str(sessions), "--messages", str(messages), "--seed", str(seed)],
            cwd=ROOT,
            check=True,
            env={**os.environ, "DJANGO_DEBUG": "1"},
            stdout=subprocess.DEVNULL,
        )
        log(f"built in {time.monotonic() - started:.0f}s")


class HomeExplorer(Explorer):
    """The benchmark's explorer, serving a HERMES_HOME instead of one file."""

    def __init__(self, home: Path, workdir: Path, port: int):
        super().__init__(store_path(home, "default"), workdir, port)
        self.env.pop("HERMES_STATE_DB", None)
        self.env["HERMES_HOME"] = str(home)


PAGES = [
    ("all profiles: sessions", "/sessions/"),
    ("one profile (600k): sessions", "/p/default/sessions/"),
    ("all profiles: messages", "/messages/"),
    ("one profile (600k): messages", "/p/default/messages/"),
    ("all profiles: search rare word", "/search/?q=zyxwvut"),
    ("one profile (600k): search rare word", "/p/default/search/?q=zyxwvut"),
    ("all profiles: search common word", "/search/?q=telegram"),
    ("one profile (600k): search common word", "/p/default/search/?q=telegram"),
    ("all profiles: search common, newest", "/search/?q=telegram&sort=newest"),
    ("all profiles: insights 30 days (warm)", "/insights/?days=30"),
    ("one profile (600k): insights 30 days (warm)", "/p/default/insights/?days=30"),
    ("two profiles: sessions", "/sessions/?profile=coder&profile=cron"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, default=ROOT / "var" / "bench-home")
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--scale", type=float, default=1.0, help="fraction of the sizes above (a quick run)"
    )
    args = parser.parse_args()
    ensure_home(args.home, args.scale)
    workdir = Path(tempfile.mkdtemp(prefix="hermes-bench-multi-"))
    explorer = HomeExplorer(args.home, workdir, free_port())
    samples: dict[str, list] = {path: [] for _name, path in PAGES}
    try:
        explorer.start()
        log(f"home: {args.home} · {len(PROFILES)} profiles · runs {args.runs} after warm-up")
        for round_no in range(args.warmup + args.runs):
            for _name, path in PAGES:
                sample = fetch(explorer, path)
                if round_no >= args.warmup:
                    samples[path].append(sample)
    finally:
        explorer.stop()
    rows = []
    log(f"\n{'page':46} {'median ms':>10} {'p95 ms':>8} {'status':>6}")
    for name, path in PAGES:
        seconds = [s.seconds for s in samples[path]]
        if not seconds:
            continue
        med, p95 = statistics.median(seconds), percentile(seconds, 95)
        status = samples[path][-1].status
        rows.append({"page": name, "url": path, "median_ms": med * 1000, "p95_ms": p95 * 1000})
        log(f"{name:46} {med * 1000:10.1f} {p95 * 1000:8.1f} {status:6}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
