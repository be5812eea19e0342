#!/usr/bin/env bash
# Runs both official-SDK interop clients in revision 2026-07-28 against a Switchboard server, over
# stdio and over Streamable HTTP, and fails unless every check passes:
#   interop/ts-client-2026.mjs   (TypeScript SDK v2 client 2.4.0, Node 22)
#   interop/py_client_2026.py    (Python SDK mcp 2.3.0, .tools/venv)
# Each client connects twice (pinned to 2026-07-28, then `auto`, which must pick the modern era).
#
#   interop/run-clients-2026.sh [PATH]   PATH defaults to $SWITCHBOARD_BIN, else target/debug/switchboard
#
# stdio: each client spawns `PATH serve --stdio` (one process per connection). Streamable HTTP:
# the script starts `PATH serve --http 127.0.0.1:0`, reads the URL from its 'listening on' line,
# runs both clients against it, then stops it. Each client prints one line per check and
# `N passed, M failed`; this script ends with `interop: N passed, M failed` over all four runs.
# A server or client that cannot start, crashes or prints no summary counts as failed; nothing
# is skipped. Extra arguments after PATH (e.g. --trace) go to every client.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
interop_use_node22
[ -x "$VENV_PY" ] || interop_die "the Python venv is not installed at $VENV_DIR; run scripts/install-peers.sh"
[ -f "$INTEROP_DIR/node_modules/@modelcontextprotocol/client/package.json" ] \
  || interop_die "@modelcontextprotocol/client is not installed; run scripts/install-peers.sh"

bin="${1:-${SWITCHBOARD_BIN:-$INTEROP_REPO/target/debug/switchboard}}"
[ $# -gt 0 ] && shift
[ -x "$bin" ] || interop_die "no switchboard binary at $bin (cargo build --bin switchboard)"
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"

server_pid=""
server_log="$(mktemp)"
stop_server() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2> /dev/null || true; wait "$server_pid" 2> /dev/null || true; fi
  server_pid=""
}
trap 'stop_server; rm -f "$server_log"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

total_pass=0
total_fail=0
# run_client LABEL CMD...: runs one client, adds its summary line to the totals.
run_client() {
  local label="$1"
  shift
  local log rc=0 summary p f
  log="$(mktemp)"
  echo "== interop 2026-07-28: $label"
  "$@" 2>&1 | tee "$log" || rc=$?
  summary="$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1 || true)"
  rm -f "$log"
  if [ -z "$summary" ]; then
    echo "FAIL interop $label: the client printed no summary line (exit $rc)"
    total_fail=$((total_fail + 1))
    return
  fi
  p="${summary%% passed*}"
  f="${summary#*passed, }"
  f="${f%% failed}"
  total_pass=$((total_pass + p))
  total_fail=$((total_fail + f))
  if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
    echo "FAIL interop $label: exit code $rc with no failed check"
    total_fail=$((total_fail + 1))
  fi
}

ts_label="TypeScript SDK v2 client $TS_V2_VERSION (ts-client-2026.mjs)"
py_label="Python SDK mcp $PY_MCP_VERSION (py_client_2026.py)"

# ---- stdio
run_client "$ts_label over stdio" "$NODE22" "$INTEROP_DIR/ts-client-2026.mjs" --bin "$bin" "$@"
run_client "$py_label over stdio" "$VENV_PY" "$INTEROP_DIR/py_client_2026.py" --bin "$bin" "$@"

# ---- Streamable HTTP
"$bin" serve --http 127.0.0.1:0 2> "$server_log" &
server_pid=$!
url=""
for _ in $(seq 100); do
  url="$(grep -o 'http://[^ ]*/mcp' "$server_log" | head -n 1 || true)"
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2> /dev/null || break
  sleep 0.1
done
if [ -z "$url" ]; then
  echo "FAIL interop: '$bin serve --http 127.0.0.1:0' printed no listening URL: $(cat "$server_log")"
  total_fail=$((total_fail + 1))
else
  echo "== interop 2026-07-28: $bin serve --http listening on $url"
  run_client "$ts_label over Streamable HTTP" "$NODE22" "$INTEROP_DIR/ts-client-2026.mjs" --http "$url" "$@"
  run_client "$py_label over Streamable HTTP" "$VENV_PY" "$INTEROP_DIR/py_client_2026.py" --http "$url" "$@"
  if ! kill -0 "$server_pid" 2> /dev/null; then
    echo "FAIL interop: the HTTP server exited during the run: $(tail -c 2000 "$server_log")"
    total_fail=$((total_fail + 1))
  fi
fi
stop_server

echo "interop: $total_pass passed, $total_fail failed"
[ "$total_fail" = 0 ] && [ "$total_pass" -gt 0 ]
