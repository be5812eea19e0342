#!/usr/bin/env bash
# Our client in revision 2026-07-28 against the official Python SDK's dual-era server
# (`mcp` 2.3.0 `MCPServer`, interop/py_modern_server.py), over Streamable HTTP and over stdio:
# the era probe must find a modern server, then tools/list, a plain tools/call, two
# input-required tools (an elicitation, a roots/list) and a tool whose argument is mirrored into
# Mcp-Param-Region (the SDK rejects the call when the header is missing or wrong).
#
#   interop/our-client-py-2026.sh [INTEROP_BIN]
#       INTEROP_BIN defaults to target/debug/switchboard-modern-interop
#       (cargo build --bin switchboard-modern-interop).
#
# Prints the client's PASS/FAIL lines; exit 0 only if every step passed on both transports.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$INTEROP_REPO"
[ -x "$VENV_PY" ] || interop_die "the Python venv is missing ($VENV_PY); run scripts/install-peers.sh"
BIN="${1:-target/debug/switchboard-modern-interop}"
[ -x "$BIN" ] || interop_die "no interop client at $BIN (cargo build --bin switchboard-modern-interop)"

LOG="$(mktemp)"
PY_PID=""
cleanup() {
  if [ -n "$PY_PID" ]; then kill "$PY_PID" 2> /dev/null || true; wait "$PY_PID" 2> /dev/null || true; fi
  rm -f "$LOG"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"$VENV_PY" interop/py_modern_server.py --http 0 2> "$LOG" &
PY_PID=$!
URL=""
for _ in $(seq 150); do
  URL="$(grep -o 'listening on http://127\.0\.0\.1:[0-9]*/mcp' "$LOG" | head -n 1 | sed 's/^listening on //' || true)"
  [ -n "$URL" ] && break
  kill -0 "$PY_PID" 2> /dev/null || break
  sleep 0.2
done
[ -n "$URL" ] || interop_die "interop/py_modern_server.py --http did not start: $(cat "$LOG")"

failed=0
"$BIN" --url "$URL" || failed=1
"$BIN" --stdio "$(printf '%q' "$VENV_PY") interop/py_modern_server.py --stdio" || failed=1
if [ "$failed" != 0 ]; then
  echo "FAIL our client (2026-07-28) against the Python SDK server; server log:"
  cat "$LOG"
  exit 1
fi
echo "PASS our client (2026-07-28) against the Python SDK server over Streamable HTTP and stdio"
