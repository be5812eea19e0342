#!/usr/bin/env bash
# Our OAuth client end to end against a real authorization server: starts oidc-provider
# (interop/oauth/server.mjs) on a free 127.0.0.1 port, then runs the ignored tests of
# crates/switchboard-http-client/tests/oauth_e2e.rs against it (authorization code with PKCE,
# resource-bound JWT access tokens, step-up, refresh rotation, the file store's mode, client
# credentials, client ID metadata documents). Fails, never skips, if the server cannot start.
#
#   interop/oauth/e2e.sh
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
interop_use_node22
cd "$INTEROP_REPO"
[ -d interop/oauth/node_modules/oidc-provider ] ||
  interop_die "oidc-provider is not installed in interop/oauth/node_modules; run scripts/install-peers.sh"

log="$(mktemp)"
as_pid=""
trap 'if [ -n "$as_pid" ]; then kill "$as_pid" 2> /dev/null || true; wait "$as_pid" 2> /dev/null || true; fi; rm -f "$log"' EXIT
interop/oauth/start.sh > "$log" 2>&1 &
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
echo "PASS oauth e2e against oidc-provider"
