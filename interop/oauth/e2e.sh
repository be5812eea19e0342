#!/usr/bin/env bash
# Our OAuth client end to end against a real authorization server: starts oidc-provider
# (interop/oauth/server.mjs) on a free 127.0.0.1 port, then runs the ignored tests of
# crates/switchboard-http-client/tests/oauth_e2e.rs against it (authorization code with PKCE,
# resource-bound JWT access tokens, step-up, refresh rotation, the file store's mode, client
# credentials, client ID metadata documents); then `switchboard call --oauth-headless` against a
# stub resource server (interop/oauth/stub-rs.mjs) that records the Authorization header; then
# our resource server (`switchboard serve --auth-issuer`) with our client (authorization code,
# step-up, a client ID metadata document, client credentials with a secret and with
# private_key_jwt, a token without `sub`) and with the official SDK clients
# (interop/oauth/ts-oauth-client.mjs, interop/oauth/py_oauth_client.py). Fails, never skips, if a
# server or a peer cannot start.
#
#   interop/oauth/e2e.sh [SWITCHBOARD_BIN]     (default target/debug/switchboard)
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
interop_use_node22
cd "$INTEROP_REPO"
[ -d interop/oauth/node_modules/oidc-provider ] ||
  interop_die "oidc-provider is not installed in interop/oauth/node_modules; run scripts/install-peers.sh"
[ -d interop/node_modules/@modelcontextprotocol/sdk ] ||
  interop_die "the TypeScript SDK is not installed in interop/node_modules; run scripts/install-peers.sh"
[ -x "$VENV_PY" ] || interop_die "the Python venv is not installed at $VENV_DIR; run scripts/install-peers.sh"

BIN="${1:-target/debug/switchboard}"
[ -x "$BIN" ] || interop_die "no switchboard binary at $BIN (cargo build --bin switchboard)"
log="$(mktemp)"
rs_log="$(mktemp)"
record="$(mktemp)"
tokens="$(mktemp -d)"
as_pid=""
rs_pid=""
stop() {
  local p
  for p in "$as_pid" "$rs_pid"; do
    if [ -n "$p" ]; then kill "$p" 2> /dev/null || true; wait "$p" 2> /dev/null || true; fi
  done
  rm -rf "$log" "$rs_log" "$record" "$tokens"
}
trap stop EXIT
MACHINE_KEY_FILE="$tokens/machine-key.pem" interop/oauth/start.sh > "$log" 2>&1 &
as_pid=$!
issuer=""
for _ in $(seq 100); do
  issuer="$(sed -n 's/^issuer //p' "$log" | head -n 1)"
  [ -n "$issuer" ] && break
  kill -0 "$as_pid" 2> /dev/null || break
  sleep 0.1
done
[ -n "$issuer" ] || interop_die "oidc-provider did not start: $(cat "$log")"
echo "oauth e2e: oidc-provider at $issuer"
SWITCHBOARD_OAUTH_ISSUER="$issuer" cargo test --locked -p switchboard-http-client --features oauth \
  --test oauth_e2e -- --ignored --test-threads 1
echo "oauth e2e: the library tests pass"

ISSUER="$issuer" RECORD="$record" node interop/oauth/stub-rs.mjs > "$rs_log" 2>&1 &
rs_pid=$!
url=""
for _ in $(seq 100); do
  url="$(sed -n 's/^listening on //p' "$rs_log" | head -n 1)"
  [ -n "$url" ] && break
  kill -0 "$rs_pid" 2> /dev/null || break
  sleep 0.1
done
[ -n "$url" ] || interop_die "the stub resource server did not start: $(cat "$rs_log")"
out="$("$BIN" call --url "$url" --oauth-headless --oauth-allow-loopback \
  --oauth-token-file "$tokens/tokens.json" tools/call whoami)" ||
  interop_die "switchboard call --oauth-headless failed"
grep -q '"authorized"' <<< "$out" || interop_die "unexpected call result: $out"
[ "$(stat -c %a "$tokens/tokens.json")" = 600 ] || interop_die "the token file is not mode 0600"
# Every request after the first 401 carries the Bearer token (AU-18).
node -e '
  const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
  const after = lines.slice(lines.findIndex((l) => l.authorization) );
  if (lines[0].authorization) throw new Error("the first request already had a token?");
  if (after.length < 3 || after.some((l) => !l.authorization || !l.authorization.startsWith("Bearer "))) {
    throw new Error("a request without the Bearer token: " + JSON.stringify(lines));
  }
  const [, payload] = after[0].authorization.slice(7).split(".");
  const claims = JSON.parse(Buffer.from(payload, "base64url"));
  if (claims.aud !== process.argv[2]) throw new Error("audience " + claims.aud);
' "$record" "$url" || interop_die "the resource server saw requests without the token"
# A second run reuses the stored token: no new 401.
: > "$record"
"$BIN" call --url "$url" --oauth-headless --oauth-allow-loopback \
  --oauth-token-file "$tokens/tokens.json" tools/list > /dev/null ||
  interop_die "the second switchboard call failed"
if grep -q '"authorization":null' "$record"; then interop_die "the stored token was not reused"; fi
# The browser flow (--oauth), with a stand-in for the system browser: an `xdg-open` that
# fetches the URL with curl, following the redirects with a cookie jar, down to the
# redirect listener on 127.0.0.1.
mkdir -p "$tokens/bin"
cat > "$tokens/bin/xdg-open" << 'OPEN'
#!/bin/sh
curl -s -L -c "$(dirname "$0")/jar" -b "$(dirname "$0")/jar" -o /dev/null "$1" &
OPEN
chmod +x "$tokens/bin/xdg-open"
out="$(PATH="$tokens/bin:$PATH" "$BIN" call --url "$url" --oauth --oauth-allow-loopback \
  --oauth-token-file "$tokens/browser.json" tools/call whoami 2> "$tokens/browser.err")" ||
  interop_die "switchboard call --oauth failed: $(cat "$tokens/browser.err")"
grep -q '"authorized"' <<< "$out" || interop_die "unexpected call result: $out"
grep -q 'authorize in your browser' "$tokens/browser.err" || interop_die "the authorization URL was not printed"
# Without --oauth-allow-loopback: the server was named on loopback (127.0.0.1), so its loopback
# authorization server is reached all the same (a remote server may never point the client at
# loopback: the OAuth client's unit tests).
out="$("$BIN" call --url "$url" --oauth-headless --oauth-token-file "$tokens/implied.json" \
  tools/call whoami 2> "$tokens/implied.err")" ||
  interop_die "a server named on loopback needed --oauth-allow-loopback: $(cat "$tokens/implied.err")"
grep -q '"authorized"' <<< "$out" || interop_die "unexpected call result: $out"

# Our client, our resource server and the real authorization server together: `switchboard
# serve --auth-issuer` validates oidc-provider's JWT access tokens (JWKS from its metadata, the
# audience our canonical URI), the everything server requires mcp:basic on every request and
# mcp:write for test_scoped_write, which the client reaches by step-up.
sb_log="$(mktemp)"
start_switchboard_http "$BIN" "$sb_log" --auth-issuer "$issuer"
sb_pid="$SB_HTTP_PID"
sb_url="$SB_HTTP_URL"
stop_sb() { kill "$sb_pid" 2> /dev/null || true; wait "$sb_pid" 2> /dev/null || true; rm -f "$sb_log"; }
trap 'stop_sb; stop' EXIT
status="$(curl -s -o /dev/null -D "$tokens/headers" -w '%{http_code}' -X POST "$sb_url" \
  -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
  --data '{"jsonrpc":"2.0","id":1,"method":"ping"}')"
[ "$status" = 401 ] || interop_die "our resource server answered $status without a token"
grep -qi '^www-authenticate: Bearer .*resource_metadata="http://127.0.0.1:[0-9]*/.well-known/oauth-protected-resource/mcp"' "$tokens/headers" ||
  interop_die "no resource_metadata in the 401 challenge: $(cat "$tokens/headers")"
out="$("$BIN" call --url "$sb_url" --oauth-headless --oauth-allow-loopback --scope mcp:basic \
  --oauth-token-file "$tokens/ours.json" tools/call test_simple_text 2> "$tokens/ours.err")" ||
  interop_die "switchboard call against switchboard serve --auth-issuer failed: $(cat "$tokens/ours.err")"
grep -q 'This is a simple text response for testing.' <<< "$out" || interop_die "unexpected result: $out"
out="$("$BIN" call --url "$sb_url" --oauth-headless --oauth-allow-loopback \
  --oauth-token-file "$tokens/ours.json" tools/call test_scoped_write 2> "$tokens/ours.err")" ||
  interop_die "the step-up to mcp:write failed: $(cat "$tokens/ours.err")"
grep -q '"text"' <<< "$out" || interop_die "unexpected test_scoped_write result: $out"
kill -0 "$sb_pid" 2> /dev/null || interop_die "switchboard serve --auth-issuer died (see $sb_log)"
echo "PASS our client against our resource server with oidc-provider's tokens (401 challenge, mcp:basic, step-up to mcp:write)"

# The JWT claims of the access token in one of our token files.
token_claims() {
  node -e '
    const store = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const tokens = [];
    (function walk(v) {
      if (v && typeof v === "object") {
        if (typeof v.access_token === "string") tokens.push(v.access_token);
        Object.values(v).forEach(walk);
      }
    })(store);
    if (tokens.length !== 1) throw new Error(tokens.length + " access tokens in the file");
    process.stdout.write(Buffer.from(tokens[0].split(".")[1], "base64url").toString());
  ' "$1"
}
# --client-metadata-url: the document URL is the client id (no registration).
cimd_url="https://client.switchboard.test/oauth/client.json"
out="$("$BIN" call --url "$sb_url" --oauth-headless --oauth-allow-loopback --client-metadata-url "$cimd_url" \
  --oauth-token-file "$tokens/cimd.json" tools/call test_simple_text 2> "$tokens/cimd.err")" ||
  interop_die "switchboard call --client-metadata-url failed: $(cat "$tokens/cimd.err")"
grep -q 'This is a simple text response for testing.' <<< "$out" || interop_die "unexpected result: $out"
grep -q "\"client_id\":\"$cimd_url\"" <<< "$(token_claims "$tokens/cimd.json")" ||
  interop_die "the token's client is not the metadata document URL: $(token_claims "$tokens/cimd.json")"
echo "PASS switchboard call --client-metadata-url: the client ID metadata document URL is the client id"
# --oauth-client-credentials with a secret, for a client whose tokens carry no `sub`: the
# server binds the session to the client and names it as the subject.
out="$("$BIN" call --url "$sb_url" --oauth-client-credentials --oauth-allow-loopback \
  --client-id switchboard-machine-nosub --client-secret switchboard-machine-nosub-secret \
  --oauth-token-file "$tokens/nosub.json" tools/call test_scoped_write 2> "$tokens/nosub.err")" ||
  interop_die "switchboard call --oauth-client-credentials failed: $(cat "$tokens/nosub.err")"
grep -q 'Scoped write done for switchboard-machine-nosub' <<< "$out" || interop_die "unexpected result: $out"
if grep -q '"sub"' <<< "$(token_claims "$tokens/nosub.json")"; then interop_die "the machine token has a sub"; fi
echo "PASS switchboard call --oauth-client-credentials: a token without sub speaks for its client (step-up to mcp:write)"
# --private-key: private_key_jwt (RFC 7523) client authentication for client credentials.
out="$("$BIN" call --url "$sb_url" --oauth-client-credentials --oauth-allow-loopback \
  --client-id switchboard-machine-jwt --private-key "$tokens/machine-key.pem" \
  --oauth-token-file "$tokens/jwt.json" tools/call test_scoped_write 2> "$tokens/jwt.err")" ||
  interop_die "switchboard call --private-key failed: $(cat "$tokens/jwt.err")"
grep -q 'Scoped write done for switchboard-machine-jwt' <<< "$out" || interop_die "unexpected result: $out"
# A key the authorization server does not know is refused there, and said so.
node -e 'const c = require("crypto");
  process.stdout.write(c.generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "pem" }))' \
  > "$tokens/other-key.pem"
if "$BIN" call --url "$sb_url" --oauth-client-credentials --oauth-allow-loopback \
  --client-id switchboard-machine-jwt --private-key "$tokens/other-key.pem" \
  --oauth-token-file "$tokens/other.json" tools/list > /dev/null 2> "$tokens/other.err"; then
  interop_die "a client assertion signed by an unknown key was accepted"
fi
grep -q 'invalid_client' "$tokens/other.err" || interop_die "no invalid_client: $(cat "$tokens/other.err")"
echo "PASS switchboard call --private-key: private_key_jwt client credentials (and an unknown key refused)"

# The official SDK clients with their OAuth support against our resource server.
sdk_failed=0
node interop/oauth/ts-oauth-client.mjs --url "$sb_url" --issuer "$issuer" --machine-key "$tokens/machine-key.pem" ||
  sdk_failed=1
"$VENV_PY" interop/oauth/py_oauth_client.py --url "$sb_url" --issuer "$issuer" --machine-key "$tokens/machine-key.pem" ||
  sdk_failed=1
kill -0 "$sb_pid" 2> /dev/null || interop_die "switchboard serve --auth-issuer died (see $sb_log)"
[ "$sdk_failed" = 0 ] || interop_die "an official SDK client failed against our resource server"
echo "PASS the official TypeScript and Python SDK clients against our resource server"

echo "PASS oauth e2e against oidc-provider (library, switchboard call --oauth-headless, --oauth and --oauth-client-credentials, our resource server with our client and the official SDK clients)"
