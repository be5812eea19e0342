#!/usr/bin/env bash
# Our client in revision 2026-07-28 against the official SDKs' dual-era servers, over Streamable
# HTTP and over stdio: the Python SDK's `MCPServer` (`mcp` 2.3.0, interop/py_modern_server.py) and
# the TypeScript SDK v2 (`@modelcontextprotocol/server` 2.4.0, interop/ts_v2_server.mjs). The era
# probe must find a modern server; then tools/list, a plain tools/call, two input-required tools
# (an elicitation, a roots/list) and a tool whose argument is mirrored into Mcp-Param-Region.
#
#   interop/our-client-2026.sh [INTEROP_BIN]
#       INTEROP_BIN defaults to target/debug/switchboard-modern-interop
#       (cargo build --bin switchboard-modern-interop).
#
# Prints the client's PASS/FAIL lines; exit 0 only if every step passed against both servers on
# both transports.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$INTEROP_REPO"
interop_use_node22
[ -x "$VENV_PY" ] || interop_die "the Python venv is missing ($VENV_PY); run scripts/install-peers.sh"
BIN="${1:-target/debug/switchboard-modern-interop}"
[ -x "$BIN" ] || interop_die "no interop client at $BIN (cargo build --bin switchboard-modern-interop)"

LOG="$(mktemp)"
PEER_PID=""
stop_peer() {
  if [ -n "$PEER_PID" ]; then kill "$PEER_PID" 2> /dev/null || true; wait "$PEER_PID" 2> /dev/null || true; fi
  PEER_PID=""
}
trap 'stop_peer; rm -f "$LOG"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

failed=0
# peer NAME PROGRAM SCRIPT: the server over HTTP (port 0, `listening on URL` on stderr), then over stdio.
peer() {
  local name="$1" program="$2" script="$3" url=""
  "$program" "$script" --http 0 2> "$LOG" &
  PEER_PID=$!
  for _ in $(seq 150); do
    url="$(grep -o 'listening on http://127\.0\.0\.1:[0-9]*/mcp' "$LOG" | head -n 1 | sed 's/^listening on //' || true)"
    [ -n "$url" ] && break
    kill -0 "$PEER_PID" 2> /dev/null || break
    sleep 0.2
  done
  [ -n "$url" ] || interop_die "$script --http did not start: $(cat "$LOG")"
  echo "== $name over Streamable HTTP ($url)"
  if ! "$BIN" --url "$url"; then
    failed=1
    echo "server log:"
    cat "$LOG"
  fi
  stop_peer
  echo "== $name over stdio"
  "$BIN" --stdio "$(printf '%q %q' "$program" "$script") --stdio" || failed=1
}

peer "the Python SDK (mcp $PY_MCP_VERSION)" "$VENV_PY" interop/py_modern_server.py
peer "the TypeScript SDK v2 ($TS_V2_VERSION)" "$NODE22" interop/ts_v2_server.mjs

if [ "$failed" != 0 ]; then
  echo "FAIL our client (2026-07-28) against the official SDK servers"
  exit 1
fi
echo "PASS our client (2026-07-28) against the Python and TypeScript SDK servers over Streamable HTTP and stdio"
