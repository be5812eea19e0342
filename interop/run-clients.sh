#!/usr/bin/env bash
# Runs both official-SDK interop clients against a Switchboard server and fails unless both pass:
#   interop/ts-client.mjs  (TypeScript SDK, Node 22)   interop/py_client.py  (Python SDK, .tools/venv)
#
#   interop/run-clients.sh [--bin PATH]   stdio: each client spawns `PATH serve --stdio`
#                                         (default $SWITCHBOARD_BIN, else target/debug/switchboard)
#   interop/run-clients.sh --http URL     Streamable HTTP against a running server,
#                                         e.g. http://127.0.0.1:PORT/mcp
#   interop/run-clients.sh --serve-http PATH
#                                         starts `PATH serve --http 127.0.0.1:0`, reads the URL from
#                                         its 'listening on http://ADDR/mcp' line, runs both clients
#                                         over Streamable HTTP, then stops it
#
# Each client prints one line per check and `N passed, M failed`; this script ends with
# `interop: N passed, M failed` over both. A client that cannot start, crashes or prints no summary
# counts as failed. Extra arguments after the mode (e.g. --trace) go to both clients.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
interop_use_node22
[ -x "$VENV_PY" ] || interop_die "the Python venv is not installed at $VENV_DIR; run scripts/install-peers.sh"

target=()
case "${1:-}" in
  --http)
    [ $# -ge 2 ] || interop_die "usage: interop/run-clients.sh --http URL"
    target=(--http "$2")
    shift 2
    ;;
  --serve-http)
    [ $# -ge 2 ] || interop_die "usage: interop/run-clients.sh --serve-http PATH"
    [ -x "$2" ] || interop_die "no switchboard binary at $2 (cargo build --bin switchboard)"
    server_log="$(mktemp)"
    trap 'kill "${SB_HTTP_PID:-}" 2> /dev/null || true; wait "${SB_HTTP_PID:-}" 2> /dev/null || true; rm -f "$server_log"' EXIT
    start_switchboard_http "$2" "$server_log"
    url="$SB_HTTP_URL"
    echo "== interop: $2 serve --http listening on $url"
    target=(--http "$url")
    shift 2
    ;;
  --bin)
    [ $# -ge 2 ] || interop_die "usage: interop/run-clients.sh --bin PATH"
    target=(--bin "$(cd "$(dirname "$2")" && pwd)/$(basename "$2")")
    shift 2
    ;;
esac
if [ "${#target[@]}" = 0 ] || [ "${target[0]}" = --bin ]; then
  bin="${target[1]:-${SWITCHBOARD_BIN:-$INTEROP_REPO/target/debug/switchboard}}"
  [ -x "$bin" ] || interop_die "no switchboard binary at $bin (cargo build --bin switchboard)"
  target=(--bin "$bin")
fi

total_pass=0
total_fail=0
run_client() {
  local label="$1"
  shift
  local log rc=0 summary
  log="$(mktemp)"
  echo "== interop: $label"
  "$@" "${target[@]}" 2>&1 | tee "$log" || rc=$?
  summary="$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1 || true)"
  rm -f "$log"
  if [ -z "$summary" ]; then
    echo "FAIL interop $label: the client printed no summary line (exit $rc)"
    total_fail=$((total_fail + 1))
    return
  fi
  local p f
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

run_client "TypeScript SDK $SDK_VERSION (ts-client.mjs)" node "$INTEROP_DIR/ts-client.mjs" "$@"
run_client "Python SDK mcp $PY_MCP_VERSION (py_client.py)" "$VENV_PY" "$INTEROP_DIR/py_client.py" "$@"

if [ -n "${server_pid:-}" ] && ! kill -0 "$server_pid" 2> /dev/null; then
  echo "FAIL interop: the HTTP server exited during the run: $(tail -c 2000 "$server_log")"
  total_fail=$((total_fail + 1))
fi
echo "interop: $total_pass passed, $total_fail failed"
[ "$total_fail" = 0 ] && [ "$total_pass" -gt 0 ]
