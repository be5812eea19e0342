#!/usr/bin/env bash
# Our checker (switchboard check) against a real server nobody on this team wrote: the official
# @modelcontextprotocol/server-everything (pinned in interop/package-lock.json; TypeScript SDK
# 1.32.2 inside), over stdio and over Streamable HTTP (its `streamableHttp` mode, forced onto
# 127.0.0.1 by interop/listen-localhost.mjs), on Node 22 from interop/node_modules.
#
# It prints every result, then asserts that the set of failing checks is exactly the expected
# list below, per transport, and that `check` exits 1 (a failure found; 2 would mean it could not
# run). Each expected failure is a real deviation of that server from the spec (or from the
# robustness rule the check states), verified in its source; none is a bug of our checker.
# A new failure, or an expected one that no longer fails, fails this script: then look again.
# Install first: scripts/install-peers.sh.
#
#   interop/check-server-everything.sh path/to/switchboard
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:?usage: interop/check-server-everything.sh path/to/switchboard}"
. interop/lib.sh
SERVER="$(interop/run-server-everything.sh)"
SDK="interop/node_modules/@modelcontextprotocol/sdk/dist/esm"

# Failing checks expected over stdio, as `TAG|name`. Why each one fails:
# LC-1  The SDK's Protocol class serves any request before `initialize` (tools/list is answered
#       with the tool list). LC-1: initialization MUST be the first interaction; SPEC-NOTES §3.2
#       (rec.) refuses such a request with -32600. (Over HTTP its transport refuses it: 400.)
# JR-6  The id 9007199254740993 (a valid JSON-RPC id: the schema's RequestId is string | integer,
#       unbounded) is not a safe JS integer: the SDK's zod schema rejects the message and
#       $SDK/shared/stdio.js (ReadBuffer.readMessage -> processReadBuffer -> onerror) drops it, so
#       no response carries the id. JSON-RPC 2.0: the response id MUST equal the request's.
# JR (malformed JSON), JR-4 (null id), JR-1 (jsonrpc "1.0"): the same stdio read path drops any
#       line that fails JSON.parse or the schema, with no answer at all. JSON-RPC 2.0 §5 requires
#       an error response: -32700 (id null) for a parse error, -32600 for an invalid request.
# JR (tools/call without name): the request's params fail the SDK's zod schema and the error is
#       answered as -32603 (internal error, with the zod issues as message). JSON-RPC 2.0 and
#       SPEC-NOTES §2.3: invalid params are -32602.
# UT-12 tools/list with a forged cursor returns the first page. SPEC-NOTES §8.6: an invalid cursor
#       SHOULD get -32602 (a SHOULD, but the check states it and the server ignores the cursor).
# ST    A 20 MiB line exceeds the SDK's stdio ReadBuffer bound (STDIO_DEFAULT_MAX_BUFFER_SIZE,
#       10 MiB, in $SDK/shared/stdio.js): append() throws, the transport closes and the process
#       exits, so the session is lost for one oversized frame. The spec sets no frame size; this
#       is the robustness rule of the check (issue 5: an oversized frame handled without a
#       crash), and ending the process is what it exists to catch.
EXPECTED_STDIO='LC-1|a request before initialize is refused
JR-6|an id beyond 2^53 is kept exactly
JR|malformed JSON is -32700
JR-4|a null id is an invalid request (-32600)
JR-1|a wrong jsonrpc version is -32600
JR|bad params (tools/call without name) are -32602
UT-12|a forged cursor is refused with -32602
ST|a 20 MiB frame does not crash the server'

# Failing checks expected over Streamable HTTP. Why each one fails:
# JR-6  As over stdio, the unsafe-integer id fails the schema; the transport answers HTTP 400 with
#       -32700 "Invalid JSON-RPC message" (so no result carries the id).
# JR-4, JR-1  A null id / jsonrpc "1.0" is valid JSON but answered -32700 (parse error) by the
#       SDK's HTTP transport (HTTP 400); JSON-RPC 2.0: a valid JSON body that is not a valid
#       request is -32600. (Malformed JSON itself passes over HTTP: 400 with -32700.)
# JR (tools/call without name), UT-12: as over stdio.
# HT-20 (unknown session id) server-everything's own Express app (dist/transports/streamableHttp.js)
#       answers a session id it does not know with 400 "No valid session ID provided" before the
#       SDK transport (which would say 404) sees it. SPEC-NOTES §6.6/§6.10: 404 Not Found.
# HT-20 (DELETE) For the same reason, after DELETE ended the session (200) a request with its id
#       gets 400, not the 404 that HT-20 requires once a session has ended.
# HT-3  No Origin validation: the app sets CORS origin "*" and the SDK transport's DNS-rebinding
#       protection is off by default (enableDnsRebindingProtection: false, no allowedOrigins), so
#       a request with Origin http://evil.example is served (200). HT-2: the server MUST check
#       Origin; HT-3 (2025-11-25): a disallowed Origin gets 403; SECURITY-NOTES SEC-LOC-7.
# HT-6  A JSON array POSTed in a session that negotiated 2025-11-25 is served as a batch (the SDK
#       transport accepts arrays whatever the version). Batching was removed in 2025-06-18 (HT-6:
#       the body is a single message; LC-5: both sides stay on the negotiated version); SPEC-NOTES
#       §2.2 (rec.) refuses it with -32600 or HTTP 400. (Under 2025-03-26 it is rightly served:
#       JR-12 passes.)
EXPECTED_HTTP='JR-6|an id beyond 2^53 is kept exactly
JR-4|a null id is an invalid request (-32600)
JR-1|a wrong jsonrpc version is -32600
JR|bad params (tools/call without name) are -32602
UT-12|a forged cursor is refused with -32602
HT-20|an unknown session id is 404
HT-3|a foreign Origin is 403
HT-6|a batch is refused when the negotiated version has none (400 or -32600)
HT-20|DELETE ends the session (then 404) or is 405'

status=0
RESULTS="$(mktemp)"
ERRS="$(mktemp)"
trap 'rm -f "$RESULTS" "$ERRS"' EXIT
run_check() { # transport-name, expected, check args...
  local name="$1" expected="$2"
  shift 2
  local out code=0
  echo "-- switchboard check $* (server-everything over $name)"
  out="$(timeout 300 "$BIN" check --json "$@" 2>"$ERRS")" || code=$?
  if [ "$code" -ne 1 ]; then
    echo "FAIL: switchboard check exited $code (expected 1: failures found)"
    cat "$ERRS" >&2
    status=1
  fi
  printf '%s\n' "$out" >"$RESULTS"
  EXPECTED="$expected" python3 - "$RESULTS" <<'PY' || status=1
import json, os, sys
lines = [json.loads(l) for l in open(sys.argv[1]).read().splitlines() if l.strip()]
if not lines or "passed" not in lines[-1]:
    print("FAIL: no summary line from switchboard check")
    sys.exit(1)
results, summary = lines[:-1], lines[-1]
for r in results:
    word = {"pass": "pass", "fail": "FAIL", "skip": "skip"}[r["outcome"]]
    print("%s [%s] %s: %s" % (word, r["tag"], r["name"], r["detail"][:200]))
print("%d passed, %d failed, %d skipped" % (summary["passed"], summary["failed"], summary["skipped"]))
failed = {"%s|%s" % (r["tag"], r["name"]) for r in results if r["outcome"] == "fail"}
expected = set(os.environ["EXPECTED"].splitlines())
ok = True
for x in sorted(failed - expected):
    print("UNEXPECTED FAILURE: " + x)
    ok = False
for x in sorted(expected - failed):
    print("EXPECTED TO FAIL BUT DID NOT: " + x)
    ok = False
print("the failing checks are exactly the expected ones" if ok else "MISMATCH")
sys.exit(0 if ok else 1)
PY
}

run_check stdio "$EXPECTED_STDIO" --stdio "$SERVER"

trap 'kill "${SE_HTTP_PID:-}" 2>/dev/null || true; rm -f "${SE_HTTP_LOG:-}" "$RESULTS" "$ERRS"' EXIT
start_server_everything_http
run_check "Streamable HTTP" "$EXPECTED_HTTP" --url "$SE_HTTP_URL"

[ "$status" -eq 0 ] && echo "check-server-everything: OK" || echo "check-server-everything: FAILED"
exit "$status"
