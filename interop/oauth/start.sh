#!/usr/bin/env bash
# Starts the test authorization server (oidc-provider, interop/oauth/server.mjs) on a free
# 127.0.0.1 port and prints `issuer http://127.0.0.1:PORT` once it listens; PORT=N picks the port.
# Runs until killed. Install first: scripts/install-peers.sh.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
interop_use_node22
[ -d "$INTEROP_DIR/oauth/node_modules/oidc-provider" ] ||
  interop_die "oidc-provider is not installed in interop/oauth/node_modules; run scripts/install-peers.sh"
exec node "$INTEROP_DIR/oauth/server.mjs"
