#!/usr/bin/env bash
# Our security probes (switchboard check --security) against two servers nobody on this team wrote,
# over stdio and over Streamable HTTP: the official Python SDK (mcp 2.3.0,
# interop/py_everything_server.py on the venv's Python) and @modelcontextprotocol/server-everything
# (TypeScript SDK 1.32.2 inside, on Node 22; its streamableHttp mode forced onto 127.0.0.1 by
# interop/listen-localhost.mjs); and, for the probes of revision 2026-07-28, the Python SDK's
# MCPServer (interop/py_modern_server.py) over Streamable HTTP with --input-tool greet (its tool
# asking for a name: the only tool the probes call). None asks for tokens, so the authorization
# probes are skips. (interop/ts_v2_server.mjs is left out: its HTTP front is our own node:http glue,
# which reads whole bodies without a bound, so its findings would be ours, not the SDK's.)
#
# The script prints every failing probe with the start of its detail, then asserts that the set of
# failing probe names is exactly the expected list below, per peer and transport, and that `check`
# exits 1 (failures found; 2 would mean it could not run). Each expected failure is a real deviation
# of that server from the rule named by the probe's tag, explained in the comment above its list and
# in docs/SECURITY-check.md ("The probes against other servers"). A new failure, or an expected one
# that no longer shows, fails this script: then look again (and update docs/SECURITY-check.md).
# Install first: scripts/install-peers.sh.
#
#   interop/security-peers.sh path/to/switchboard
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:?usage: interop/security-peers.sh path/to/switchboard}"
. interop/lib.sh
[ -x "$BIN" ] || interop_die "no switchboard binary at $BIN (cargo build --bin switchboard)"
[ -x "$VENV_PY" ] || interop_die "the Python venv is not installed at $VENV_DIR; run scripts/install-peers.sh"
SERVER_PY="$INTEROP_DIR/py_everything_server.py"
SE_STDIO="$(interop/run-server-everything.sh)"

# Over stdio a frame the server drops costs a whole timeout, so it is short.
ARGS=(--timeout 2)

# The Python SDK over stdio (mcp/server/stdio.py reads stdin line by line with no bound).
# security/oversized/line (ST SEC-TOOL-1): a 20 MiB line is read whole and the ping in it answered;
#     a server bounds what one line may cost it (an error or the line dropped).
EXPECTED_PY_STDIO='security/oversized/line'

# server-everything over stdio (the TypeScript SDK's StdioServerTransport and ReadBuffer).
# security/oversized/line (ST SEC-TOOL-1): on a 20 MiB line the process exits (status 0) instead
#     of answering with an error or dropping the line; the next ping finds it gone.
EXPECTED_SE_STDIO='security/oversized/line'

# The Python SDK over Streamable HTTP (mcp/server/streamable_http.py and
# streamable_http_manager.py, behind uvicorn).
# security/duplicate-headers/session-id (HT-20 SEC-SH-2): with two Mcp-Session-Id lines, the real id
#     first and a forged one second, the request is served in the real session (200): the first
#     line is taken and the second never looked at (the other order gives 404).
# security/duplicate-headers/protocol-version (HT-23): MCP-Protocol-Version 2025-11-25 then
#     1999-01-01 is served (200); the reverse order gets 400 "appears more than once", so the
#     duplicate is only noticed when the first value is invalid.
# security/rejected-session/invalid-json, security/rejected-session/no-accept (SEC-SH-2 HT-6 HT-5):
#     an initialize refused as invalid JSON (400, -32700) or for its Accept header (406) still
#     carries an Mcp-Session-Id: the session manager makes the transport and its id before the
#     transport refuses the request. The id is not usable afterwards (404).
EXPECTED_PY_HTTP='security/duplicate-headers/protocol-version
security/duplicate-headers/session-id
security/rejected-session/invalid-json
security/rejected-session/no-accept'

# server-everything over Streamable HTTP (the SDK's StreamableHTTPServerTransport on express, with
# no DNS rebinding protection configured; listen-localhost.mjs binds it to 127.0.0.1).
# security/dns-rebinding/host, security/dns-rebinding/origin (SEC-LOC-7 HT-2 HT-3): an initialize
#     with Host: evil.example, or with Origin: http://evil.example, is served (200, a session) by a
#     server listening on loopback; a web page could reach it through DNS rebinding.
# security/duplicate-headers/host (RFC9112-3.2): two Host lines are served (200) instead of 400.
# security/session-id/ended (SEC-SH-7 HT-20): after DELETE (200) the ended id gets 400 "No valid
#     session ID provided" instead of 404, so a client cannot tell it must initialize again.
EXPECTED_SE_HTTP='security/dns-rebinding/host
security/dns-rebinding/origin
security/duplicate-headers/host
security/session-id/ended'

# The Python SDK's MCPServer in revision 2026-07-28 over Streamable HTTP: the same HTTP stack as
# above, so the same four failures; every 2026-07-28 probe passes (duplicate Mcp-Method and
# Mcp-Name lines are 400 -32020, two "method" keys never serve what the header did not name, a
# tampered or forged requestState gets -32602 "Invalid or expired requestState").
EXPECTED_PY_MODERN_HTTP="$EXPECTED_PY_HTTP"

status=0
RESULTS="$(mktemp)"
ERRS="$(mktemp)"
PY_PID=""
PY_LOG=""
cleanup() {
  for pid in "$PY_PID" "${SE_HTTP_PID:-}" "${PM_PID:-}"; do
    if [ -n "$pid" ]; then
      kill "$pid" 2> /dev/null || true
      wait "$pid" 2> /dev/null || true
    fi
  done
  rm -f "$RESULTS" "$ERRS" "${PY_LOG:-}" "${SE_HTTP_LOG:-}" "${PM_LOG:-}"
}
trap cleanup EXIT

# The failing probes, each with the start of its detail.
CHECK_FOUND='
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]).read().splitlines() if l.strip()]
if not lines or "failed" not in lines[-1]:
    print("FAIL: no summary line from switchboard check")
    sys.exit(1)
probes, summary = lines[:-1], lines[-1]
failed = [p for p in probes if p["outcome"] == "fail"]
for p in failed:
    print("failed %s [%s]: %s" % (p["name"], p["tag"], p["detail"][:300]))
print("%d passed, %d failed, %d skipped" % (summary["passed"], summary["failed"], summary["skipped"]))
for p in failed:
    print("found " + p["name"])
'

# run_check NAME EXPECTED CHECK-ARGS...: runs the probes and compares the failing set.
run_check() {
  local name="$1" expected="$2"
  shift 2
  echo "-- switchboard check --security $* ($name)"
  interop_expect_exactly "$RESULTS" "$ERRS" 120 "$CHECK_FOUND" "$expected" "" \
    "$BIN" check --security --json "$@" || status=1
}

run_check "Python SDK over stdio" "$EXPECTED_PY_STDIO" \
  --stdio "$(printf '%q %q --stdio' "$VENV_PY" "$SERVER_PY")" "${ARGS[@]}"
run_check "server-everything over stdio" "$EXPECTED_SE_STDIO" --stdio "$SE_STDIO" "${ARGS[@]}"

start_python_http "$SERVER_PY"
PY_PID="$PY_HTTP_PID" PY_LOG="$PY_HTTP_LOG"
run_check "Python SDK over Streamable HTTP" "$EXPECTED_PY_HTTP" --url "$PY_HTTP_URL" "${ARGS[@]}"

start_python_http "$INTEROP_DIR/py_modern_server.py"
PM_PID="$PY_HTTP_PID" PM_LOG="$PY_HTTP_LOG"
run_check "Python SDK MCPServer (2026-07-28) over Streamable HTTP" "$EXPECTED_PY_MODERN_HTTP" \
  --url "$PY_HTTP_URL" --input-tool greet "${ARGS[@]}"

start_server_everything_http
run_check "server-everything over Streamable HTTP" "$EXPECTED_SE_HTTP" --url "$SE_HTTP_URL" "${ARGS[@]}"

[ "$status" -eq 0 ] && echo "security-peers: OK" || echo "security-peers: FAILED"
exit "$status"
