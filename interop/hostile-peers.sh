#!/usr/bin/env bash
# `switchboard serve --hostile SCENARIO` against three clients: ours (`switchboard call
# --oauth-headless`), the official TypeScript SDK's (interop/hostile-client.mjs, SDK 1.x on Node
# 22) and the official Python SDK's (interop/hostile_client.py, mcp 2.x on the venv). Each client
# connects and lists the tools, approving every authorization it is asked for (a headless user
# agent, as a person clicking through would). The hostile server observes what the client does;
# its report (GET /hostile/report) names each finding with the rule it breaks.
#
# The script asserts, per client and scenario, that the scenario was exercised (the client
# reached the attack at all) and that the set of rules with findings is exactly the expected one
# below. Ours has none. Each expected finding of the SDKs is explained beside it and in
# docs/SECURITY.md ("serve --hostile against the official SDK clients"). A new finding, or an
# expected one that no longer shows, fails this script: then look again and update both.
# Install first: scripts/install-peers.sh.
#
#   interop/hostile-peers.sh path/to/switchboard
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:?usage: interop/hostile-peers.sh path/to/switchboard}"
. interop/lib.sh
interop_use_node22
[ -x "$BIN" ] || interop_die "no switchboard binary at $BIN (cargo build --bin switchboard)"
[ -x "$VENV_PY" ] || interop_die "the Python venv is not installed at $VENV_DIR; run scripts/install-peers.sh"
[ -d interop/node_modules/@modelcontextprotocol/sdk ] ||
  interop_die "the TypeScript SDK is not installed in interop/node_modules; run scripts/install-peers.sh"

SCENARIOS=(prm-other-resource metadata-at-unspecified redirect-to-unspecified as-at-unspecified no-pkce
  endless-step-up huge-answer endless-answer)

# The expected rules with findings, "client scenario" -> space-separated sorted rules.
declare -A EXPECTED=(
  # Ours: none.
  # The TypeScript SDK 1.x:
  # - it fetches the authorization server's metadata before it compares the protected-resource
  #   metadata's `resource` with the server's URL (it then refuses): SEC-SSRF-10.
  ["ts prm-other-resource"]="SEC-SSRF-10"
  # - it fetches metadata and authorization servers at any address (no SSRF policy), 0.0.0.0
  #   included; when the metadata cannot be read it falls back to the server's origin as the
  #   authorization server and then sends no `resource` parameter: SEC-SSRF-3, SEC-TP-4.
  ["ts metadata-at-unspecified"]="SEC-SSRF-3 SEC-TP-4"
  ["ts redirect-to-unspecified"]="SEC-TP-4"
  ["ts as-at-unspecified"]="SEC-SSRF-3"
  # - it authorizes although the metadata lists no PKCE method (it sends S256 anyway): SEC-URL-6.
  ["ts no-pkce"]="SEC-URL-6"
  # - it leaves step-up to the host with no cap: a host approving each request steps up without
  #   end: SEC-SC-6.
  ["ts endless-step-up"]="SEC-SC-6"
  # - it reads a JSON answer and an SSE event of any size (256 MiB here): no bound.
  ["ts huge-answer"]="bounds"
  ["ts endless-answer"]="bounds"
  # The Python SDK 2.x:
  ["py prm-other-resource"]=""
  # - no SSRF policy either (0.0.0.0 fetched); the same fallback without `resource`.
  ["py metadata-at-unspecified"]="SEC-SSRF-3"
  ["py redirect-to-unspecified"]="SEC-TP-4"
  ["py as-at-unspecified"]="SEC-SSRF-3"
  # - it authorizes although the metadata lists no PKCE method: SEC-URL-6.
  ["py no-pkce"]="SEC-URL-6"
  # - it steps up once and then gives up: no finding.
  ["py endless-step-up"]=""
  # - a JSON answer is read whatever its size (256 MiB); an SSE event is bounded at 1 MiB.
  ["py huge-answer"]="bounds"
  ["py endless-answer"]=""
)

work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

passed=0
failed=0
for client in ours ts py; do
  for scenario in "${SCENARIOS[@]}"; do
    log="$work/$client-$scenario.log"
    "$BIN" serve --hostile "$scenario" --http 127.0.0.1:0 2> "$log" &
    pid=$!
    pids+=("$pid")
    url=""
    for _ in $(seq 100); do
      url="$(grep -o 'http://127.0.0.1:[0-9]*/mcp' "$log" 2> /dev/null | head -n 1 || true)"
      [ -n "$url" ] && break
      sleep 0.1
    done
    [ -n "$url" ] || interop_die "serve --hostile $scenario did not start: $(cat "$log")"
    base="${url%/mcp}"
    case "$client" in
      ours)
        tokens="$work/tokens-$scenario.json"
        outcome="$(timeout 60 "$BIN" call --url "$url" --oauth-headless --oauth-allow-loopback \
          --oauth-token-file "$tokens" tools/list 2>&1 | tail -n 1 || true)" ;;
      ts) outcome="$(timeout 60 node interop/hostile-client.mjs --url "$url" 2>&1 | tail -n 1 || true)" ;;
      py) outcome="$(timeout 60 "$VENV_PY" interop/hostile_client.py --url "$url" 2>&1 | tail -n 1 || true)" ;;
    esac
    report="$(curl -sf --max-time 10 "$base/hostile/report")" ||
      interop_die "no report from serve --hostile $scenario: $(tail -n 5 "$log")"
    kill "$pid" 2> /dev/null || true
    wait "$pid" 2> /dev/null || true
    read -r exercised rules < <(python3 -c '
import json, sys
r = json.loads(sys.argv[1])
print(str(r["exercised"]).lower(), " ".join(sorted({f["rule"] for f in r["findings"]})))
' "$report")
    key="$client $scenario"
    want="${EXPECTED[$key]-}"
    if [ "$exercised" != true ]; then
      echo "FAIL $key: the client never reached the attack (outcome: ${outcome:0:200})"
      failed=$((failed + 1))
    elif [ "$rules" != "$want" ]; then
      echo "FAIL $key: findings [$rules], expected [$want] (outcome: ${outcome:0:200})"
      python3 -c 'import json,sys; [print("   ", f["rule"], f["what"][:200]) for f in json.loads(sys.argv[1])["findings"][:6]]' "$report"
      failed=$((failed + 1))
    else
      echo "PASS $key: findings [${rules}] (${outcome:0:120})"
      passed=$((passed + 1))
    fi
  done
done
echo "hostile peers: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
