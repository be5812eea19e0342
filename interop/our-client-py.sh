#!/usr/bin/env bash
# Our client (switchboard call) against a server written with the official Python SDK (mcp 2.3.0):
# interop/py_everything_server.py, which implements ../shared/conformance/EVERYTHING-SERVER.md.
# The core checks over stdio (`--stdio "<venv python> py_everything_server.py"`, one server process
# per call), then the same and more over Streamable HTTP (`--http 0` started once in the
# background, killed on exit).
# Each check runs one `switchboard call` and compares the JSON result (or JSON-RPC error) exactly.
# Ends with `N passed, M failed`; exit 0 only if nothing failed and the server started.
# Install first: scripts/install-peers.sh.
#
#   interop/our-client-py.sh path/to/switchboard
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:?usage: interop/our-client-py.sh path/to/switchboard}"
. interop/lib.sh
[ -x "$BIN" ] || interop_die "no switchboard binary at $BIN (cargo build --bin switchboard)"
[ -x "$VENV_PY" ] || interop_die "the Python venv is not installed at $VENV_DIR; run scripts/install-peers.sh"
SERVER_PY="$INTEROP_DIR/py_everything_server.py"
STDIO_CMD="$(printf '%q %q --stdio' "$VENV_PY" "$SERVER_PY")"
ERR="$(mktemp)"
LOG="$(mktemp)"
HTTP_PID=""
cleanup() {
  if [ -n "$HTTP_PID" ]; then
    kill "$HTTP_PID" 2> /dev/null || true
    wait "$HTTP_PID" 2> /dev/null || true
  fi
  rm -f "$ERR" "$LOG"
}
trap cleanup EXIT

TARGET=(--stdio "$STDIO_CMD")
# check NAME EXPR CALL-ARGS...: the call must exit 0 and the python expression over `r` (the
# parsed JSON result) must hold.
check() {
  local name="$1" expr="$2" out
  shift 2
  if ! out="$(timeout 60 "$BIN" call "${TARGET[@]}" "$@" 2> "$ERR")"; then
    fail "$name" "switchboard call exited non-zero: $(tr '\n' ' ' < "$ERR" | cut -c1-300)"
    return
  fi
  if printf '%s' "$out" | python3 -c "import json,sys; r=json.load(sys.stdin); sys.exit(0 if ($expr) else 1)"; then
    pass "$name"
  else
    fail "$name" "$(printf '%s' "$out" | tr '\n' ' ' | cut -c1-300)"
  fi
}
# check_error NAME CODE CALL-ARGS...: the call must exit 1 with a JSON-RPC error of that code on stderr.
check_error() {
  local name="$1" code="$2" out rc=0
  shift 2
  out="$(timeout 60 "$BIN" call "${TARGET[@]}" "$@" 2> "$ERR")" || rc=$?
  if [ "$rc" != 1 ]; then
    fail "$name" "expected exit 1 (JSON-RPC error), got $rc: $(printf '%s' "$out" | tr '\n' ' ' | cut -c1-200) $(tr '\n' ' ' < "$ERR" | cut -c1-200)"
  elif python3 -c "import json,sys; e=json.load(open(sys.argv[1])); sys.exit(0 if e.get('code') == $code else 1)" "$ERR" 2> /dev/null; then
    pass "$name"
  else
    fail "$name" "expected error code $code: $(tr '\n' ' ' < "$ERR" | cut -c1-300)"
  fi
}

# more CHECK...: a further check, run over HTTP only (calls there are cheap; over stdio each call
# starts a Python server, about a second of imports, so stdio runs the core list only).
more() {
  [ "$MODE" = http ] || return 0
  "$@"
}

TEXT='lambda s: r == {"content": [{"type": "text", "text": s}]}'
PAGINATED='["test://static-text", "test://static-binary", "test://watched-resource"] + ["test://paginated/%02d" % i for i in range(1, 26)]'
all_checks() {
  check "ping answers {}" 'r == {}' ping
  check "tools/list: the 19 contract tools, exact schemas for test_structured_output and test_sampling" \
    'len(r["tools"]) == 19 and all(t["inputSchema"]["type"] == "object" and t.get("description") for t in r["tools"])
     and {t["name"]: t for t in r["tools"]}["test_structured_output"]["inputSchema"] == {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}
     and {t["name"]: t for t in r["tools"]}["test_structured_output"]["outputSchema"] == {"type": "object", "properties": {"sum": {"type": "integer"}, "product": {"type": "integer"}}, "required": ["sum", "product"]}
     and {t["name"]: t for t in r["tools"]}["test_sampling"]["inputSchema"] == {"type": "object", "properties": {"prompt": {"type": "string"}}, "required": ["prompt"]}' \
    tools/list
  more check "tools/list keeps the 2020-12 schema verbatim" \
    '{t["name"]: t for t in r["tools"]}["json_schema_2020_12_tool"]["inputSchema"]["$defs"]["address"]["properties"] == {"street": {"type": "string"}, "city": {"type": "string"}}
     and {t["name"]: t for t in r["tools"]}["json_schema_2020_12_tool"]["inputSchema"]["additionalProperties"] is False' \
    tools/list
  check "tools/call test_simple_text" \
    "($TEXT)('This is a simple text response for testing.')" tools/call test_simple_text
  check "tools/call test_error_handling is an isError result" \
    'r == {"content": [{"type": "text", "text": "This tool intentionally returns an error for testing"}], "isError": True}' \
    tools/call test_error_handling
  check "tools/call test_structured_output a=6 b=7 (structuredContent checked against outputSchema by our client)" \
    'r["structuredContent"] == {"sum": 13, "product": 42} and json.loads(r["content"][0]["text"]) == {"sum": 13, "product": 42}' \
    tools/call test_structured_output a=6 b=7
  more check "tools/call test_multiple_content_types" \
    '[c["type"] for c in r["content"]] == ["text", "image", "resource"] and r["content"][2]["resource"]["uri"] == "test://mixed-content-resource"' \
    tools/call test_multiple_content_types
  check "tools/call test_sampling answered by --sampling-response" \
    "($TEXT)('LLM response: canned reply')" \
    tools/call test_sampling prompt=hi \
    --sampling-response '{"role":"assistant","content":{"type":"text","text":"canned reply"},"model":"m"}'
  more check "tools/call test_sampling declined without --sampling-response (isError)" \
    'r.get("isError") is True' tools/call test_sampling prompt=hi
  check "tools/call test_elicitation answered by --elicitation-response" \
    'r["content"][0]["text"].startswith("User response: action=accept, content=")
     and json.loads(r["content"][0]["text"].split("content=", 1)[1]) == {"username": "ann", "email": "ann@example.com"}' \
    tools/call test_elicitation message=who \
    --elicitation-response '{"action":"accept","content":{"username":"ann","email":"ann@example.com"}}'
  more check "tools/call test_elicitation declined without --elicitation-response" \
    "($TEXT)('User response: action=decline, content={}')" tools/call test_elicitation message=who
  check "tools/call test_list_roots answered from --roots" \
    'json.loads(r["content"][0]["text"][len("Roots: "):]) == [{"uri": "file:///tmp/a", "name": "a"}, {"uri": "file:///tmp/b"}]' \
    tools/call test_list_roots --roots '[{"uri":"file:///tmp/a","name":"a"},{"uri":"file:///tmp/b"}]'
  check "resources/list follows all 3 pages: 28 resources in order" \
    "[x['uri'] for x in r['resources']] == $PAGINATED" resources/list
  more check "resources/list with an explicit cursor returns that page only (page size 10)" \
    'len(r["resources"]) == 10 and r["resources"][0]["uri"] == "test://paginated/08" and isinstance(r.get("nextCursor"), str)' \
    resources/list cursor=page-10
  more check_error "resources/list with an unknown cursor is -32602" -32602 resources/list --params '{"cursor":"bogus"}'
  check "resources/read test://static-text" \
    'r == {"contents": [{"uri": "test://static-text", "mimeType": "text/plain", "text": "This is the content of the static text resource."}]}' \
    resources/read test://static-text
  more check "resources/read test://static-binary (blob)" \
    'r["contents"][0]["mimeType"] == "image/png" and r["contents"][0]["blob"].startswith("iVBORw0KGgo")' \
    resources/read test://static-binary
  more check_error "resources/read of an unknown URI is -32602" -32602 resources/read test://no-such-resource
  check "resources/templates/list" \
    'r == {"resourceTemplates": [{"uriTemplate": "test://template/{id}/data", "name": "template", "mimeType": "application/json"}]}' \
    resources/templates/list
  more check "resources/read through the template" \
    'r["contents"][0]["uri"] == "test://template/42/data" and json.loads(r["contents"][0]["text"]) == {"id": "42", "templateTest": True, "data": "Data for ID: 42"}' \
    resources/read test://template/42/data
  check "prompts/list: the four contract prompts" \
    '[p["name"] for p in r["prompts"]] == ["test_simple_prompt", "test_prompt_with_arguments", "test_prompt_with_embedded_resource", "test_prompt_with_image"]
     and [a["name"] for a in r["prompts"][1]["arguments"]] == ["arg1", "arg2"]' \
    prompts/list
  check "prompts/get test_prompt_with_arguments" \
    'r["messages"] == [{"role": "user", "content": {"type": "text", "text": "Prompt with arguments: arg1='"'"'x'"'"', arg2='"'"'y'"'"'"}}]' \
    prompts/get test_prompt_with_arguments arg1=x arg2=y
  more check "prompts/get test_prompt_with_embedded_resource" \
    'r["messages"][0]["content"] == {"type": "resource", "resource": {"uri": "test://r", "mimeType": "text/plain", "text": "Embedded resource content for testing."}}' \
    prompts/get test_prompt_with_embedded_resource resourceUri=test://r
  check "completion/complete prompt arg1 \"al\"" \
    'r == {"completion": {"values": ["alpha", "alpine"], "total": 2, "hasMore": False}}' \
    completion/complete --params '{"ref":{"type":"ref/prompt","name":"test_prompt_with_arguments"},"argument":{"name":"arg1","value":"al"}}'
  more check "completion/complete template id \"1\"" \
    'r["completion"]["values"] == ["100", "123"]' \
    completion/complete --params '{"ref":{"type":"ref/resource","uri":"test://template/{id}/data"},"argument":{"name":"id","value":"1"}}'
  check "logging/setLevel debug answers {}" 'r == {}' logging/setLevel level=debug
  more check_error "an unknown method is -32601" -32601 no/such-method
}

echo "-- over stdio: $STDIO_CMD"
MODE=stdio
all_checks

echo "-- over Streamable HTTP"
"$VENV_PY" "$SERVER_PY" --http 0 2> "$LOG" &
HTTP_PID=$!
URL=""
for _ in $(seq 1 200); do
  URL="$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' "$LOG" | head -n 1 || true)"
  [ -n "$URL" ] && break
  kill -0 "$HTTP_PID" 2> /dev/null || break
  sleep 0.1
done
if [ -z "$URL" ]; then
  cat "$LOG" >&2
  echo "FAIL py_everything_server.py --http did not start"
  failed=$((failed + 1))
  echo "$passed passed, $failed failed"
  exit 1
fi
echo "   $URL"
TARGET=(--url "$URL")
MODE=http
all_checks
if ! kill -0 "$HTTP_PID" 2> /dev/null; then
  fail "the HTTP server stayed up" "$(tail -c 1000 "$LOG")"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
