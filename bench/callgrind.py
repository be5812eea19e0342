#!/usr/bin/env python3
"""Instructions per `tools/call add` on stdio, measured with callgrind (see docs/PERF-NOTES.md).

    bench/callgrind.py BINARY [--era 2025|2026] [--mode piped|one] [--calls N] [--keep DIR]
                       [--server-arg ARG ...]

Runs `BINARY serve --example add` under `valgrind --tool=callgrind` twice, with 200 and with
200 + N calls, and prints (Ir(200 + N) - Ir(200)) / N: start-up, the handshake and shutdown
cancel out. `piped` writes every frame at once; `one` writes a frame and waits for its answer
before the next. `--keep DIR` keeps the callgrind output files for `callgrind_annotate`.
`--server-arg ARG` (repeatable) adds ARG to the server's command line, e.g. `--server-arg=--otlp
--server-arg=http://127.0.0.1:4318` for telemetry on (every thread's instructions count, the
exporter's too). `--gateway` measures `BINARY gateway CONFIG --stdio` instead, CONFIG naming one
stdio upstream `calc` (`BINARY serve --example add --stdio`, not measured: valgrind does not
follow children), called as `calc_add`: the gateway's own instructions per forwarded call;
piped, at most GATEWAY_WINDOW calls are then unanswered (a refusal past the gateway's in-flight
bound would be counted as a call: the script stops instead).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading

ENVELOPE = ('"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
            '"io.modelcontextprotocol/clientCapabilities":{}}')


def frames(era, calls, tool="add"):
    out = []
    if era == "2025":
        out.append('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":'
                   '"2025-11-25","capabilities":{},"clientInfo":{"name":"cg","version":"1"}}}')
        out.append('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        meta = ""
    else:
        meta = "," + ENVELOPE
    for i in range(1, calls + 1):
        out.append('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s",'
                   '"arguments":{"a":1,"b":2}%s}}' % (i, tool, meta))
    return out


# Piped through the gateway: at most this many calls unanswered (under its server's
# `max_in_flight`, 256), written this many frames at a time.
GATEWAY_WINDOW, GATEWAY_CHUNK = 128, 32


def run(binary, era, mode, calls, outfile, extra, server_args=(), gateway=None):
    served = ["gateway", gateway, "--stdio"] if gateway else ["serve", "--example", "add"]
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={outfile}"] + extra + \
        [binary, *served, *server_args]
    lines = frames(era, calls, "calc_add" if gateway else "add")
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env={**os.environ, "RUST_LOG": "off"})
    if mode == "piped" and gateway:
        # The gateway forwards each call as a task, and its server answers a request past
        # `max_in_flight` (256) with a cheap -32603 refusal: every frame at once would count
        # refusals among the calls (how the piped counts before 5 December's fifth round were
        # taken). So at most WINDOW calls are unanswered, written CHUNK frames to a write.
        window = threading.Semaphore(GATEWAY_WINDOW)

        def feed():
            for i in range(0, len(lines), GATEWAY_CHUNK):
                chunk = lines[i:i + GATEWAY_CHUNK]
                for line in chunk:
                    if '"id"' in line:
                        window.acquire()
                p.stdin.write(("\n".join(chunk) + "\n").encode())
                p.stdin.flush()
            p.stdin.close()
        t = threading.Thread(target=feed)
        t.start()
        refused = 0
        for answer in p.stdout:
            if b'"id"' in answer and b'"method"' not in answer:
                refused += b'"too_many_requests"' in answer
                window.release()
        t.join()
        if refused:
            sys.exit(f"{refused} calls refused as too many in flight: lower GATEWAY_WINDOW")
    elif mode == "piped":
        # Written from a thread: the answers must be read while the frames go in, or both
        # pipes fill up and each side waits for the other.
        def feed():
            p.stdin.write(("\n".join(lines) + "\n").encode())
            p.stdin.close()
        t = threading.Thread(target=feed)
        t.start()
        p.stdout.read()
        t.join()
    else:
        for line in lines:
            p.stdin.write((line + "\n").encode())
            p.stdin.flush()
            if '"id"' in line:
                # The answer, past any notification the server sends first.
                while b'"method"' in (p.stdout.readline() or b'"id"'):
                    pass
        p.stdin.close()
        p.stdout.read()
    err = p.stderr.read().decode()
    p.wait()
    m = re.search(r"Collected : (\d+)", err)
    if not m:
        sys.exit(f"no callgrind total in:\n{err}")
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--era", default="2025", choices=["2025", "2026"])
    ap.add_argument("--mode", default="piped", choices=["piped", "one"])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--keep")
    ap.add_argument("--server-arg", action="append", default=[])
    ap.add_argument("--gateway", action="store_true")
    a = ap.parse_args()
    d = a.keep or tempfile.mkdtemp(prefix="cg-")
    gateway = None
    if a.gateway:
        gateway = os.path.join(d, "gateway.toml")
        with open(gateway, "w") as f:
            f.write(f'[[upstream]]\nname = "calc"\nstdio = "{a.binary} serve --example add --stdio"\nera = "legacy"\n')
    base = run(a.binary, a.era, a.mode, 200, os.path.join(d, "cg.base"), [], a.server_arg, gateway)
    full = run(a.binary, a.era, a.mode, 200 + a.calls, os.path.join(d, "cg.full"), [], a.server_arg, gateway)
    what = "gateway " if a.gateway else ""
    print(f"{what}{a.era} {a.mode}: {(full - base) / a.calls:,.0f} instructions per call")
    if not a.keep:
        for f in os.listdir(d):
            os.remove(os.path.join(d, f))
        os.rmdir(d)


if __name__ == "__main__":
    main()
