#!/usr/bin/env bash
# Our fuzzer (switchboard fuzz) against two servers nobody on this team wrote, over stdio and over
# Streamable HTTP: the official Python SDK (mcp 2.3.0, interop/py_everything_server.py on the venv's
# Python) and @modelcontextprotocol/server-everything (TypeScript SDK 1.32.2 inside, on Node 22; its
# streamableHttp mode forced onto 127.0.0.1 by interop/listen-localhost.mjs).
#
# Each run has a fixed seed and a small case budget, so its cases are the same every time. The script
# prints every problem found (grouped as `family|rule`, with a seed that replays it), then asserts
# that the set of `family|rule` pairs with problems is exactly the expected list below, per peer and
# transport, and that `fuzz` exits 1 (problems found; 2 would mean it could not run). Each expected
# entry is a real deviation of that server from the spec, verified in the SDK's source; docs/FUZZ.md
# ("switchboard fuzz against other servers") explains each. A new problem, or an expected one that no
# longer shows, fails this script: then look again (and update docs/FUZZ.md).
# Install first: scripts/install-peers.sh.
#
#   interop/fuzz-peers.sh path/to/switchboard
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:?usage: interop/fuzz-peers.sh path/to/switchboard}"
. interop/lib.sh
[ -x "$BIN" ] || interop_die "no switchboard binary at $BIN (cargo build --bin switchboard)"
[ -x "$VENV_PY" ] || interop_die "the Python venv is not installed at $VENV_DIR; run scripts/install-peers.sh"
SERVER_PY="$INTEROP_DIR/py_everything_server.py"
SE_STDIO="$(interop/run-server-everything.sh)"

# The budgets: over stdio each problem costs a new server process (a Python start-up is a second),
# so the stdio runs are short; over HTTP a case costs milliseconds.
STDIO=(--seed 1 --cases 40 --timeout 3)
HTTP=(--seed 19 --cases 120 --timeout 3)

# The Python SDK over stdio. Its stdin reader (mcp/server/stdio.py) validates each line with
# jsonrpc_message_adapter.validate_json; a line that fails (not JSON, not a JSON-RPC message, a
# batch) becomes an exception that JSONRPCDispatcher logs at debug level and drops: no answer.
# frame/malformed-json JR: -32700 is required for invalid JSON (JSON-RPC 2.0 §5.1).
# frame/not-an-object JR, frame/envelope JR-1, id/invalid JR-3: valid JSON that is not a valid
#     request (a bare value; "jsonrpc" missing or not "2.0"; a float or null id) needs -32600.
# batch/served, batch/invalid-entries, batch/nested JR-12: the server agrees to 2025-03-26 but never
#     answers a batch, which that revision requires it to receive; JSON-RPC 2.0 §6 answers [1,2,3]
#     and [[...]] with -32600 per entry.
# batch/refused JR-12: under 2025-06-18 and later a batch is an invalid request: -32600, not silence.
# params/positional JR: params as an array (valid JSON-RPC) fails MCP's schema: -32602 (or
#     -32600), not silence.
# lifecycle/initialize-with-bad-params LC-2: an initialize whose params are an array is dropped
#     like the rest, instead of -32602.
# frame/deep-nesting ST: 100,000 nested arrays (valid JSON) exceed Python's recursion limit in the
#     parser; the exception is dropped the same way, so the request is never answered.
# frame/lone-surrogate JR-2: a "\ud800" escape (valid JSON syntax) fails validation and is dropped;
#     the server must answer it or refuse it (-32700).
EXPECTED_PY_STDIO='batch/invalid-entries|JR-12
batch/nested|JR-12
batch/refused|JR-12
batch/served|JR-12
frame/deep-nesting|ST
frame/envelope|JR-1
frame/lone-surrogate|JR-2
frame/malformed-json|JR
frame/not-an-object|JR
id/invalid|JR-3
lifecycle/initialize-with-bad-params|LC-2
params/positional|JR'

# server-everything over stdio. The TypeScript SDK's stdio ReadBuffer (shared/stdio.js) parses each
# line with JSON.parse and the JSONRPCMessage zod schema; a failure goes to onerror and the line is
# dropped, so the same frames as above get no answer (JR, JR-1, JR-3, JR-12, params/positional).
# params/wrong-type, params/missing-member JR: a request whose params fail the method's zod schema
#     is answered -32603 (internal error, the zod issues as message) where -32602 is required
#     (SPEC-NOTES §2.3).
# lifecycle/initialize-with-bad-params LC-2: the same for initialize (-32603 instead of -32602).
EXPECTED_SE_STDIO='batch/invalid-entries|JR-12
batch/nested|JR-12
batch/refused|JR-12
batch/served|JR-12
frame/envelope|JR-1
frame/malformed-json|JR
frame/not-an-object|JR
id/invalid|JR-3
lifecycle/initialize-with-bad-params|LC-2
params/missing-member|JR
params/positional|JR
params/wrong-type|JR'

# The Python SDK over Streamable HTTP (mcp/server/streamable_http.py, _handle_post_request): a body
# that is JSON but fails jsonrpc_message_adapter.validate_python is answered HTTP 400 with -32602
# "Validation error"; JSON-RPC 2.0 requires -32600 for an invalid request.
# frame/not-an-object JR, frame/envelope JR-1, batch/empty JR-12: -32602 instead of -32600.
# batch/served, batch/mixed, batch/invalid-entries, batch/nested, batch/duplicate-ids JR-12/JR-5:
#     a JSON array fails the single-message schema, so under 2025-03-26 (which the server agrees to)
#     no batch is served (JR-12: a server MUST be able to receive batches).
# id/invalid JR-3: a request whose id is an array validates as a notification (the id is ignored)
#     and gets 202 with no answer; it is an invalid request (-32600).
# http/last-event-id HT-17: a GET with Last-Event-ID calls _replay_events, which returns without a
#     response when no event store is configured: uvicorn answers 500 ("ASGI callable returned
#     without starting response"). With no store the server must still answer (a stream, or 4xx).
# May show (a race, so not required): id/string-and-integer JR-6. Request streams are keyed by
#     str(message.id) (_request_streams), so "7" and 7 in flight at once share one stream; one
#     POST gets both answers and the other none.
EXPECTED_PY_HTTP='batch/duplicate-ids|JR-5
batch/empty|JR-12
batch/invalid-entries|JR-12
batch/mixed|JR-12
batch/nested|JR-12
batch/served|JR-12
frame/envelope|JR-1
frame/not-an-object|JR
http/last-event-id|HT-17
id/invalid|JR-3'
MAYBE_PY_HTTP='id/string-and-integer|JR-6'

# server-everything over Streamable HTTP (the SDK's webStandardStreamableHttp.js): a body that is
# JSON but fails the JSONRPCMessage schema is answered HTTP 400 with -32700 "Parse error: Invalid
# JSON-RPC message"; -32700 is for invalid JSON only, an invalid request is -32600.
# frame/not-an-object JR, frame/envelope JR-1, id/invalid JR-3, batch/invalid-entries, batch/nested,
#     batch/mixed JR-12: -32700 instead of -32600.
# id/kept-exactly, id/beyond-64-bits JR-6: integer ids beyond 2^53 (9007199254740993, i64::MIN,
#     2^63) fail the schema (safe integers only) and get -32700; an id must come back exactly.
# batch/empty JR-12: [] holds no request, so the transport answers 202; JSON-RPC 2.0 §6 answers an
#     empty array with one -32600.
# batch/refused HT-6: a batch in a session that negotiated 2025-11-25 is served (batches were
#     removed in 2025-06-18; SPEC-NOTES §2.2 refuses them with -32600 or HTTP 400).
# frame/not-utf-8 JR-2: a body that is not UTF-8 is decoded with U+FFFD replacements and served; it
#     is not JSON text (RFC 8259 §8.1), so -32700.
# params/wrong-type, params/missing-member, params/wrong-tool-arguments JR: -32603 where -32602 is
#     required, as over stdio.
# lifecycle/initialize-with-bad-params LC-2: an initialize whose capabilities is an array fails the
#     transport's initialize check and is answered as a request without session (400, -32000
#     "Server not initialized") instead of -32602.
EXPECTED_SE_HTTP='batch/empty|JR-12
batch/invalid-entries|JR-12
batch/mixed|JR-12
batch/nested|JR-12
batch/refused|HT-6
frame/envelope|JR-1
frame/not-an-object|JR
frame/not-utf-8|JR-2
id/beyond-64-bits|JR-6
id/invalid|JR-3
id/kept-exactly|JR-6
lifecycle/initialize-with-bad-params|LC-2
params/missing-member|JR
params/wrong-tool-arguments|JR
params/wrong-type|JR'

status=0
RESULTS="$(mktemp)"
ERRS="$(mktemp)"
cleanup() {
  for pid in "${PY_HTTP_PID:-}" "${SE_HTTP_PID:-}"; do
    if [ -n "$pid" ]; then
      kill "$pid" 2> /dev/null || true
      wait "$pid" 2> /dev/null || true
    fi
  done
  rm -f "$RESULTS" "$ERRS" "${PY_HTTP_LOG:-}" "${SE_HTTP_LOG:-}"
}
trap cleanup EXIT

# The problems found, grouped as family|rule, each with a seed that replays it.
FUZZ_FOUND='
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]).read().splitlines() if l.strip()]
if not lines or "cases" not in lines[-1] or "problems" not in lines[-1]:
    print("FAIL: no summary line from switchboard fuzz")
    sys.exit(1)
cases, summary = lines[:-1], lines[-1]
found = {}
for c in cases:
    for p in c["problems"]:
        if p["rule"] != "…":
            found.setdefault("%s|%s" % (c["family"], p["rule"]), (c["seed"], p["what"]))
for key in sorted(found):
    seed, what = found[key]
    print("problem %s (seed %s): %s" % (key, seed, what[:220]))
print("%d cases, %d problems, %d skipped" % (summary["cases"], summary["problems"], summary["skipped"]))
for key in sorted(found):
    print("found " + key)
'

# run_fuzz NAME EXPECTED MAYBE FUZZ-ARGS...: runs the fuzzer and compares its problem set.
run_fuzz() {
  local name="$1" expected="$2" maybe="$3"
  shift 3
  echo "-- switchboard fuzz $* ($name)"
  interop_expect_exactly "$RESULTS" "$ERRS" 900 "$FUZZ_FOUND" "$expected" "$maybe" \
    "$BIN" fuzz --json "$@" || status=1
}

run_fuzz "Python SDK over stdio" "$EXPECTED_PY_STDIO" "" \
  --stdio "$(printf '%q %q --stdio' "$VENV_PY" "$SERVER_PY")" "${STDIO[@]}"
run_fuzz "server-everything over stdio" "$EXPECTED_SE_STDIO" "" --stdio "$SE_STDIO" "${STDIO[@]}"

start_python_http "$SERVER_PY"
run_fuzz "Python SDK over Streamable HTTP" "$EXPECTED_PY_HTTP" "$MAYBE_PY_HTTP" --url "$PY_HTTP_URL" "${HTTP[@]}"

start_server_everything_http
run_fuzz "server-everything over Streamable HTTP" "$EXPECTED_SE_HTTP" "" --url "$SE_HTTP_URL" "${HTTP[@]}"

[ "$status" -eq 0 ] && echo "fuzz-peers: OK" || echo "fuzz-peers: FAILED"
exit "$status"
