#!/usr/bin/env bash
# Issue 27's "done when": `switchboard gateway` with the README's ten-line configuration puts
# three real servers of different SDKs, eras and transports behind one authenticated endpoint:
#
#   sb  our everything server (Rust, this repository), over stdio, on 2026-07-28 (the default
#       era, auto: it answers the gateway's server/discover);
#   se  the official TypeScript @modelcontextprotocol/server-everything, over Streamable HTTP,
#       on 2025-11-25 (auto: it does not answer server/discover, so the gateway initializes);
#   py  a server written with the official Python SDK (`mcp`, its `MCPServer`, which serves
#       both eras), over Streamable HTTP, spoken to on 2026-07-28: interop/py_modern_server.py
#       (add, greet, count_roots, regional), written by us with that SDK, because the SDK ships
#       no everything server of its own (see gateway-peers.sh); the low-level `Server` our
#       py_everything_server.py is written with answers no server/discover over HTTP.
#
# The gateway is an OAuth resource server for a real authorization server (oidc-provider,
# interop/oauth/server.mjs): a request without a token gets 401 and the protected-resource
# metadata; with a client-credentials JWT access token for the gateway's URL, the official
# TypeScript and Python SDK clients (gateway-check.mjs, gateway_check.py) list every upstream's
# tools, prompts, resources and templates under its prefix, exactly, and a call and a read through
# the gateway answer as the upstream does directly. Any other outcome fails the run; a peer that
# cannot start fails it too.
#
#   interop/gateway-three.sh path/to/switchboard
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="$(cd "$(dirname "${1:?usage: interop/gateway-three.sh path/to/switchboard}")" && pwd)/$(basename "$1")"
. interop/lib.sh
interop_use_node22
[ -x "$BIN" ] || interop_die "no switchboard binary at $BIN"
[ -x "$VENV_PY" ] || interop_die "the Python venv is not installed at $VENV_DIR; run scripts/install-peers.sh"
[ -f "$SERVER_EVERYTHING_JS" ] || interop_die "server-everything is not installed; run scripts/install-peers.sh"
[ -d "$INTEROP_DIR/oauth/node_modules/oidc-provider" ] ||
  interop_die "oidc-provider is not installed in interop/oauth/node_modules; run scripts/install-peers.sh"

WORK="$(mktemp -d)"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2> /dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2> /dev/null || true; done
  [ -n "${KEEP:-}" ] || rm -rf "$WORK" "${SE_HTTP_LOG:-}" "${PY_HTTP_LOG:-}"
}
trap cleanup EXIT

# Waits for the first match of the extended regex RE in FILE while PID runs; prints it.
wait_for() {
  local file="$1" re="$2" pid="$3" hit=""
  for _ in $(seq 200); do
    hit="$(grep -oE "$re" "$file" | head -n 1 || true)"
    [ -n "$hit" ] && break
    kill -0 "$pid" 2> /dev/null || break
    sleep 0.1
  done
  echo "$hit"
}

# The authorization server.
"$INTEROP_DIR/oauth/start.sh" > "$WORK/as.log" 2>&1 &
PIDS+=($!)
ISSUER="$(wait_for "$WORK/as.log" 'http://127\.0\.0\.1:[0-9]+' "${PIDS[-1]}")"
[ -n "$ISSUER" ] || interop_die "oidc-provider did not start: $(cat "$WORK/as.log")"

# The two HTTP upstreams.
start_server_everything_http
PIDS+=("$SE_HTTP_PID")
start_python_http "$INTEROP_DIR/py_modern_server.py"
PIDS+=("$PY_HTTP_PID")

# The README's configuration, with this run's addresses: ten lines.
cat > "$WORK/gateway.toml" << EOF
[[upstream]]
name = "sb"
stdio = "$BIN serve --example everything"
[[upstream]]
name = "se"
url = "$SE_HTTP_URL"
[[upstream]]
name = "py"
url = "$PY_HTTP_URL"
era = "2026-07-28"
EOF
[ "$(wc -l < "$WORK/gateway.toml")" -eq 10 ] || interop_die "the configuration is not ten lines"

"$BIN" gateway "$WORK/gateway.toml" --http 127.0.0.1:0 --auth-issuer "$ISSUER" 2> "$WORK/gw.log" &
PIDS+=($!)
GW_URL="$(wait_for "$WORK/gw.log" 'http://127\.0\.0\.1:[0-9]+/mcp' "${PIDS[-1]}")"
[ -n "$GW_URL" ] || interop_die "the gateway did not start: $(cat "$WORK/gw.log")"
echo "== the gateway at $GW_URL (issuer $ISSUER): sb over stdio, se at $SE_HTTP_URL, py at $PY_HTTP_URL on 2026-07-28"

# Without a token: 401, and the way to the authorization server.
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'
code="$(curl -s -o /dev/null -D "$WORK/401.head" -w '%{http_code}' -X POST "$GW_URL" \
  -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' --data "$init")"
if [ "$code" = 401 ] && grep -qi '^www-authenticate: Bearer .*resource_metadata=' "$WORK/401.head"; then
  pass "a request without a token gets 401 naming the protected-resource metadata"
else
  fail "a request without a token gets 401 naming the protected-resource metadata" "HTTP $code: $(cat "$WORK/401.head")"
fi

# A client-credentials token for the gateway (RFC 8707: its URL is the audience).
TOKEN="$(curl -s -u switchboard-machine:switchboard-machine-secret "$ISSUER/token" \
  -d grant_type=client_credentials -d scope=mcp:basic --data-urlencode "resource=$GW_URL" |
  python3 -c 'import json, sys; print(json.load(sys.stdin).get("access_token", ""))')"
[ -n "$TOKEN" ] || interop_die "no access token from $ISSUER/token"

UPSTREAMS=("sb=stdio:$BIN serve --example everything" "se=$SE_HTTP_URL" "py=$PY_HTTP_URL")
echo "== TypeScript SDK $SDK_VERSION (gateway-check.mjs) with the token"
if GATEWAY_MODERN=sb,py GATEWAY_BEARER="$TOKEN" node "$INTEROP_DIR/gateway-check.mjs" "$GW_URL" "${UPSTREAMS[@]}" > "$WORK/ts.out" 2>&1; then
  sed 's/^/  /' "$WORK/ts.out"
  pass "the TypeScript SDK client: $(tail -1 "$WORK/ts.out")"
else
  sed 's/^/  /' "$WORK/ts.out"
  fail "the TypeScript SDK client" "$(tail -1 "$WORK/ts.out")"
fi
echo "== Python SDK mcp $PY_MCP_VERSION (gateway_check.py) with the token"
if GATEWAY_MODERN=sb,py GATEWAY_BEARER="$TOKEN" "$VENV_PY" "$INTEROP_DIR/gateway_check.py" "$GW_URL" "${UPSTREAMS[@]}" > "$WORK/py.out" 2>&1; then
  sed 's/^/  /' "$WORK/py.out"
  pass "the Python SDK client: $(tail -1 "$WORK/py.out")"
else
  sed 's/^/  /' "$WORK/py.out"
  fail "the Python SDK client" "$(tail -1 "$WORK/py.out")"
fi
# The upstreams' own checks must have run: three prefixes, each with its listings.
for prefix in sb se py; do
  if grep -q "^PASS $prefix: tools listed under the prefix" "$WORK/ts.out" &&
    grep -q "^PASS $prefix: tools listed under the prefix" "$WORK/py.out"; then
    pass "both clients see $prefix's tools under its prefix"
  else
    fail "both clients see $prefix's tools under its prefix" "see the output above"
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
