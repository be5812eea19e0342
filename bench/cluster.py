#!/usr/bin/env python3
"""The cluster rows of the benchmark: `switchboard serve --example add --http` behind a
round-robin nginx, with one node and with two, sessions in memory and in Redis; every process
on 127.0.0.1 (Debian's redis-server and nginx). Called by bench/run.sh after bench.py.

Each row is switchboard-load with K connections (a session each, 2025-11-25) through nginx:
calls/s, p50 and p99, and the Redis round trips each call cost, read from the nodes' own count
(logged when they stop). With two nodes, nginx alternates the requests of every session
between the nodes, so about half of them are relayed by the node that does not serve the
session. Rows are in one run, in turns: compare them with each other, not with another day.

  python3 bench/cluster.py [--smoke] [--rounds N] [--out FILE.md]

Environment: BENCH_SWITCHBOARD, BENCH_LOAD (set by bench/run.sh).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROWS = [
    # label, nodes, store, K
    ("nginx -> 1 node, sessions in memory, K=1", 1, "memory", 1),
    ("nginx -> 1 node, sessions in Redis, K=1", 1, "redis", 1),
    ("nginx -> 2 nodes, sessions in Redis, K=1", 2, "redis", 1),
    ("nginx -> 1 node, sessions in memory, K=32", 1, "memory", 32),
    ("nginx -> 1 node, sessions in Redis, K=32", 1, "redis", 32),
    ("nginx -> 2 nodes, sessions in Redis, K=32", 2, "redis", 32),
]


class BenchError(Exception):
    pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen, what: str, timeout: float = 20.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise BenchError(f"{what} exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise BenchError(f"{what} did not listen on 127.0.0.1:{port} within {timeout} s")


class Cluster:
    """redis-server (for the Redis rows), N nodes and nginx in a temporary folder."""

    def __init__(self, nodes: int, store: str, work: Path):
        self.work = work
        self.procs: list[subprocess.Popen] = []
        self.node_logs: list[Path] = []
        sb = os.environ["BENCH_SWITCHBOARD"]
        store_args: list[str] = []
        if store == "redis":
            self.redis_port = free_port()
            redis = subprocess.Popen(
                ["redis-server", "--bind", "127.0.0.1", "--port", str(self.redis_port), "--save", "",
                 "--appendonly", "no", "--dir", str(work), "--loglevel", "warning"],
                stdout=subprocess.DEVNULL, stderr=open(work / "redis.log", "w"))
            self.procs.append(redis)
            wait_port(self.redis_port, redis, "redis-server")
            store_args = ["--store", f"redis://127.0.0.1:{self.redis_port}/0"]
            # The deployment secret every node shares (read from the environment).
            os.environ.setdefault("SWITCHBOARD_SECRET", "bench-cluster-secret-" + "0" * 32)
        self.node_ports = []
        self.nodes: list[subprocess.Popen] = []
        for i in range(nodes):
            port = free_port()
            log = work / f"node-{i}.log"
            p = subprocess.Popen(
                [sb, "serve", "--example", "add", "--http", f"127.0.0.1:{port}", *store_args,
                 *(["--node-id", f"n{i}"] if store_args else [])],
                stdout=subprocess.DEVNULL, stderr=open(log, "w"))
            self.procs.append(p)
            self.nodes.append(p)
            self.node_logs.append(log)
            wait_port(port, p, f"node {i}")
            self.node_ports.append(port)
        self.proxy_port = free_port()
        (work / "tmp").mkdir(exist_ok=True)
        upstream = "\n".join(f"    server 127.0.0.1:{p} max_fails=0;" for p in self.node_ports)
        conf = f"""worker_processes 1;
pid {work}/nginx.pid;
error_log {work}/nginx-error.log warn;
daemon off;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  # The load tool keeps its connections; nginx would close each after 1,000 requests.
  keepalive_requests 10000000;
  client_body_temp_path {work}/tmp/body;
  proxy_temp_path {work}/tmp/proxy;
  fastcgi_temp_path {work}/tmp/fastcgi;
  uwsgi_temp_path {work}/tmp/uwsgi;
  scgi_temp_path {work}/tmp/scgi;
  upstream nodes {{
{upstream}
    keepalive 64;
    keepalive_requests 10000000;
  }}
  server {{
    listen 127.0.0.1:{self.proxy_port};
    location / {{
      proxy_pass http://nodes;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_buffering off;
      proxy_request_buffering off;
      proxy_read_timeout 300s;
    }}
  }}
}}
"""
        (work / "nginx.conf").write_text(conf)
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        p = subprocess.Popen([nginx, "-c", str(work / "nginx.conf"), "-p", str(work)],
                             stdout=subprocess.DEVNULL, stderr=open(work / "nginx.log", "w"))
        self.procs.append(p)
        wait_port(self.proxy_port, p, "nginx")
        self.url = f"http://127.0.0.1:{self.proxy_port}/mcp"

    def round_trips(self) -> int | None:
        """Stops the nodes (SIGTERM) and sums the Redis round trips they report."""
        total = 0
        found = False
        for p, log in zip(self.nodes, self.node_logs):
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
            m = re.findall(r"round_trips=(\d+)", log.read_text(errors="replace"))
            if m:
                total += int(m[-1])
                found = True
        return total if found else None

    def stop(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


def load(url: str, n: int, k: int, max_seconds: float) -> dict:
    cmd = [os.environ["BENCH_LOAD"], "--json", "--max-seconds", str(max_seconds), "--url", url,
           "-n", str(n), "-k", str(k), "--warmup", str(max(n // 10, 10))]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=max_seconds + 60)
    if p.returncode == 2 or not p.stdout.strip():
        raise BenchError(f"switchboard-load failed (exit {p.returncode}): {' '.join(cmd)}\n{p.stderr.strip()}")
    r = json.loads(p.stdout)
    if r.get("errors"):
        raise BenchError(f"{r['errors']} errors through {url}: {r.get('notes')}")
    return r


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    rounds = a.rounds or (1 if a.smoke else 3)
    calls = {1: 300 if a.smoke else 5000, 32: 600 if a.smoke else 30000}
    results: dict[str, list[dict]] = {r[0]: [] for r in ROWS}
    for rnd in range(rounds):
        print(f"-- cluster round {rnd + 1}/{rounds}", file=sys.stderr, flush=True)
        for label, nodes, store, k in ROWS:
            work = Path(tempfile.mkdtemp(prefix="sb-cluster-bench-"))
            cluster = None
            try:
                cluster = Cluster(nodes, store, work)
                n = calls[k]
                r = load(cluster.url, n, k, 120.0)
                trips = cluster.round_trips() if store == "redis" else 0
                # Calls made in all: the warm-up, the measured ones, and one initialize and
                # one initialized notification per connection.
                made = r["calls"] + r.get("warmup", 0)
                r["redis_round_trips_per_call"] = (trips / made) if (trips is not None and made) else None
                results[label].append(r)
                print(f"   {label:<46} {r['calls_per_sec'] or 0:>9.0f} calls/s  p99 {r['p99_us'] or 0:>7} us"
                      f"  redis/call {r['redis_round_trips_per_call'] if r['redis_round_trips_per_call'] is not None else '-'}",
                      file=sys.stderr, flush=True)
            finally:
                if cluster:
                    cluster.stop()
                shutil.rmtree(work, ignore_errors=True)

    def med(vals):
        vals = [v for v in vals if v is not None]
        return statistics.median(vals) if vals else None

    base = {1: med(r["calls_per_sec"] for r in results[ROWS[0][0]]),
            32: med(r["calls_per_sec"] for r in results[ROWS[3][0]])}
    lines = [
        f"Cluster rows ({'smoke' if a.smoke else 'full'} mode, {rounds} round(s), medians): "
        f"`switchboard serve --example add --http` behind nginx (round robin, keep-alive to the nodes), "
        f"a session per connection, 2025-11-25.",
        "",
        "| row | calls/s | vs 1 node in memory | p50 µs | p99 µs | Redis round trips per call |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for label, nodes, store, k in ROWS:
        rs = results[label]
        cps = med(r["calls_per_sec"] for r in rs)
        ratio = f"{cps / base[k]:.2f}" if cps and base[k] else "-"
        trips = med(r["redis_round_trips_per_call"] for r in rs)
        lines.append(
            f"| {label} | {cps or 0:.0f} | {ratio} | {med(r['p50_us'] for r in rs) or 0:.0f} | "
            f"{med(r['p99_us'] for r in rs) or 0:.0f} | {('%.2f' % trips) if trips is not None else '-'} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        Path(a.out).write_text(text)
        Path(a.out).with_suffix(".json").write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BenchError as e:
        print(f"bench/cluster.py: {e}", file=sys.stderr)
        sys.exit(1)
