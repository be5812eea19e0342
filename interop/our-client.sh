#!/usr/bin/env bash
# Our client (switchboard call) against a real server nobody on this team wrote: the official
# @modelcontextprotocol/server-everything over stdio, from interop/node_modules on Node 22.
# Each check runs one `switchboard call` and compares the JSON result exactly.
# Ends with `N passed, M failed`; exit 0 only if nothing failed. Install first: scripts/install-peers.sh.
#
#   interop/our-client.sh path/to/switchboard
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:?usage: interop/our-client.sh path/to/switchboard}"
SERVER="$(interop/run-server-everything.sh)"
passed=0
failed=0
check() { # name, python expression over `r` (the parsed result), call args...
  local name="$1" expr="$2"
  shift 2
  local out
  if ! out="$(timeout 60 "$BIN" call --stdio "$SERVER" "$@" 2>/tmp/our-client.err)"; then
    echo "FAIL $name: switchboard call exited non-zero: $(tr '\n' ' ' < /tmp/our-client.err)"
    failed=$((failed + 1))
    return
  fi
  if printf '%s' "$out" | python3 -c "import json,sys; r=json.load(sys.stdin); sys.exit(0 if ($expr) else 1)"; then
    echo "PASS $name"
    passed=$((passed + 1))
  else
    echo "FAIL $name: $(printf '%s' "$out" | tr '\n' ' ' | cut -c1-300)"
    failed=$((failed + 1))
  fi
}
check "ping answers {}" 'r == {}' ping
check "tools/list lists echo and get-sum with object schemas" \
  '{"echo","get-sum"} <= {t["name"] for t in r["tools"]} and all(t["inputSchema"]["type"] == "object" for t in r["tools"])' tools/list
check "tools/call echo" 'r["content"] == [{"type": "text", "text": "Echo: hello"}]' tools/call echo message=hello
check "tools/call get-sum (numbers as JSON)" 'r["content"][0]["text"] == "The sum of 2 and 3 is 5."' tools/call get-sum a=2 b=3
check "tools/call get-structured-content (structuredContent validated by our client)" '"structuredContent" in r' tools/call get-structured-content location=Chicago
check "resources/list follows every page" 'len(r["resources"]) > 0 and all("uri" in x for x in r["resources"])' resources/list
check "resources/templates/list" 'len(r["resourceTemplates"]) > 0' resources/templates/list
check "prompts/list" 'len(r["prompts"]) > 0' prompts/list
check "tools/call trigger-sampling-request answered by --sampling-response" '"canned reply" in json.dumps(r)' \
  tools/call trigger-sampling-request prompt=hi maxTokens=10 \
  --sampling-response '{"role":"assistant","content":{"type":"text","text":"canned reply"},"model":"m"}'
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
