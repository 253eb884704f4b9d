"""Many people at once: concurrent users on the sessions list, search and insights.

    .venv/bin/python bench/load.py --store var/bench/state.db          # 2 instances, 50 users
    .venv/bin/python bench/load.py --url http://127.0.0.1:8000 --username u --password p
    .venv/bin/python bench/load.py --help

By default it starts what "Running on several machines" describes, on this host only
(``tests/cluster.py``): a throwaway PostgreSQL and Redis, two gunicorn instances of the
explorer and Caddy load-balancing them, all on 127.0.0.1; with ``--url`` it loads a running
explorer instead.  Each simulated user signs in (once, shared: sign-ins are deliberately slow
password hashes, not what is measured), then for ``--duration`` seconds opens a page, waits a
think time, opens another.  The pages, in proportion: the sessions list (first page, a
filtered page), full-text search (a common and a rarer word) and insights (30 days, all time).

A small asyncio client (httpx) rather than Locust: one file, no extra dependencies beyond
httpx, a closed loop with a fixed number of users and a fixed end, and the figures printed as
the team reads them (p50/p95/p99 per page, errors, requests per second).  Requests that fail
(a status other than 200, or a transport error) are counted as errors, never retried.

A local cluster runs ``manage.py insights_warm`` before its instances start, as a deployment
does after install (``--cold`` skips it: the first insights views then start the summaries'
build).  Before the measured phase every page is requested once (warm-up, not counted).

This is a measurement, not a test: it prints numbers and exits 0 (1 if any request failed).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.cluster import CSRF_FIELD, PASSWORD, USERNAME  # noqa: E402


@dataclass
class Page:
    name: str
    path: str
    weight: int
    samples: list[float] = field(default_factory=list)
    errors: int = 0


def pages(common: str, rare: str) -> list[Page]:
    return [
        Page("sessions list", "/sessions/", 4),
        Page("sessions list: source=telegram", "/sessions/?source=telegram", 2),
        Page(f"search: {common}", f"/search/?q={common}", 2),
        Page(f"search: {rare}", f"/search/?q={rare}", 1),
        Page("insights: 30 days", "/insights/?days=30", 2),
        Page("insights: all time", "/insights/?days=all", 1),
    ]


def _cpu_ticks() -> dict[int, tuple[int, int]]:
    """Every process: pid -> (parent pid, user + system clock ticks)."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out[int(entry.name)] = (int(fields[1]), int(fields[11]) + int(fields[12]))
    return out


def server_cpu_seconds(roots: list[int]) -> float:
    """CPU seconds used so far by these processes and all their descendants."""
    import os

    ticks = _cpu_ticks()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in ticks.items():
        children.setdefault(ppid, []).append(pid)
    total, todo, seen = 0, list(roots), set()
    while todo:
        pid = todo.pop()
        if pid in seen or pid not in ticks:
            continue
        seen.add(pid)
        total += ticks[pid][1]
        todo.extend(children.get(pid, []))
    return total / os.sysconf("SC_CLK_TCK")


def cluster_roots(cluster) -> list[int]:
    roots = [i.proc.pid for i in cluster.instances if i.proc is not None]
    roots += [p.pid for p in (cluster.caddy, cluster.redis.proc) if p is not None]
    try:
        roots.append(int((cluster.pg.data / "postmaster.pid").read_text().split()[0]))
    except (OSError, ValueError, IndexError):
        pass
    return roots


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = (len(ordered) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


async def sign_in(base: str, username: str, password: str) -> httpx.Cookies:
    async with httpx.AsyncClient(timeout=60) as client:
        page = await client.get(f"{base}/accounts/login/")
        token = CSRF_FIELD.search(page.text).group(1)
        response = await client.post(
            f"{base}/accounts/login/",
            data={"csrfmiddlewaretoken": token, "username": username, "password": password},
            headers={"Referer": f"{base}/"},
        )
        if response.status_code != 302:
            raise SystemExit(f"sign-in failed: {response.status_code}")
        return client.cookies


async def user(
    base: str,
    cookies: httpx.Cookies,
    chosen: list[Page],
    *,
    until: float,
    think: tuple[float, float],
    rng: random.Random,
    transport_errors: list[str],
) -> None:
    weights = [p.weight for p in chosen]
    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    async with httpx.AsyncClient(cookies=cookies, timeout=30, limits=limits) as client:
        # Users do not all click in the same instant.
        await asyncio.sleep(rng.uniform(0, think[1]))
        while time.monotonic() < until:
            page = rng.choices(chosen, weights)[0]
            began = time.monotonic()
            try:
                response = await client.get(base + page.path)
                await response.aread()
                ok = response.status_code == 200
            except httpx.HTTPError as exc:
                ok = False
                transport_errors.append(f"{page.path}: {type(exc).__name__}")
            elapsed = time.monotonic() - began
            if ok:
                page.samples.append(elapsed)
            else:
                page.errors += 1
            await asyncio.sleep(rng.uniform(*think))


async def run(args, base: str, username: str, password: str, roots: list[int]) -> dict:
    cookies = await sign_in(base, username, password)
    chosen = pages(args.common, args.rare)
    async with httpx.AsyncClient(cookies=cookies, timeout=300) as client:
        for page in chosen:
            began = time.monotonic()
            response = await client.get(base + page.path)
            print(
                f"warm-up {page.name:34} {response.status_code} "
                f"{(time.monotonic() - began) * 1000:8.0f} ms",
                flush=True,
            )
    rng = random.Random(args.seed)
    transport_errors: list[str] = []
    cpu_before = server_cpu_seconds(roots) if roots else None
    began = time.monotonic()
    until = began + args.duration
    await asyncio.gather(
        *(
            user(
                base,
                cookies,
                chosen,
                until=until,
                think=(args.think_min, args.think_max),
                rng=random.Random(rng.random()),
                transport_errors=transport_errors,
            )
            for _ in range(args.users)
        )
    )
    wall = time.monotonic() - began
    cpu = server_cpu_seconds(roots) - cpu_before if roots else None
    every = [s for p in chosen for s in p.samples]
    errors = sum(p.errors for p in chosen)
    result = {
        "users": args.users,
        "duration_s": round(wall, 1),
        "think_s": [args.think_min, args.think_max],
        "requests": len(every) + errors,
        "errors": errors,
        "requests_per_s": round((len(every) + errors) / wall, 1),
        "p50_ms": round(percentile(every, 50) * 1000, 1),
        "p95_ms": round(percentile(every, 95) * 1000, 1),
        "p99_ms": round(percentile(every, 99) * 1000, 1),
        "pages": [
            {
                "page": p.name,
                "requests": len(p.samples) + p.errors,
                "errors": p.errors,
                "median_ms": round(statistics.median(p.samples) * 1000, 1) if p.samples else None,
                "p95_ms": round(percentile(p.samples, 95) * 1000, 1),
            }
            for p in chosen
        ],
        "transport_errors": transport_errors[:10],
    }
    if cpu is not None and every:
        # What the servers (gunicorn, Caddy, PostgreSQL, Redis) spent per request: with the
        # machine's other load set aside, how many requests a second its cores could serve.
        result["server_cpu_s"] = round(cpu, 1)
        result["server_cpu_ms_per_request"] = round(cpu / result["requests"] * 1000, 1)
        result["cpu_bound_requests_per_s_per_core"] = round(result["requests"] / cpu, 1)
    return result


def report(result: dict) -> None:
    print(
        f"\n{result['users']} users · {result['duration_s']} s · think "
        f"{result['think_s'][0]}–{result['think_s'][1]} s · {result['requests']} requests "
        f"({result['requests_per_s']}/s) · errors {result['errors']}"
    )
    print(f"{'page':36} {'requests':>8} {'errors':>6} {'median ms':>10} {'p95 ms':>8}")
    for p in result["pages"]:
        median = f"{p['median_ms']:.1f}" if p["median_ms"] is not None else "-"
        print(f"{p['page']:36} {p['requests']:8} {p['errors']:6} {median:>10} {p['p95_ms']:8.1f}")
    print(
        f"{'all pages':36} {result['requests']:8} {result['errors']:6} "
        f"{result['p50_ms']:10.1f} {result['p95_ms']:8.1f}   (p99 {result['p99_ms']:.1f} ms)"
    )
    if "server_cpu_ms_per_request" in result:
        print(
            f"server CPU {result['server_cpu_s']} s: "
            f"{result['server_cpu_ms_per_request']} ms per request "
            f"(≈ {result['cpu_bound_requests_per_s_per_core']} requests/s per core)"
        )
    for line in result["transport_errors"]:
        print("  transport error:", line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running explorer (else a local cluster is started)")
    parser.add_argument("--username", default=USERNAME)
    parser.add_argument("--password", default=PASSWORD)
    parser.add_argument("--store", type=Path, help="state.db of the local cluster")
    parser.add_argument("--instances", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers per instance")
    parser.add_argument("--threads", type=int, default=4, help="threads per worker")
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--duration", type=float, default=60, help="measured seconds")
    parser.add_argument("--think-min", type=float, default=1.0)
    parser.add_argument("--think-max", type=float, default=3.0)
    parser.add_argument("--common", default="telegram", help="a word found in many messages")
    parser.add_argument("--rare", default="zyxwvut", help="a word found in few messages")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--cold",
        action="store_true",
        help="skip insights_warm (which a deployment runs after install) before the instances start",
    )
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    args = parser.parse_args()

    cluster = None
    if args.url:
        base = args.url.rstrip("/")
        if not base.startswith(("http://127.0.0.1", "http://localhost", "http://[::1]")):
            raise SystemExit("--url: load only a local explorer (127.0.0.1).")
    else:
        if args.store is None:
            raise SystemExit("--store (a state.db) or --url is needed")
        from tests.cluster import Cluster, why_not

        why = why_not()
        if why:
            raise SystemExit(f"cannot start a local cluster: {why}")
        cluster = Cluster(
            args.store.resolve(),
            instances=args.instances,
            workers=args.workers,
            threads=args.threads,
            extra_env={"GUNICORN_ACCESS_LOG": "/dev/null"},
            warm=not args.cold,
        )
        print(
            f"starting PostgreSQL, Redis, {args.instances} instances "
            f"({args.workers} workers × {args.threads} threads) and Caddy …",
            flush=True,
        )
        cluster.start()
        base = cluster.url
    try:
        roots = cluster_roots(cluster) if cluster is not None else []
        result = asyncio.run(run(args, base, args.username, args.password, roots))
    finally:
        if cluster is not None:
            cluster.stop()
    result["target"] = "local cluster via Caddy" if cluster else base
    result["load_average_after"] = Path("/proc/loadavg").read_text().split()[:3]
    report(result)
    print("load average after:", " ".join(result["load_average_after"]))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    sys.exit(1 if result["errors"] else 0)


if __name__ == "__main__":
    main()
