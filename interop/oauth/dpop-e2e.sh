#!/usr/bin/env bash
# DPoP end to end against a real authorization server (issue 29): oidc-provider
# (interop/oauth/server.mjs, whose DPoP support is OpenID-certified) on a free 127.0.0.1 port,
# and our resource server (`switchboard serve --auth-issuer ISSUER --auth-dpop
# --auth-dpop-nonce`). Our client (`switchboard call --dpop --oauth-client-credentials`)
# obtains a DPoP-bound token and calls a tool, meeting the resource's nonce challenge; a second
# client made with `jose` (interop/oauth/dpop-peer.mjs) checks the token is bound, then that a
# replayed proof and each forged one (wrong htm, wrong htu, stale iat, missing ath, another
# key, alg none, HMAC, the bound token as a bearer) are refused for their reason. Fails, never
# skips, if a server or a peer cannot start.
#
#   interop/oauth/dpop-e2e.sh [SWITCHBOARD_BIN]     (default target/debug/switchboard)
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
interop_use_node22
cd "$INTEROP_REPO"
[ -d interop/oauth/node_modules/oidc-provider ] ||
  interop_die "oidc-provider is not installed in interop/oauth/node_modules; run scripts/install-peers.sh"
[ -d interop/oauth/node_modules/jose ] ||
  interop_die "jose is not installed in interop/oauth/node_modules; run scripts/install-peers.sh"
BIN="${1:-target/debug/switchboard}"
[ -x "$BIN" ] || interop_die "no switchboard binary at $BIN (cargo build --bin switchboard)"

work="$(mktemp -d)"
as_pid=""
sb_pid=""
stop() {
  local p
  for p in "$sb_pid" "$as_pid"; do
    if [ -n "$p" ]; then kill "$p" 2> /dev/null || true; wait "$p" 2> /dev/null || true; fi
  done
  rm -rf "$work"
}
trap stop EXIT
interop/oauth/start.sh > "$work/as.log" 2>&1 &
as_pid=$!
issuer=""
for _ in $(seq 100); do
  issuer="$(sed -n 's/^issuer //p' "$work/as.log" | head -n 1)"
  [ -n "$issuer" ] && break
  kill -0 "$as_pid" 2> /dev/null || break
  sleep 0.1
done
[ -n "$issuer" ] || interop_die "oidc-provider did not start: $(cat "$work/as.log")"
echo "dpop e2e: oidc-provider at $issuer"

start_switchboard_http "$BIN" "$work/sb.log" --auth-issuer "$issuer" --auth-dpop --auth-dpop-nonce
sb_pid="$SB_HTTP_PID"
sb_url="$SB_HTTP_URL"
curl -s "${sb_url%/mcp}/.well-known/oauth-protected-resource/mcp" > "$work/prm.json"
grep -q '"dpop_bound_access_tokens_required":true' "$work/prm.json" ||
  interop_die "the metadata does not say dpop_bound_access_tokens_required: $(cat "$work/prm.json")"
echo "PASS the protected-resource metadata says dpop_bound_access_tokens_required"

# Our client: a DPoP-bound token from oidc-provider, then a tool call.
out="$("$BIN" call --url "$sb_url" --oauth-client-credentials --oauth-allow-loopback --dpop \
  --client-id switchboard-machine --client-secret switchboard-machine-secret \
  --oauth-token-file "$work/tokens.json" tools/call test_simple_text 2> "$work/call.err")" ||
  interop_die "switchboard call --dpop failed: $(cat "$work/call.err")"
grep -q 'This is a simple text response for testing.' <<< "$out" || interop_die "unexpected result: $out"
node -e '
  const store = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const tokens = [];
  (function walk(v) {
    if (v && typeof v === "object") {
      if (typeof v.access_token === "string") tokens.push(v);
      Object.values(v).forEach(walk);
    }
  })(store);
  if (tokens.length !== 1) throw new Error(tokens.length + " tokens in the file");
  const claims = JSON.parse(Buffer.from(tokens[0].access_token.split(".")[1], "base64url"));
  if (!claims.cnf || !claims.cnf.jkt) throw new Error("the token is not DPoP-bound: " + JSON.stringify(claims));
' "$work/tokens.json" || interop_die "our client's token is not bound to its key"
[ "$(stat -c %a "$work/tokens.json.dpop-key")" = 600 ] || interop_die "the DPoP key file is not mode 0600"
echo "PASS our client (switchboard call --dpop) obtained a DPoP-bound token from oidc-provider and called a tool"
# The same token without its key: refused.
token="$(node -e '
  const s = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  let t; (function w(v) { if (v && typeof v === "object") { if (typeof v.access_token === "string") t = v.access_token; Object.values(v).forEach(w); } })(s);
  process.stdout.write(t);' "$work/tokens.json")"
status="$(curl -s -o /dev/null -D "$work/headers" -w '%{http_code}' -X POST "$sb_url" \
  -H "authorization: Bearer $token" -H 'content-type: application/json' \
  -H 'accept: application/json, text/event-stream' --data '{"jsonrpc":"2.0","id":1,"method":"ping"}')"
[ "$status" = 401 ] && grep -qi '^www-authenticate: DPoP .*error="invalid_token"' "$work/headers" ||
  interop_die "the stolen token as a bearer was not refused: $status $(cat "$work/headers")"
echo "PASS our client's token, stolen and sent as a bearer, is refused"

node interop/oauth/dpop-peer.mjs --issuer "$issuer" --url "$sb_url" ||
  interop_die "the jose DPoP client's checks failed"
kill -0 "$sb_pid" 2> /dev/null || interop_die "switchboard serve --auth-dpop died: $(cat "$work/sb.log")"
echo "PASS dpop e2e against oidc-provider (our client with a bound token, replayed and forged proofs refused)"
