#!/usr/bin/env python3
"""Runs the cross-SDK benchmark (called by bench/run.sh once everything is built; stdlib only).

Every figure comes from `switchboard-load --json`. Configurations run in turns: in each round,
every row (transport/mode/K) is run once against every peer before the next row, and the peer
order rotates from round to round; the table shows the median over rounds. HTTP servers are
started fresh for every round and server mode, all peers of a mode side by side (idle ones cost
nothing measurable), and stopped by their pid. A peer that cannot start, or a run that cannot
set up, fails the whole script; a run with errors or that hit --max-seconds is flagged (and fails
the script in smoke mode). The 2026-07-28 rows speak the stateless revision (`switchboard-load
--protocol 2026-07-28`: no initialize, the envelope in every request's `_meta`); a peer whose SDK
is not installed has its rows marked "not installed" and fails the script after the tables, in
every mode; a peer documented as not supporting the revision is only noted.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


class BenchError(Exception):
    pass


@dataclass
class Peer:
    name: str
    # stdio command (a shell word list joined), or None
    stdio: str | None = None
    # HTTP server argv for a server mode ("stateful", "stateless", "json"), or None if absent
    http: dict[str, list[str] | None] = field(default_factory=dict)
    # calls scale (slow SDKs get fewer calls so that every run takes a comparable time)
    scale: float = 1.0
    note: dict[str, str] = field(default_factory=dict)
    # 2026-07-28 (stateless) servers: "stdio" -> a command, "http" -> an argv; None when the peer
    # does not support the revision (`unsupported` says why) or is not installed (`missing`).
    modern: dict[str, str | list[str] | None] = field(default_factory=dict)
    unsupported: str = ""
    missing: str = ""
    # The bench server (add, blob, and with `lists` the --tools N / --resources N flags):
    # "stdio" -> a command, "http" -> an argv (stateful), for the large-answer and list rows.
    bench: dict[str, str | list[str]] = field(default_factory=dict)
    lists: bool = False
    # Only in the list rows (a variant of a peer that differs only in how it pages).
    lists_only: bool = False


MODERN = "2026-07-28"


class OtlpSink:
    """A loopback OTLP/HTTP receiver that takes every export and answers 200 with an empty
    (valid) protobuf response: where the "telemetry on" rows export their spans and metrics, so
    that those rows pay for building, batching and sending what a real collector would get. It
    counts what arrived, so the table can say that telemetry really was on."""

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        sink = self
        self.posts: dict[str, int] = {}
        self.lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
                n = int(self.headers.get("content-length") or 0)
                self.rfile.read(n)
                with sink.lock:
                    sink.posts[self.path] = sink.posts.get(self.path, 0) + 1
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def count(self, path: str) -> int:
        with self.lock:
            return self.posts.get(path, 0)


def ts_v2_missing(a: argparse.Namespace) -> str:
    """Why the TypeScript SDK v2 peer cannot run ("" when it can)."""
    pkg = Path(a.ts_v2_modules) / "@modelcontextprotocol/server/package.json"
    if not pkg.is_file():
        return f"@modelcontextprotocol/server is not installed in {pkg.parent.parent.parent}; run scripts/install-peers.sh"
    return ""


def peers(a: argparse.Namespace) -> list[Peer]:
    sb, pb = a.switchboard, Path(a.peers_bin)
    node, py = a.node, a.python
    ts, pys = str(HERE / "peers/ts/add-server.mjs"), str(HERE / "peers/py/add_server.py")
    ts2 = str(HERE / "peers/ts/add-server-v2.mjs")
    ts2_missing = ts_v2_missing(a)
    sb_help = subprocess.run([sb, "serve", "--help"], capture_output=True, text=True).stdout
    sb_stateless = "--stateless" in sb_help
    sb_http = [sb, "serve", "--example", "add", "--http", "{addr}"]
    rmcp_http = [str(pb / "rmcp-add"), "--http", "{addr}"]
    ts_http = [node, ts, "--http", "{addr}"]
    py_http = [py, pys, "--http", "{addr}"]
    hy_http = [str(pb / "hyper-add"), "--http", "{addr}"]
    # Telemetry on: spans and metrics for every request, exported over OTLP to the sink, and the
    # Prometheus endpoint served (scraped by nobody; its counters are kept all the same).
    otel = ["--otlp", a.otlp_sink.url]
    sb_otel_http = sb_http + otel + ["--metrics"]
    # The same server built without the `otel` feature (`bench/run.sh --full` only): against the
    # plain "switchboard" row (built with it, telemetry off), what having telemetry in the binary
    # costs.
    no_otel = a.switchboard_no_otel
    without_otel = [
        Peer(
            "switchboard (built without otel)",
            stdio=f"{no_otel} serve --example add --stdio",
            http={"stateful": [no_otel, "serve", "--example", "add", "--http", "{addr}"]},
            note={"stateful": "no-default-features"},
        )
    ] if no_otel else []
    return [
        Peer(
            "switchboard",
            stdio=f"{sb} serve --example add --stdio",
            http={
                "stateful": sb_http,
                "stateless": sb_http + ["--stateless"] if sb_stateless else None,
                "json": sb_http + ["--json-response"],
            },
            note={"stateless": "" if sb_stateless else "`switchboard serve` has no --stateless yet"},
            # One binary for both eras: the first request decides on stdio, the header on HTTP.
            modern={"stdio": f"{sb} serve --example add --stdio", "http": sb_http},
            bench={"stdio": f"{sb} serve --example bench --stdio", "http": [sb, "serve", "--example", "bench", "--http", "{addr}"]},
            lists=True,
        ),
        Peer(
            "switchboard (one page)",
            bench={
                "stdio": f"{sb} serve --example bench --page-size {ONE_PAGE} --stdio",
                "http": [sb, "serve", "--example", "bench", "--page-size", str(ONE_PAGE), "--http", "{addr}"],
            },
            lists=True,
            lists_only=True,
        ),
        Peer(
            "switchboard (telemetry on)",
            stdio=f"{sb} serve --example add --otlp {a.otlp_sink.url} --stdio",
            http={"stateful": sb_otel_http, "json": sb_otel_http + ["--json-response"]},
            note={"stateful": "OTLP export + /metrics", "json": "OTLP export + /metrics"},
        ),
        *without_otel,
        Peer(
            "switchboard (--threads 1)",
            http={
                "stateful": sb_http + ["--threads", "1"],
                "stateless": sb_http + ["--stateless", "--threads", "1"] if sb_stateless else None,
                "json": sb_http + ["--json-response", "--threads", "1"],
            },
            note={"stateful": "single-threaded runtime"},
        ),
        Peer(
            "rmcp",
            stdio=f"{pb / 'rmcp-add'} --stdio",
            http={
                "stateful": rmcp_http,
                "stateless": rmcp_http + ["--stateless"],
                "json": rmcp_http + ["--stateless", "--json-response"],
            },
            note={"json": "stateless: rmcp answers in JSON only without sessions"},
            modern={"stdio": f"{pb / 'rmcp-add'} --stdio", "http": rmcp_http},
            bench={"stdio": f"{pb / 'rmcp-add'} --stdio", "http": rmcp_http},
            lists=True,
        ),
        Peer("rmcp (stdio() as documented)", stdio=f"{pb / 'rmcp-add'} --stdio --tokio-stdio", scale=0.25),
        Peer(
            "typescript-sdk",
            stdio=f"{node} {ts} --stdio",
            http={
                "stateful": ts_http,
                "stateless": ts_http + ["--stateless"],
                "json": ts_http + ["--json-response"],
            },
            scale=0.25,
            bench={"stdio": f"{node} {ts} --stdio", "http": ts_http},
            lists=True,
        ),
        Peer(
            "typescript-sdk v2",
            scale=0.25,
            modern={
                "stdio": None if ts2_missing else f"{node} {ts2} --stdio",
                "http": None if ts2_missing else [node, ts2, "--http", "{addr}"],
            },
            missing=ts2_missing,
        ),
        Peer(
            "python-sdk",
            stdio=f"{py} {pys} --stdio",
            http={
                "stateful": py_http,
                "stateless": py_http + ["--stateless"],
                "json": py_http + ["--json-response"],
            },
            scale=0.05,
            # The default app: a 2026-07-28 MCP-Protocol-Version header routes to its modern entry.
            modern={"stdio": f"{py} {pys} --stdio", "http": py_http},
            bench={"stdio": f"{py} {pys} --stdio", "http": py_http},
            lists=True,
        ),
        Peer(
            "serde-add (limit)",
            stdio=str(pb / "serde-add"),
            modern={"stdio": str(pb / "serde-add")},
            note={"modern": "reads no envelope"},
            bench={"stdio": str(pb / "serde-add")},
        ),
        Peer(
            "echo (pipe limit)",
            stdio=str(pb / "echo"),
            modern={"stdio": str(pb / "echo")},
            note={"modern": "reads no envelope"},
        ),
        Peer(
            "hyper-add (limit)",
            http={
                "stateful": hy_http,
                "stateless": hy_http + ["--stateless"],
                "json": hy_http,
            },
            modern={"http": hy_http + ["--stateless"]},
            note={"modern": "--stateless, reads no envelope or header"},
            bench={"http": hy_http},
        ),
    ]


# The arguments of the large-request rows: the `add` arguments with a `pad` member of this many
# bytes of text, which every peer's `add` accepts and ignores.
PAD_BYTES = 1 << 20

# (row label, transport, server mode, K, one session, bytes of `pad` in the arguments)
ROWS = [
    ("stdio, K=1", "stdio", None, 1, False, 0),
    ("stdio, K=32", "stdio", None, 32, False, 0),
    ("HTTP stateful (SSE), K=1", "http", "stateful", 1, False, 0),
    ("HTTP stateful (SSE), K=32 sessions", "http", "stateful", 32, False, 0),
    ("HTTP stateful (SSE), K=32 on one session", "http", "stateful", 32, True, 0),
    ("HTTP stateless, K=32", "http", "stateless", 32, False, 0),
    ("HTTP JSON responses, K=32 sessions", "http", "json", 32, False, 0),
    (f"stdio {MODERN} (stateless), K=1", "stdio", "modern", 1, False, 0),
    (f"stdio {MODERN} (stateless), K=32", "stdio", "modern", 32, False, 0),
    (f"HTTP {MODERN} (stateless), K=1", "http", "modern", 1, False, 0),
    (f"HTTP {MODERN} (stateless), K=32", "http", "modern", 32, False, 0),
    ("stdio, 1 MiB arguments, K=1", "stdio", None, 1, False, PAD_BYTES),
    ("HTTP stateful (SSE), 1 MiB arguments, K=1", "http", "stateful", 1, False, PAD_BYTES),
]


# The large-answer rows: `tools/call blob` with {"bytes": BLOB_BYTES}; every answer must carry
# exactly that much text (`--expect-text-bytes`). (row label, transport)
BLOB_BYTES = 1 << 20
LARGE_ROWS = [
    ("stdio, 1 MiB answers, K=1", "stdio"),
    ("HTTP stateful (SSE), 1 MiB answers, K=1", "http"),
]

# The list rows: whole lists read page after page (`switchboard-load --mode list`), from a bench
# server given --tools N or --resources N. (row label, transport, what is listed)
LIST_ROWS = [
    ("stdio, tools/list", "stdio", "tools"),
    ("stdio, resources/list", "stdio", "resources"),
    ("HTTP stateful (SSE), tools/list", "http", "tools"),
    ("HTTP stateful (SSE), resources/list", "http", "resources"),
]

# The client-side rows: each client SDK makes `tools/call add` K at a time on one session with
# the fastest server (the hand-written limits, so that the client's cost dominates).
# (row label, transport, K)
CLIENT_ROWS = [
    ("stdio (serde-add), K=1", "stdio", 1),
    ("stdio (serde-add), K=32", "stdio", 32),
    ("HTTP (hyper-add), K=1", "http", 1),
    ("HTTP (hyper-add), K=32 on one session", "http", 32),
]

# The page size of the "switchboard (one page)" list rows: every list in one page, as the other
# peers answer.
ONE_PAGE = 100_000

# The groups of rows `--only` picks from.
GROUPS = ("calls", "large", "lists", "clients", "sessions", "cold-start", "gateway", "auth")


@dataclass
class ClientPeer:
    name: str
    # The program and its leading arguments; the runner adds --stdio CMD | --url URL, -n, -k.
    argv: list[str]
    scale: float = 1.0
    note: str = ""


def clients(a: argparse.Namespace) -> list[ClientPeer]:
    pb = Path(a.peers_bin)
    return [
        ClientPeer("switchboard", [a.client]),
        ClientPeer("rmcp", [str(pb / "rmcp-client")]),
        ClientPeer("typescript-sdk", [a.node, str(HERE / "peers/ts/add-client.mjs")], scale=0.25),
        ClientPeer("python-sdk", [a.python, str(HERE / "peers/py/add_client.py")], scale=0.05),
        ClientPeer("switchboard-load (limit)", [a.load, "--json"], note="raw JSON-RPC, no SDK"),
    ]


def stdio_cmd(p: Peer, mode: str | None) -> str | None:
    return p.modern.get("stdio") if mode == "modern" else p.stdio  # type: ignore[return-value]


def http_argv(p: Peer, smode: str) -> list[str] | None:
    return p.modern.get("http") if smode == "modern" else p.http.get(smode)  # type: ignore[return-value]


def protocol_args(mode: str | None) -> list[str]:
    return ["--protocol", MODERN] if mode == "modern" else []


def pad_args(pad: int) -> list[str]:
    return ["--pad-bytes", str(pad)] if pad else []


def load(a: argparse.Namespace, args: list[str], max_seconds: float, env: dict | None = None) -> dict:
    cmd = [a.load, "--json", "--max-seconds", str(max_seconds), *args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=max_seconds + 60, env=env)
    if p.returncode == 2 or not p.stdout.strip():
        raise BenchError(f"switchboard-load failed (exit {p.returncode}): {' '.join(cmd)}\n{p.stderr.strip()}")
    r = json.loads(p.stdout)
    r["_exit"] = p.returncode
    return r


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """An HTTP server process of ours, stopped by its pid (its own process group)."""

    def __init__(self, name: str, argv: list[str], logdir: Path, timeout: float):
        self.name = name
        self.port = free_port()
        addr = f"127.0.0.1:{self.port}"
        self.url = f"http://{addr}/mcp"
        self.log = logdir / f"{name.split()[0]}-{self.port}.log"
        self.proc = subprocess.Popen(
            [x.replace("{addr}", addr) for x in argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=open(self.log, "wb"),
            start_new_session=True,
        )
        self.pid = self.proc.pid
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise BenchError(f"{name} exited ({self.proc.returncode}) before listening:\n{self.tail()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise BenchError(f"{name} did not listen on {addr} within {timeout:.0f} s:\n{self.tail()}")
            time.sleep(0.05)

    def tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.pid, signal.SIGTERM)
                self.proc.wait(timeout=3)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.proc.wait()


def check(r: dict, what: str, problems: list[str]) -> None:
    bad = []
    if r.get("errors"):
        bad.append(f"{r['errors']} errors")
    if r.get("timed_out"):
        bad.append("stopped at --max-seconds")
    if bad:
        notes = "; ".join(r.get("notes") or [])
        problems.append(f"{what}: {', '.join(bad)}{' (' + notes + ')' if notes else ''}")


def run_calls(a: argparse.Namespace, ps: list[Peer], logdir: Path, problems: list[str]) -> dict:
    """results[row label][peer name] = list of reports (one per round)."""
    results: dict[str, dict[str, list[dict]]] = {r[0]: {} for r in ROWS}
    for rnd in range(a.rounds):
        order = ps[rnd % len(ps):] + ps[: rnd % len(ps)]
        print(f"-- round {rnd + 1}/{a.rounds}", file=sys.stderr, flush=True)
        # stdio rows: each run spawns its own server.
        for label, transport, mode, k, one, pad in ROWS:
            if transport != "stdio":
                continue
            for p in order:
                cmd = stdio_cmd(p, mode)
                if not cmd:
                    continue
                n = max(10 if pad else a.min_calls, int((a.pad_calls if pad else a.calls) * p.scale))
                r = load(a, ["--stdio", cmd, "-n", str(n), "-k", str(k), *protocol_args(mode), *pad_args(pad)], a.max_seconds)
                check(r, f"{label} / {p.name}", problems)
                results[label].setdefault(p.name, []).append(r)
                print(f"   {label:<42} {p.name:<30} {r['calls_per_sec'] or 0:>10.0f} calls/s", file=sys.stderr, flush=True)
        # HTTP rows, grouped by server mode: fresh servers for every round and mode.
        for smode in ("stateful", "stateless", "json", "modern"):
            servers: dict[str, Server] = {}
            try:
                for p in order:
                    argv = http_argv(p, smode)
                    if argv:
                        servers[p.name] = Server(p.name, argv, logdir, a.start_timeout)
                for label, transport, mode, k, one, pad in ROWS:
                    if transport != "http" or mode != smode:
                        continue
                    for p in order:
                        s = servers.get(p.name)
                        if s is None:
                            continue
                        n = max(10 if pad else a.min_calls, int((a.pad_calls if pad else a.http_calls) * p.scale))
                        args = ["--url", s.url, "--pid", str(s.pid), "-n", str(n), "-k", str(k), *protocol_args(mode), *pad_args(pad)]
                        if one:
                            args.append("--one-session")
                        r = load(a, args, a.max_seconds)
                        check(r, f"{label} / {p.name}", problems)
                        results[label].setdefault(p.name, []).append(r)
                        print(f"   {label:<42} {p.name:<30} {r['calls_per_sec'] or 0:>10.0f} calls/s", file=sys.stderr, flush=True)
            finally:
                for s in servers.values():
                    s.stop()
    return results


def list_counts(a: argparse.Namespace, what: str) -> tuple[int, int]:
    """(N registered, items every list must hold) for a list row: the bench servers list `add` and
    `blob` besides the N further tools."""
    n = a.list_tools if what == "tools" else a.list_resources
    return n, n + 2 if what == "tools" else n


def run_bench_rows(a: argparse.Namespace, ps: list[Peer], logdir: Path, problems: list[str]) -> tuple[dict, dict]:
    """The large-answer and list rows, against each peer's bench server: results[row][peer] =
    reports (one per round). A stdio run spawns its server; an HTTP row starts a fresh server per
    peer and round."""
    large: dict[str, dict[str, list[dict]]] = {r[0]: {} for r in LARGE_ROWS}
    lists: dict[str, dict[str, list[dict]]] = {r[0]: {} for r in LIST_ROWS}
    runs = []
    if "large" in a.only:
        for label, transport in LARGE_ROWS:
            runs.append((large, label, transport, None))
    if "lists" in a.only:
        for label, transport, what in LIST_ROWS:
            runs.append((lists, label, transport, what))
    for rnd in range(a.rounds):
        order = ps[rnd % len(ps):] + ps[: rnd % len(ps)]
        print(f"-- large answers and lists, round {rnd + 1}/{a.rounds}", file=sys.stderr, flush=True)
        for results, label, transport, what in runs:
            for p in order:
                base = p.bench.get(transport)
                if base is None or (what and not p.lists) or (p.lists_only and not what):
                    continue
                extra: list[str] = []
                if what:
                    count, expect = list_counts(a, what)
                    extra = [f"--{what}", str(count)]
                    n = max(a.min_lists, int(a.lists * p.scale))
                    load_args = ["--mode", "list", "--list", what, "--expect-items", str(expect), "-n", str(n)]
                    unit = "lists/s"
                else:
                    n = max(10, int(a.pad_calls * p.scale))
                    load_args = [
                        "--tool", "blob", "--arguments", json.dumps({"bytes": BLOB_BYTES}),
                        "--expect-text-bytes", str(BLOB_BYTES), "-n", str(n),
                    ]
                    unit = "calls/s"
                server = None
                try:
                    if transport == "stdio":
                        target = ["--stdio", " ".join([str(base), *extra])]
                    else:
                        server = Server(p.name, [*base, *extra], logdir, a.start_timeout)  # type: ignore[list-item]
                        target = ["--url", server.url, "--pid", str(server.pid)]
                    r = load(a, [*target, *load_args], a.max_seconds)
                finally:
                    if server:
                        server.stop()
                check(r, f"{label} / {p.name}", problems)
                results[label].setdefault(p.name, []).append(r)
                print(f"   {label:<42} {p.name:<30} {r['calls_per_sec'] or 0:>10.1f} {unit}", file=sys.stderr, flush=True)
    return large, lists


def run_client(a: argparse.Namespace, c: ClientPeer, args: list[str]) -> dict:
    cmd = [*c.argv, "--max-seconds", str(a.max_seconds), *args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=a.max_seconds + 60)
    if p.returncode == 2 or not p.stdout.strip():
        raise BenchError(f"{c.name} client failed (exit {p.returncode}): {' '.join(cmd)}\n{p.stderr.strip()[-2000:]}")
    r = json.loads(p.stdout)
    r["_exit"] = p.returncode
    return r


def run_clients(a: argparse.Namespace, logdir: Path, problems: list[str]) -> dict:
    """results[row][client] = reports, one per round: every client against serde-add over stdio
    (spawned by the client) and against one hyper-add per round over HTTP (a session each)."""
    cs = clients(a)
    serde = str(Path(a.peers_bin) / "serde-add")
    hyper = [str(Path(a.peers_bin) / "hyper-add"), "--http", "{addr}"]
    results: dict[str, dict[str, list[dict]]] = {r[0]: {} for r in CLIENT_ROWS}
    for rnd in range(a.rounds):
        order = cs[rnd % len(cs):] + cs[: rnd % len(cs)]
        print(f"-- clients, round {rnd + 1}/{a.rounds}", file=sys.stderr, flush=True)
        server = Server("hyper-add (limit)", hyper, logdir, a.start_timeout)
        try:
            for label, transport, k in CLIENT_ROWS:
                for c in order:
                    base = a.calls if transport == "stdio" else a.http_calls
                    n = max(a.min_calls, int(base * c.scale))
                    target = ["--stdio", serde] if transport == "stdio" else ["--url", server.url]
                    extra = ["--one-session"] if c.argv[0] == a.load and transport == "http" and k > 1 else []
                    r = run_client(a, c, [*target, "-n", str(n), "-k", str(k), *extra])
                    check(r, f"{label} / {c.name} client", problems)
                    results[label].setdefault(c.name, []).append(r)
                    print(f"   {label:<42} {c.name:<30} {r.get('calls_per_sec') or 0:>10.0f} calls/s", file=sys.stderr, flush=True)
        finally:
            server.stop()
    return results


def clients_table(a: argparse.Namespace, results: dict) -> str:
    rounds = rounds_label(a)
    lines = [
        f"### Clients: `tools/call add` from each client SDK, K in flight on one session, against the limits, {rounds}",
        "",
        "| Configuration | Client | calls/s | × Switchboard | p50 µs | p99 µs | client CPU µs/call |",
        "|---|---|--:|--:|--:|--:|--:|",
    ]
    for label, _, _ in CLIENT_ROWS:
        got = results.get(label, {})
        base = med(got.get("switchboard", []), "calls_per_sec")
        for c in clients(a):
            rs = got.get(c.name)
            if not rs:
                continue
            rate = med(rs, "calls_per_sec")
            ratio = f"{rate / base:.2f}" if rate and base else "–"
            flag = " ⚠" if any(r.get("errors") or r.get("timed_out") for r in rs) else ""
            name = c.name + (f" ({c.note})" if c.note else "")
            lines.append(
                f"| {label} | {name} | {fmt(rate)}{flag} | {ratio} | {fmt(med(rs, 'p50_us'))} | "
                f"{fmt(med(rs, 'p99_us'))} | {fmt(med(rs, 'client_cpu_us_per_call'), 1)} |"
            )
    return "\n".join(lines) + "\n\n"


def run_sessions(a: argparse.Namespace, ps: list[Peer], logdir: Path, problems: list[str]) -> dict:
    """Per stateful HTTP peer: S sessions opened and deleted, twice, on one fresh server."""
    out = {}
    for p in ps:
        argv = p.http.get("stateful")
        if not argv:
            continue
        s = Server(p.name, argv, logdir, a.start_timeout)
        try:
            time.sleep(0.5)
            args = ["--url", s.url, "--pid", str(s.pid), "--mode", "sessions", "--sessions", str(a.sessions), "-k", "8"]
            r1 = load(a, args, a.max_seconds)
            r2 = load(a, args, a.max_seconds)
        finally:
            s.stop()
        for i, r in enumerate((r1, r2), 1):
            check(r, f"sessions round {i} / {p.name}", problems)
        out[p.name] = (r1, r2)
        print(f"   sessions S={a.sessions:<5} {p.name:<30} {r1['bytes_per_session']} bytes/session", file=sys.stderr, flush=True)
    return out


def run_cold(a: argparse.Namespace, ps: list[Peer], problems: list[str]) -> dict:
    out = {}
    for p in ps:
        if not p.stdio:
            continue
        r = load(a, ["--stdio", p.stdio, "--mode", "cold-start", "-n", str(a.cold)], a.max_seconds)
        check(r, f"cold start / {p.name}", problems)
        out[p.name] = r
        print(f"   cold start {p.name:<30} {r['cold_start_ms_median']} ms", file=sys.stderr, flush=True)
    return out


GATEWAY_UPSTREAMS, GATEWAY_TOOLS = 50, 20


def run_gateway(a: argparse.Namespace, logdir: Path, problems: list[str]) -> dict:
    """`switchboard gateway` against the server it fronts: results[row] = (direct reports,
    gateway reports), one per round. stdio: `serve --example add` spawned directly, and as the
    gateway's one stdio upstream (the gateway spawned by switchboard-load); HTTP: one
    `serve --http` server, called directly and through `gateway --http` fronting it. Then a
    gateway in front of 50 stdio upstreams of 20 tools each (`serve --example bench --tools 18`:
    `add`, `blob` and 18 more) and its `search_tools`: its 1,001-tool list, a search and a call
    of the last upstream's `add`. The stdio and HTTP rows run at one call in flight and at
    GATEWAY_K in flight (throughput)."""
    sb = a.switchboard
    direct_stdio = f"{sb} serve --example add --stdio"
    one = logdir / "gateway-one.toml"
    one.write_text(f'[[upstream]]\nname = "calc"\nstdio = "{direct_stdio}"\nera = "legacy"\n')
    many = logdir / "gateway-many.toml"
    many.write_text("search_tools = true\n" + "".join(
        f'[[upstream]]\nname = "u{i}"\nstdio = "{sb} serve --example bench --tools {GATEWAY_TOOLS - 2} --stdio"\nera = "legacy"\n'
        for i in range(GATEWAY_UPSTREAMS)
    ))
    out: dict[str, tuple[list[dict], list[dict]]] = {r: ([], []) for r in GATEWAY_ROWS}
    for rnd in range(a.rounds):
        print(f"-- gateway, round {rnd + 1}/{a.rounds}", file=sys.stderr, flush=True)
        n = a.calls
        for k in (1, GATEWAY_K):
            for label, target, extra in (
                ("direct", direct_stdio, []),
                ("gateway", f"{sb} gateway {one} --stdio", ["--tool", "calc_add"]),
            ):
                r = load(a, ["--stdio", target, "-n", str(n), "-k", str(k), *extra], a.max_seconds)
                check(r, f"gateway stdio k={k} / {label}", problems)
                out[f"stdio, k={k}"][0 if label == "direct" else 1].append(r)
        upstream = Server("switchboard", [sb, "serve", "--example", "add", "--http", "{addr}"], logdir, a.start_timeout)
        try:
            http = logdir / "gateway-http.toml"
            http.write_text(f'[[upstream]]\nname = "calc"\nurl = "{upstream.url}"\nera = "legacy"\n')
            gw = Server("switchboard gateway", [sb, "gateway", str(http), "--http", "{addr}"], logdir, a.start_timeout)
            try:
                for k in (1, GATEWAY_K):
                    for i, (url, pid, extra) in enumerate(((upstream.url, upstream.pid, []), (gw.url, gw.pid, ["--tool", "calc_add"]))):
                        r = load(a, ["--url", url, "--pid", str(pid), "-n", str(a.http_calls), "-k", str(k), *extra], a.max_seconds)
                        check(r, f"gateway http k={k} / {'direct' if i == 0 else 'gateway'}", problems)
                        out[f"Streamable HTTP (stateful), k={k}"][i].append(r)
            finally:
                gw.stop()
        finally:
            upstream.stop()
        big = Server("switchboard gateway", [sb, "gateway", str(many), "--http", "{addr}"], logdir, a.start_timeout * 2)
        try:
            # Every upstream's tools and the gateway's own `search_tools`.
            expect = GATEWAY_UPSTREAMS * GATEWAY_TOOLS + 1
            r = load(a, ["--url", big.url, "--mode", "list", "--list", "tools", "--expect-items", str(expect), "-n", str(max(a.min_lists, a.lists))], a.max_seconds)
            check(r, "gateway 50 upstreams / tools/list", problems)
            out[GATEWAY_LIST_ROW][1].append(r)
            r = load(a, ["--url", big.url, "-n", str(a.http_calls), "-k", "1", "--tool", "search_tools", "--arguments", json.dumps({"query": GATEWAY_QUERY})], a.max_seconds)
            check(r, "gateway 50 upstreams / search_tools", problems)
            out[GATEWAY_SEARCH_ROW][1].append(r)
            r = load(a, ["--url", big.url, "-n", str(a.http_calls), "-k", "1", "--tool", f"u{GATEWAY_UPSTREAMS - 1}_add"], a.max_seconds)
            check(r, "gateway 50 upstreams / tools/call", problems)
            out[f"{GATEWAY_UPSTREAMS} upstreams × {GATEWAY_TOOLS} tools: tools/call (HTTP, k=1)"][1].append(r)
        finally:
            big.stop()
        for row, (d, g) in out.items():
            if g and g[-1]:
                print(f"   gateway {row:<48} {g[-1].get('calls_per_sec') or 0:>10.1f}/s", file=sys.stderr, flush=True)
    return out


# The in-flight count of the throughput rows (issue 30: at least 0.7× the direct call's).
GATEWAY_K = 32
# The search of the 50 × 20 rows: the words of the last upstream's `add` and its 18 `tool_N`
# ("add two numbers"), 19 of the 1,000 tools, every one of which is looked at.
GATEWAY_QUERY = f"u{GATEWAY_UPSTREAMS - 1}_ numbers"
GATEWAY_LIST_ROW = f"{GATEWAY_UPSTREAMS} upstreams × {GATEWAY_TOOLS} tools: tools/list ({GATEWAY_UPSTREAMS * GATEWAY_TOOLS} tools + search_tools)"
GATEWAY_SEARCH_ROW = f"{GATEWAY_UPSTREAMS} upstreams × {GATEWAY_TOOLS} tools: search_tools (HTTP, k=1, 19 found)"
GATEWAY_ROWS = (
    "stdio, k=1",
    f"stdio, k={GATEWAY_K}",
    "Streamable HTTP (stateful), k=1",
    f"Streamable HTTP (stateful), k={GATEWAY_K}",
    GATEWAY_LIST_ROW,
    GATEWAY_SEARCH_ROW,
    f"{GATEWAY_UPSTREAMS} upstreams × {GATEWAY_TOOLS} tools: tools/call (HTTP, k=1)",
)


def gateway_table(a: argparse.Namespace, res: dict) -> str:
    rounds = rounds_label(a)
    lines = [f"### `switchboard gateway` against the server it fronts (`tools/call add`), {rounds}", ""]
    lines.append("| Configuration | direct /s | through the gateway /s | gateway ÷ direct | p50 µs direct | p50 µs gateway |")
    lines.append("|---|--:|--:|--:|--:|--:|")
    for row in GATEWAY_ROWS:
        d, g = res.get(row, ([], []))
        dc, gc = med(d, "calls_per_sec"), med(g, "calls_per_sec")
        ratio = f"{gc / dc:.2f}" if dc and gc else "–"
        lines.append(f"| {row} | {fmt(dc)} | {fmt(gc)} | {ratio} | {fmt(med(d, 'p50_us'))} | {fmt(med(g, 'p50_us'))} |")
    return "\n".join(lines) + "\n"


AUTH_ROWS = ("Streamable HTTP (stateful), K=1", "Streamable HTTP (stateful), K=32 sessions")
AUTH_KINDS = ("no authorization", "bearer token", "DPoP-bound token")


def run_auth(a: argparse.Namespace, logdir: Path, problems: list[str]) -> dict:
    """A call made with a bearer token against one made with a DPoP-bound token (RFC 9449), and
    against no authorization: `serve --example add --http` with `--auth-issuer` (and
    `--auth-dpop`) naming a test issuer on 127.0.0.1 (the `bench_auth` example of
    switchboard-test-support, which also mints the token and one proof for each request:
    switchboard-load sends each once). A server per row and round, so that its replay store
    starts empty. results[row][kind] = reports, one per round."""
    sb = a.switchboard
    issuer = subprocess.Popen([a.auth_issuer], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True)
    out: dict[str, dict[str, list[dict]]] = {r: {k: [] for k in AUTH_KINDS} for r in AUTH_ROWS}
    try:
        iss = (issuer.stdout.readline() if issuer.stdout else "").strip()
        if not iss.startswith("http://127.0.0.1:"):
            raise BenchError(f"bench_auth did not print its issuer URL (got {iss!r})")
        for rnd in range(a.rounds):
            print(f"-- auth, round {rnd + 1}/{a.rounds}", file=sys.stderr, flush=True)
            for row, k in zip(AUTH_ROWS, (1, 32)):
                n = a.http_calls
                for kind in AUTH_KINDS:
                    flags = {"no authorization": [], "bearer token": ["--auth-issuer", iss],
                             "DPoP-bound token": ["--auth-issuer", iss, "--auth-dpop"]}[kind]
                    server = Server("switchboard", [sb, "serve", "--example", "add", "--http", "{addr}", *flags], logdir, a.start_timeout)
                    try:
                        creds: list[str] = []
                        env = dict(os.environ)
                        if flags:
                            # Calls, the warm-up (at most 1,000), initialize and initialized of
                            # each session, a few spare; a DELETE for each session.
                            posts = n + min(n // 10, 1000) + 2 * k + 10
                            assert issuer.stdin and issuer.stdout
                            issuer.stdin.write(f"{server.url} {posts} {k} {logdir}\n")
                            issuer.stdin.flush()
                            said = issuer.stdout.readline().strip()
                            if said != "ok":
                                raise BenchError(f"bench_auth: {said or 'no answer'}")
                            if kind == "bearer token":
                                # The token in the environment, not on a command line.
                                env["SWITCHBOARD_LOAD_BEARER"] = (logdir / "bearer").read_text().strip()
                            else:
                                creds = ["--dpop-proofs", str(logdir / "dpop")]
                        r = load(a, ["--url", server.url, "--pid", str(server.pid), "-n", str(n), "-k", str(k), *creds], a.max_seconds, env)
                        check(r, f"auth {row} / {kind}", problems)
                        out[row][kind].append(r)
                    finally:
                        server.stop()
                    print(f"   auth {row:<42} {kind:<18} {r.get('calls_per_sec') or 0:>10.1f}/s", file=sys.stderr, flush=True)
    finally:
        issuer.kill()
        issuer.wait()
    return out


def auth_table(a: argparse.Namespace, res: dict) -> str:
    rounds = rounds_label(a)
    lines = [f"### Authorization: `tools/call add` with a bearer token against a DPoP-bound token (`serve --auth-issuer`, `--auth-dpop`), {rounds}", ""]
    lines.append("| Configuration | Credentials | calls/s | × bearer | p50 µs | p99 µs | server CPU µs/call |")
    lines.append("|---|---|--:|--:|--:|--:|--:|")
    for row in AUTH_ROWS:
        base = med(res.get(row, {}).get("bearer token", []), "calls_per_sec")
        for kind in AUTH_KINDS:
            rs = res.get(row, {}).get(kind, [])
            c = med(rs, "calls_per_sec")
            ratio = f"{c / base:.2f}" if c and base else "–"
            lines.append(f"| {row} | {kind} | {fmt(c)} | {ratio} | {fmt(med(rs, 'p50_us'))} | {fmt(med(rs, 'p99_us'))} | {fmt(med(rs, 'cpu_us_per_call'), 1)} |")
    return "\n".join(lines) + "\n"


def rounds_label(a: argparse.Namespace) -> str:
    """How a table's figures were made: one round, or the median of several."""
    return "1 round" if a.rounds == 1 else f"median of {a.rounds} rounds"


def med(rs: list[dict], key: str) -> float | None:
    vals = [r[key] for r in rs if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def fmt(v: float | None, digits: int = 0) -> str:
    if v is None:
        return "–"
    return f"{v:,.{digits}f}"


def calls_table(a: argparse.Namespace, ps: list[Peer], calls: dict) -> str:
    lines = []
    rounds = rounds_label(a)
    lines.append(f"### Calls: `tools/call add`, {rounds}")
    lines.append("")
    lines.append("| Configuration | Server | calls/s | × Switchboard | p50 µs | p99 µs | server CPU µs/call |")
    lines.append("|---|---|--:|--:|--:|--:|--:|")
    for label, transport, mode, k, one, pad in ROWS:
        row = calls[label]
        base = med(row.get("switchboard", []), "calls_per_sec")
        for p in ps:
            rs = row.get(p.name)
            note = p.note.get(mode or "", "")
            if not rs:
                if mode == "modern":
                    why = p.unsupported or (f"not installed; run scripts/install-peers.sh" if p.missing else "")
                    if why and transport in p.modern:
                        lines.append(f"| {label} | {p.name} | {why} | | | | |")
                elif mode and mode in p.http and p.http[mode] is None:
                    lines.append(f"| {label} | {p.name} | not run: {note} | | | | |")
                continue
            cps = med(rs, "calls_per_sec")
            ratio = f"{cps / base:.2f}" if cps and base else "–"
            name = p.name + (f" ({note})" if note else "")
            flag = " ⚠" if any(r.get("errors") or r.get("timed_out") for r in rs) else ""
            lines.append(
                f"| {label} | {name} | {fmt(cps)}{flag} | {ratio} | {fmt(med(rs, 'p50_us'))} | "
                f"{fmt(med(rs, 'p99_us'))} | {fmt(med(rs, 'cpu_us_per_call'), 1)} |"
            )
    return "\n".join(lines) + "\n"


def bench_rows(ps: list[Peer], rows: list[tuple], results: dict, unit: str, scale: float, digits: int) -> list[str]:
    """Table lines of the large-answer or list rows: rate, × Switchboard, p50/p99 and server CPU
    per unit (`scale` converts µs to the unit shown: 1 for µs, 1000 for ms), and pages per list
    for lists."""
    lines = []
    for row in rows:
        label = row[0]
        got = results.get(label, {})
        base = med(got.get("switchboard", []), "calls_per_sec")
        for p in ps:
            rs = got.get(p.name)
            if not rs:
                continue
            rate = med(rs, "calls_per_sec")
            ratio = f"{rate / base:.2f}" if rate and base else "–"
            flag = " ⚠" if any(r.get("errors") or r.get("timed_out") for r in rs) else ""
            div = lambda v: None if v is None else v / scale  # noqa: E731
            cells = [label, p.name, f"{fmt(rate, digits)}{flag}", ratio]
            if unit == "lists/s":
                cells.append(fmt(med(rs, "pages_per_list")))
            lat = 0 if scale == 1.0 else 1
            cells += [fmt(div(med(rs, "p50_us")), lat), fmt(div(med(rs, "p99_us")), lat), fmt(div(med(rs, "cpu_us_per_call")), 1)]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def bench_tables(a: argparse.Namespace, ps: list[Peer], large: dict, lists: dict) -> str:
    rounds = rounds_label(a)
    lines = []
    if "large" in a.only:
        lines.append(f"### Large answers: `tools/call blob` answering 1 MiB of text, {rounds}")
        lines.append("")
        lines.append("| Configuration | Server | calls/s | × Switchboard | p50 µs | p99 µs | server CPU µs/call |")
        lines.append("|---|---|--:|--:|--:|--:|--:|")
        lines += bench_rows(ps, LARGE_ROWS, large, "calls/s", 1.0, 0)
        lines.append("")
    if "lists" in a.only:
        lines.append(
            f"### Long lists: a whole `tools/list` of {a.list_tools:,} tools (+ add and blob) or `resources/list` of "
            f"{a.list_resources:,} resources, every page, one request in flight, {rounds}"
        )
        lines.append("")
        lines.append("| Configuration | Server | lists/s | × Switchboard | pages/list | p50 ms | p99 ms | server CPU ms/list |")
        lines.append("|---|---|--:|--:|--:|--:|--:|--:|")
        lines += bench_rows(ps, LIST_ROWS, lists, "lists/s", 1000.0, 1)
        lines.append("")
    return "\n".join(lines) + ("\n" if lines else "")


def sessions_table(a: argparse.Namespace, ps: list[Peer], sess: dict) -> str:
    lines = []
    lines.append(f"### Memory per idle HTTP session (stateful, S={a.sessions}, opened and deleted twice on one server)")
    lines.append("")
    lines.append("| Server | bytes/session | sessions/s | RSS before | after DELETE | after 2nd open | after 2nd DELETE | growth, round 2 |")
    lines.append("|---|--:|--:|--:|--:|--:|--:|--:|")
    mib = lambda k: "–" if k is None else f"{k / 1024:.1f} MiB"  # noqa: E731
    for p in ps:
        if p.name not in sess:
            continue
        r1, r2 = sess[p.name]
        growth = None
        if r1.get("rss_after_delete_kib") is not None and r2.get("rss_after_delete_kib") is not None:
            growth = r2["rss_after_delete_kib"] - r1["rss_after_delete_kib"]
        lines.append(
            f"| {p.name} | {fmt(r1.get('bytes_per_session'))} | {fmt(r1.get('sessions_per_sec'))} | "
            f"{mib(r1.get('rss_before_kib'))} | {mib(r1.get('rss_after_delete_kib'))} | "
            f"{mib(r2.get('rss_after_open_kib'))} | {mib(r2.get('rss_after_delete_kib'))} | "
            f"{'–' if growth is None else f'{growth:+,} KiB'} |"
        )
    lines.append("")
    return "\n".join(lines) + "\n"


def cold_table(a: argparse.Namespace, ps: list[Peer], cold: dict) -> str:
    lines = []
    mib = lambda k: "–" if k is None else f"{k / 1024:.1f} MiB"  # noqa: E731
    lines.append(f"### stdio cold start (spawn → initialize answered), {a.cold} runs each")
    lines.append("")
    lines.append("| Server | median ms | p90 ms | × Switchboard | RSS at the answer |")
    lines.append("|---|--:|--:|--:|--:|")
    base = cold.get("switchboard", {}).get("cold_start_ms_median")
    for p in ps:
        r = cold.get(p.name)
        if not r:
            continue
        m = r.get("cold_start_ms_median")
        ratio = f"{m / base:.2f}" if m and base else "–"
        lines.append(f"| {p.name} | {fmt(m, 2)} | {fmt(r.get('cold_start_ms_p90'), 2)} | {ratio} | {mib(r.get('peak_rss_kib'))} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--switchboard", default=os.environ.get("BENCH_SWITCHBOARD"))
    ap.add_argument(
        "--switchboard-no-otel",
        default=os.environ.get("BENCH_SWITCHBOARD_NO_OTEL"),
        help="the CLI built without its otel feature",
    )
    ap.add_argument("--load", default=os.environ.get("BENCH_LOAD"))
    ap.add_argument("--client", default=os.environ.get("BENCH_CLIENT"), help="our client bench program (bench_client)")
    ap.add_argument("--peers-bin", default=os.environ.get("BENCH_PEERS_BIN"))
    ap.add_argument("--auth-issuer", default=os.environ.get("BENCH_AUTH_ISSUER"), help="the bench_auth example (auth rows)")
    ap.add_argument("--node", default=os.environ.get("BENCH_NODE"))
    ap.add_argument("--python", default=os.environ.get("BENCH_PYTHON"))
    ap.add_argument(
        "--ts-v2-modules",
        default=os.environ.get("BENCH_TS_V2_MODULES", str(REPO / "interop/node_modules")),
        help="the node_modules holding @modelcontextprotocol/server (the TypeScript SDK v2)",
    )
    ap.add_argument("--header", default="", help="text put above the tables")
    ap.add_argument(
        "--peers",
        default="",
        help="run only the servers of these names (comma-separated, as the tables name them), "
        "e.g. the switchboard rows alone while the other peers are not built",
    )
    ap.add_argument(
        "--only",
        default=",".join(GROUPS),
        help=f"the groups of rows to run, comma-separated, from {', '.join(GROUPS)} (default: all)",
    )
    a = ap.parse_args()
    a.only = set(filter(None, a.only.split(",")))
    if not a.only or a.only - set(GROUPS):
        ap.error(f"--only takes groups from {', '.join(GROUPS)}")
    for k in ("switchboard", "load", "peers_bin", "node", "python") + (("client",) if "clients" in a.only else ()) + (("auth_issuer",) if "auth" in a.only else ()):
        if not getattr(a, k):
            ap.error(f"--{k.replace('_', '-')} (or BENCH_{k.upper()}) is required")
    if a.smoke:
        a.rounds, a.calls, a.http_calls, a.min_calls, a.pad_calls = 1, 300, 300, 100, 20
        a.sessions, a.cold, a.max_seconds, a.start_timeout = 50, 3, 30.0, 60.0
        # Lists of a few pages (Switchboard pages by 100), read a few times.
        a.list_tools, a.list_resources, a.lists, a.min_lists = 150, 250, 3, 2
    else:
        a.rounds, a.calls, a.http_calls, a.min_calls, a.pad_calls = 3, 20000, 6000, 300, 1000
        a.sessions, a.cold, a.max_seconds, a.start_timeout = 1000, 20, 60.0, 60.0
        a.list_tools, a.list_resources, a.lists, a.min_lists = 1000, 10000, 100, 10
    a.otlp_sink = OtlpSink()
    ps = peers(a)
    if a.peers:
        wanted = [w.strip() for w in a.peers.split(",") if w.strip()]
        unknown = [w for w in wanted if w not in {p.name for p in ps}]
        if unknown:
            print(f"bench: ERROR: --peers names no server called {', '.join(unknown)}", file=sys.stderr)
            return 2
        ps = [p for p in ps if p.name in wanted]
    problems: list[str] = []
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="switchboard-bench-") as tmp:
        logdir = Path(tmp)
        try:
            calls = run_calls(a, ps, logdir, problems) if "calls" in a.only else {}
            large, lists = run_bench_rows(a, ps, logdir, problems)
            client_results = run_clients(a, logdir, problems) if "clients" in a.only else {}
            sess, cold, gateway, auth = {}, {}, {}, {}
            if "sessions" in a.only:
                print("-- sessions", file=sys.stderr, flush=True)
                sess = run_sessions(a, ps, logdir, problems)
            if "cold-start" in a.only:
                print("-- cold start", file=sys.stderr, flush=True)
                cold = run_cold(a, ps, problems)
            if "gateway" in a.only:
                gateway = run_gateway(a, logdir, problems)
            if "auth" in a.only:
                auth = run_auth(a, logdir, problems)
        except BenchError as e:
            print(f"bench: ERROR: {e}", file=sys.stderr)
            return 1
    md = a.header + "\n" if a.header else ""
    if "calls" in a.only:
        md += calls_table(a, ps, calls) + "\n"
    md += bench_tables(a, ps, large, lists)
    if "clients" in a.only:
        md += clients_table(a, client_results)
    if "sessions" in a.only:
        md += sessions_table(a, ps, sess)
    if "cold-start" in a.only:
        md += cold_table(a, ps, cold)
    if "calls" in a.only:
        # The "telemetry on" rows are only what they say if the servers exported (each flushes
        # what it batched when stopped, so every run's spans have arrived by now).
        traces, metrics = a.otlp_sink.count("/v1/traces"), a.otlp_sink.count("/v1/metrics")
        md += f"\nTelemetry on: the OTLP sink received {traces} trace and {metrics} metric exports.\n"
        if traces == 0:
            problems.append("the telemetry-on rows exported no spans to the OTLP sink")
    if "gateway" in a.only:
        md += "\n" + gateway_table(a, gateway)
    if "auth" in a.only:
        md += "\n" + auth_table(a, auth)
    skipped = [f"{p.name}: {p.note[m]}" for p in ps for m, v in p.http.items() if v is None]
    skipped += [f"{p.name} ({MODERN} rows): {p.unsupported}" for p in ps if p.unsupported]
    # Only the calls rows include the 2026-07-28 ones.
    missing = [f"{p.name} ({MODERN} rows): {p.missing}" for p in ps if p.missing and "calls" in a.only]
    if skipped or problems or missing:
        md += "\n" + "".join(f"- not run: {s}\n" for s in skipped) + "".join(f"- ⚠ {s}\n" for s in problems)
        md += "".join(f"- NOT INSTALLED: {s}\n" for s in missing)
    md += f"\n(run took {time.monotonic() - t0:.0f} s)\n"
    print(md)
    if a.out:
        Path(a.out).write_text(md)
        raw = {"calls": calls, "large_answers": large, "lists": lists, "clients": client_results, "sessions": sess, "cold_start": cold, "gateway": gateway, "auth": auth}
        Path(a.out).with_suffix(".json").write_text(json.dumps(raw, indent=1) + "\n")
    for s in skipped:
        print(f"bench: NOTE: not run: {s}", file=sys.stderr)
    for s in problems:
        print(f"bench: WARNING: {s}", file=sys.stderr)
    for s in missing:
        print(f"bench: ERROR: {s}", file=sys.stderr)
    if missing:
        return 1
    if problems and a.smoke:
        print("bench: smoke mode fails on any error", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
