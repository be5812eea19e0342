#!/usr/bin/env bash
# Our client (switchboard call) against a real server nobody on this team wrote: the official
# @modelcontextprotocol/server-everything, over stdio and over Streamable HTTP (its
# `streamableHttp` mode, forced onto 127.0.0.1 by interop/listen-localhost.mjs), from
# interop/node_modules on Node 22.
# Each check runs one `switchboard call` and compares the JSON result exactly.
# Ends with `N passed, M failed`; exit 0 only if nothing failed. Install first: scripts/install-peers.sh.
#
#   interop/our-client.sh path/to/switchboard
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:?usage: interop/our-client.sh path/to/switchboard}"
. interop/lib.sh
SERVER="$(interop/run-server-everything.sh)"
TARGET=(--stdio "$SERVER")
check() { # name, python expression over `r` (the parsed result), call args...
  local name="$1" expr="$2"
  shift 2
  local out
  if ! out="$(timeout 60 "$BIN" call "${TARGET[@]}" "$@" 2>/tmp/our-client.err)"; then
    fail "$name" "switchboard call exited non-zero: $(tr '\n' ' ' < /tmp/our-client.err)"
    return
  fi
  if printf '%s' "$out" | python3 -c "import json,sys; r=json.load(sys.stdin); sys.exit(0 if ($expr) else 1)"; then
    pass "$name"
  else
    fail "$name" "$(printf '%s' "$out" | tr '\n' ' ' | cut -c1-300)"
  fi
}
all_checks() {
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
}

echo "-- over stdio"
all_checks
echo "-- over Streamable HTTP"
trap 'kill "${SE_HTTP_PID:-}" 2>/dev/null || true; rm -f "${SE_HTTP_LOG:-}"' EXIT
start_server_everything_http
TARGET=(--url "$SE_HTTP_URL")
all_checks
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
