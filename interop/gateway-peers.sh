#!/usr/bin/env bash
# `switchboard gateway` between the official SDKs and real servers (issue 27's proof, in part).
# A run that cannot start fails; so does any result other than the expected one.
#
#   interop/gateway-peers.sh path/to/switchboard
#
# 1. The official TypeScript SDK client (ts-client.mjs) and Python SDK client (py_client.py)
#    walk the whole EVERYTHING-SERVER contract through `switchboard gateway CONFIG --stdio`
#    fronting our everything server over stdio, mounted without a prefix (the contract names
#    its tools and URIs). The failing checks must be exactly EXPECTED_CONTRACT_FAILURES below
#    (none).
# 2. The official TypeScript and Python SDK clients (gateway-check.mjs, gateway_check.py)
#    through `switchboard gateway --http`
#    fronting, at once, our everything server over stdio under `sb` and the official
#    @modelcontextprotocol/server-everything over Streamable HTTP under `se`: each upstream's
#    tools, prompts, resources and templates listed under its prefix exactly, definitions
#    unchanged but for the name, a call and a read through the gateway equal to the direct ones.
#    Every check must pass.
# 3. The official conformance suite (2025-11-25 server scenarios, `--suite all`) against
#    `switchboard gateway --http` fronting our everything server with prefix "": judged as
#    conformance/ci.sh judges `serve` (every announced scenario wrote checks.json, no FAILURE,
#    no WARNING).
# 4. The 2026-07-28 suite's scored and pending server scenarios against the gateway fronting our
#    everything server on 2026-07-28 (below says why that era), judged as ci-2026.sh judges
#    `serve`.
# 5. The 2026-07-28 suite's tasks extension scenarios against the gateway fronting our
#    everything server on 2026-07-28: every one passes.
# 6. The same against the gateway fronting our everything server on 2025-11-25 (whose tools
#    declare their task support): a client's task is the gateway's, run as the upstream's task
#    (below says which scenario fails, and why).
#
# Not here: issue 27's third upstream, "the Python SDK everything server on 2026-07-28". On
# 2026-12-05 PyPI's `mcp` is 2.3.0 (the latest release; pre-releases 2.0.0a1 to 2.0.0rc1 are
# older): it speaks 2026-07-28 (`mcp_types.version.KNOWN_PROTOCOL_VERSIONS` ends with it; the
# low-level `Server` answers `server/discover`, `MCPServer` serves both eras) but its wheel
# ships no everything server (`python -m mcp.server` is an empty `Server("mcp")` on stdio, and
# no module of the distribution's RECORD is one). interop/py_everything_server.py is ours,
# written with that SDK, so it is not counted as the SDK's.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="$(cd "$(dirname "${1:?usage: interop/gateway-peers.sh path/to/switchboard}")" && pwd)/$(basename "$1")"
. interop/lib.sh
interop_use_node22
[ -x "$BIN" ] || interop_die "no switchboard binary at $BIN"
[ -x "$VENV_PY" ] || interop_die "the Python venv is not installed at $VENV_DIR; run scripts/install-peers.sh"
[ -f "$SERVER_EVERYTHING_JS" ] || interop_die "server-everything is not installed; run scripts/install-peers.sh"

WORK="$(mktemp -d)"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2> /dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2> /dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
status=0

# The contract checks a client cannot pass through a gateway, as `FAIL NAME:` prefixes: none.
# Both SDK clients declare sampling, elicitation and roots, so the gateway gives each an
# upstream session of its own (a stdio upstream's session is a process of its own), and that
# session serves everything for its client: its calls, the tools it lists and their
# list_changed (test_add_dynamic_tool runs in the client's own process), its resource
# subscriptions and their updates, and its progress token, passed on as the client sent it (no
# other client shares the session, so no token can collide there).
EXPECTED_CONTRACT_FAILURES=()

# contract_walk LABEL CMD...: the client's FAIL lines must be exactly the expected ones, and it
# must print its summary.
contract_walk() {
  local label="$1" log
  shift
  log="$WORK/$(echo "$label" | tr -c 'a-zA-Z0-9' _).log"
  echo "== gateway interop: $label"
  "$@" > "$log" 2>&1 || true
  local summary
  summary="$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1 || true)"
  if [ -z "$summary" ]; then
    echo "FAIL $label: no summary line (it did not run):"
    tail -n 40 "$log"
    status=1
    return
  fi
  local unexpected=0 line e found
  while IFS= read -r line; do
    found=0
    for e in ${EXPECTED_CONTRACT_FAILURES[@]+"${EXPECTED_CONTRACT_FAILURES[@]}"}; do
      [[ "$line" == "$e"* ]] && found=1
    done
    if [ "$found" = 0 ]; then
      echo "unexpected: ${line:0:400}"
      unexpected=1
    fi
  done < <(grep '^FAIL ' "$log" || true)
  for e in ${EXPECTED_CONTRACT_FAILURES[@]+"${EXPECTED_CONTRACT_FAILURES[@]}"}; do
    if ! grep -qF -- "$e" "$log"; then
      echo "expected but passed (look again, then update the list): $e"
      unexpected=1
    fi
  done
  echo "$label: $summary (the failures: exactly the ${#EXPECTED_CONTRACT_FAILURES[@]} expected ones: $([ "$unexpected" = 0 ] && echo yes || echo NO))"
  [ "$unexpected" = 0 ] || status=1
}

# 1. The contract through the gateway over stdio.
cat > "$WORK/contract.toml" << EOF
page_size = 10
[[upstream]]
name = ""
stdio = "$BIN serve --example everything"
era = "legacy"
EOF
contract_walk "TypeScript SDK $SDK_VERSION (ts-client.mjs) through switchboard gateway --stdio" \
  node "$INTEROP_DIR/ts-client.mjs" -- "$BIN" gateway "$WORK/contract.toml" --stdio
contract_walk "Python SDK mcp $PY_MCP_VERSION (py_client.py) through switchboard gateway --stdio" \
  "$VENV_PY" "$INTEROP_DIR/py_client.py" -- "$BIN" gateway "$WORK/contract.toml" --stdio

# start_gateway CONFIG: `switchboard gateway CONFIG --http 127.0.0.1:0`; sets GW_URL.
start_gateway() {
  local log="$WORK/gateway-$RANDOM.log"
  "$BIN" gateway "$1" --http 127.0.0.1:0 > "$log" 2>&1 &
  PIDS+=($!)
  GW_URL=""
  for _ in $(seq 300); do
    GW_URL="$(grep -o 'listening on http://127\.0\.0\.1:[0-9]*/mcp' "$log" | head -n 1 | sed 's/^listening on //' || true)"
    [ -n "$GW_URL" ] && break
    kill -0 "${PIDS[-1]}" 2> /dev/null || break
    sleep 0.1
  done
  [ -n "$GW_URL" ] || interop_die "switchboard gateway --http did not start: $(cat "$log")"
}

# 2. Two upstreams of two SDKs on two transports, each under its prefix.
start_server_everything_http
PIDS+=("$SE_HTTP_PID")
cat > "$WORK/two.toml" << EOF
[[upstream]]
name = "sb"
stdio = "$BIN serve --example everything"
era = "legacy"

[[upstream]]
name = "se"
url = "$SE_HTTP_URL"
EOF
start_gateway "$WORK/two.toml"
echo "== gateway interop: TypeScript SDK $SDK_VERSION (gateway-check.mjs) through switchboard gateway --http: our everything server (stdio) under sb, server-everything $SERVER_EVERYTHING_VERSION (Streamable HTTP) under se"
if ! node "$INTEROP_DIR/gateway-check.mjs" "$GW_URL" "sb=stdio:$BIN serve --example everything" "se=$SE_HTTP_URL"; then
  status=1
fi
echo "== gateway interop: Python SDK mcp $PY_MCP_VERSION (gateway_check.py), the same gateway and checks"
if ! "$VENV_PY" "$INTEROP_DIR/gateway_check.py" "$GW_URL" "sb=stdio:$BIN serve --example everything" "se=$SE_HTTP_URL" 2> "$WORK/gateway_check.err"; then
  tail -n 20 "$WORK/gateway_check.err"
  status=1
fi

# 3. The conformance suite against the gateway.
cat > "$WORK/conformance.toml" << EOF
[[upstream]]
name = ""
stdio = "$BIN serve --example everything"
era = "legacy"
EOF
start_gateway "$WORK/conformance.toml"
out="target/conformance/server/gateway-$(date -u +%Y%m%dT%H%M%S)-$$"
mkdir -p "$out"
echo "== gateway interop: conformance $CONFORMANCE_VERSION (server, --suite all) against switchboard gateway --http fronting our everything server (prefix \"\"); results in $out"
rc=0
./interop/conformance.sh server "$GW_URL" --suite all -o "$out" > "$out/suite.log" 2>&1 || rc=$?
echo "$rc" > "$out/exit-code"
tail -n 3 "$out/suite.log"
./conformance/ci.sh judge "$out" || status=1

# 4. The 2026-07-28 conformance suite (its 37 scored and 3 pending server scenarios) against
#    `switchboard gateway --http` fronting our everything server on 2026-07-28: judged as
#    conformance/ci-2026.sh judges `serve` (no FAILURE, no WARNING). The upstream speaks
#    2026-07-28 because three checks need what only that era's upstream gives: -32021 for a
#    capability the client lacks (a 2025 upstream answers with an isError result, which the
#    gateway cannot tell from any other), and the input requests' own keys (`user_name`: a 2025
#    upstream's elicitation/create has none, the gateway names it). The skills extension's
#    scenarios are not run: the gateway does not serve it yet; the tasks extension's are, in 5.
cat > "$WORK/conformance-2026.toml" << EOF
[[upstream]]
name = ""
stdio = "$BIN serve --example everything"
era = "2026-07-28"
EOF
start_gateway "$WORK/conformance-2026.toml"
echo "== gateway interop: conformance 2026-07-28 (server, scored and pending) against switchboard gateway --http fronting our everything server on 2026-07-28 (prefix \"\")"
./conformance/ci-2026.sh url "$GW_URL" || status=1

# 5. The tasks extension through the gateway fronting our everything server on 2026-07-28: the
#    upstream decides which calls become tasks and the gateway follows it (its call becomes the
#    gateway's task when the upstream answers with one; input asked for before are the client's
#    input-required rounds: crates/switchboard-gateway/src/tasks.rs). All ten pass,
#    tasks-mrtr-composition included.
cat > "$WORK/conformance-tasks.toml" << EOF
[[upstream]]
name = ""
stdio = "$BIN serve --example everything"
era = "2026-07-28"
EOF
start_gateway "$WORK/conformance-tasks.toml"
echo "== gateway interop: conformance 2026-07-28, the tasks extension, against switchboard gateway --http fronting our everything server on 2026-07-28 (prefix \"\")"
./conformance/ci-2026.sh tasks-url "$GW_URL" || status=1

# 6. The same scenarios through the gateway fronting our everything server on 2025-11-25 (whose
#    tools declare their task support): a 2026-07-28 client's task is the gateway's, run as the
#    upstream's 2025 task.
#    Expected to fail, and nothing else: tasks-mrtr-composition (input-required rounds before
#    the task is made, then a task on the final round). A 2025 upstream runs a task-required
#    tool only as a task, created before the tool runs, and nothing on the 2025 wire says
#    whether that task will ask for input before its work or never (slow_compute asks nothing
#    and must be a task at once, tasks-lifecycle): so the gateway's call becomes its task as
#    soon as it waits for the upstream, and round 1 is a task instead of an input-required
#    result. Guessing by time would make the answer depend on the machine's speed.
cat > "$WORK/conformance-tasks-2025.toml" << EOF
[[upstream]]
name = ""
stdio = "$BIN serve --example everything"
era = "legacy"
EOF
start_gateway "$WORK/conformance-tasks-2025.toml"
echo "== gateway interop: conformance 2026-07-28, the tasks extension, against switchboard gateway --http fronting our everything server on 2025-11-25 (prefix \"\")"
./conformance/ci-2026.sh tasks-url "$GW_URL" tasks-mrtr-composition || status=1

[ "$status" = 0 ] && echo "gateway interop: passed" || echo "gateway interop: FAILED"
exit "$status"
