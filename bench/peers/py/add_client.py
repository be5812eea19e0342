#!/usr/bin/env python3
"""The benchmark's client side on the official Python SDK (`mcp` 2.x, its `Client`).

    python add_client.py (--stdio CMD | --url URL) [-n N] [-k K] [--warmup W] [--max-seconds T]

Connects as the SDK's documentation shows (`Client(StdioServerParameters(...))` for a command,
`Client(url)` for Streamable HTTP), makes `tools/call add` {a: 1, b: 2} K at a time on that one
session (K tasks of one anyio task group), and prints one JSON object with the fields
`switchboard-load --json` uses for the same figures. A call counts as an error unless its answer
is a result whose text is `3`.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

import anyio
from mcp import Client, StdioServerParameters


def rank(sorted_us: list[int], p: float) -> int | None:
    if not sorted_us:
        return None
    return sorted_us[min(len(sorted_us), max(1, math.ceil(p * len(sorted_us)))) - 1]


async def phase(client: Client, k: int, count: int, record: bool, tally: dict) -> None:
    taken = 0

    async def worker() -> None:
        nonlocal taken
        while taken < count:
            taken += 1
            t = time.perf_counter()
            try:
                r = await client.call_tool("add", {"a": 1, "b": 2})
                ok = not r.is_error and bool(r.content) and getattr(r.content[0], "text", None) == "3"
                why = "the answer is not the text 3"
            except Exception as e:  # noqa: BLE001 - every failure is counted, the first one noted
                ok, why = False, repr(e)
            us = int((time.perf_counter() - t) * 1e6)
            if record:
                tally["samples"].append(us)
                if not ok:
                    tally["errors"] += 1
            if not ok:
                tally.setdefault("first_error", why)

    async with anyio.create_task_group() as tg:
        for _ in range(k):
            tg.start_soon(worker)


async def run(a: argparse.Namespace) -> dict:
    if a.stdio:
        server = StdioServerParameters(command="sh", args=["-c", f"exec {a.stdio}"])
        transport, target = "stdio", a.stdio
    else:
        server = a.url
        transport, target = "http", a.url
    warmup = a.warmup if a.warmup is not None else min(a.n // 10, 1000)
    tally: dict = {"samples": [], "errors": 0}
    report = {"mode": "calls", "client": "python-sdk", "transport": transport, "target": target, "in_flight": a.k, "warmup": warmup}
    timed_out = True
    with anyio.move_on_after(a.max_seconds):
        async with Client(server) as client:
            await phase(client, a.k, warmup, False, tally)
            cpu0, t0 = time.process_time(), time.perf_counter()
            await phase(client, a.k, a.n, True, tally)
            seconds, cpu = time.perf_counter() - t0, time.process_time() - cpu0
            timed_out = False
    if timed_out:
        return {**report, "calls": 0, "errors": 0, "timed_out": True, "notes": ["stopped at --max-seconds"]}
    s = sorted(tally["samples"])
    calls = len(s)
    return {
        **report,
        "calls": calls,
        "seconds": seconds,
        "calls_per_sec": calls / seconds if seconds > 0 else None,
        "p50_us": rank(s, 0.50),
        "p90_us": rank(s, 0.90),
        "p99_us": rank(s, 0.99),
        "max_us": s[-1] if s else None,
        "mean_us": sum(s) / calls if calls else None,
        "errors": tally["errors"],
        "client_cpu_us_per_call": cpu * 1e6 / calls if calls else None,
        "timed_out": False,
        "notes": [f"first error: {tally['first_error']}"] if "first_error" in tally else [],
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    target = ap.add_mutually_exclusive_group(required=True)
    target.add_argument("--stdio", metavar="CMD")
    target.add_argument("--url")
    ap.add_argument("-n", type=int, default=1000)
    ap.add_argument("-k", type=int, default=1)
    ap.add_argument("--warmup", type=int)
    ap.add_argument("--max-seconds", type=float, default=60.0)
    a = ap.parse_args()
    if a.n < 1 or not 1 <= a.k <= 10000 or not 0 < a.max_seconds <= 86400:
        ap.error("-n >= 1, -k in 1..=10000, --max-seconds in (0, 86400]")
    report = anyio.run(run, a)
    print(json.dumps(report))
    return 1 if report["timed_out"] else 0


if __name__ == "__main__":
    sys.exit(main())
