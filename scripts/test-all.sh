#!/usr/bin/env bash
# Runs every test of the project: unit, integration and end-to-end (in memory, then on the wire).
# Interop and conformance runs are added here as they land; a run that cannot start fails the
# build, it never skips.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo test (workspace, all targets)"
cargo test --workspace --all-targets --locked

echo "== switchboard demo (release build of the README's first command)"
cargo run --release --locked --bin switchboard -- demo > /dev/null

echo "== interop: the official TypeScript and Python SDK clients against switchboard serve --stdio"
cargo build --locked --bin switchboard
./scripts/install-peers.sh --check
./interop/run-clients.sh --bin target/debug/switchboard

echo "== interop: the official TypeScript and Python SDK clients against switchboard serve --http"
./interop/run-clients.sh --serve-http target/debug/switchboard

echo "== interop: our client (switchboard call) against @modelcontextprotocol/server-everything over stdio"
./interop/our-client.sh target/debug/switchboard
