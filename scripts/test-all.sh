#!/usr/bin/env bash
# Runs every test of the project: unit, integration and end-to-end (in memory, then on the wire).
# Interop and conformance runs are added here as they land; a run that cannot start fails the
# build, it never skips.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== cargo test (workspace, all targets)"
cargo test --workspace --all-targets --locked

echo "== facade features: a stdio-only selection compiles no axum, hyper or reqwest; an HTTP client no axum; an HTTP server no reqwest"
./scripts/check-features.sh

echo "== docs: every public item documented, every intra-doc link resolved"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked

echo "== public surface: the facade's re-exported items and methods (a doc build of the facade with every facade feature), counted from rustdoc's pages, under their ceiling (ARCHITECTURE.md states the figure)"
python3 scripts/public-surface.py --build --by-crate --max-items 794 --max-methods 1038 --baseline scripts/public-api.baseline.json

echo "== semver baseline: the check itself (an item removed or changed without a version bump fails; additions, and fields added to a #[non_exhaustive] item, do not)"
python3 scripts/public-surface.py --self-test

echo "== packaging: every publishable crate packages (cargo package, no verify; the test, example, conformance, load and fuzz crates are publish = false and left out), and switchboard-types packages and builds from its .crate"
cargo package --workspace --no-verify --locked \
  --exclude switchboard-tests --exclude switchboard-examples --exclude switchboard-conformance \
  --exclude switchboard-load --exclude switchboard-test-support --exclude switchboard-fuzz-targets
cargo package -p switchboard-types --locked

echo "== security rules: every MUST of SECURITY-NOTES and of the EL and SF families tested or justified (docs/SECURITY.md)"
python3 scripts/security-rules.py

echo "== switchboard demo (the README's first command)"
cargo run --locked --bin switchboard -- demo > /dev/null

echo "== interop: the official TypeScript and Python SDK clients against switchboard serve --stdio"
cargo build --locked --bin switchboard
./scripts/install-peers.sh --check
./interop/run-clients.sh --bin target/debug/switchboard

echo "== interop: the official TypeScript and Python SDK clients against switchboard serve --http"
./interop/run-clients.sh --serve-http target/debug/switchboard

echo "== interop: our client (switchboard call) against @modelcontextprotocol/server-everything over stdio and Streamable HTTP"
./interop/our-client.sh target/debug/switchboard

echo "== interop: switchboard check against @modelcontextprotocol/server-everything over stdio and Streamable HTTP; the failing checks must be exactly the expected, justified list"
./interop/check-server-everything.sh target/debug/switchboard

echo "== interop: switchboard fuzz against the Python SDK and @modelcontextprotocol/server-everything over stdio and Streamable HTTP; the problems must be exactly the expected, justified list"
./interop/fuzz-peers.sh target/debug/switchboard

echo "== interop: serve --hostile (a malicious server: SSRF traps, no PKCE, endless step-up, huge and endless answers) against our client and the official TypeScript and Python SDK clients; our findings none, theirs exactly the expected, justified list"
./interop/hostile-peers.sh target/debug/switchboard

echo "== interop: switchboard check --security against the Python SDK and @modelcontextprotocol/server-everything over stdio and Streamable HTTP; the failing probes must be exactly the expected, justified list"
./interop/security-peers.sh target/debug/switchboard

echo "== interop: our client (switchboard call) against a Python SDK everything server over stdio and Streamable HTTP"
./interop/our-client-py.sh target/debug/switchboard

echo "== interop: MCP Apps: the official Python SDK client (mcp 2.3.0, declaring io.modelcontextprotocol/ui) reads the notes example's app in both eras, and the MCP Inspector CLI's --app-info probe (2.12.0, offline) reports it, over stdio and Streamable HTTP; hosts without the extension see a plain tool; in headless Chromium (playwright-core) a minimal host page on 127.0.0.1 runs the view, which calls search_notes through it"
cargo build --locked -p switchboard-examples --bin notes
./interop/apps-peers.sh target/debug/notes

echo "== interop: the session viewer: switchboard record a session (a violation, a progress token, a frame naming </script><script>alert(1)</script>), trace --html renders it, and headless Chromium (playwright-core) loads the page from 127.0.0.1 with no other request, shows the frame and violation counts trace --json gives, runs no frame's script, follows an answer's link to its request and back, filters by primitive"
./interop/viewer-browser.sh target/debug/switchboard

echo "== interop: telemetry across SDKs: the Python SDK client's span is our server span's parent and ours the Python server span's (both exported over OTLP/HTTP to a receiver decoding with opentelemetry-proto), and a real Prometheus scrapes serve --metrics and returns the tools/call counter"
./interop/otel-peers.sh target/debug/switchboard

echo "== interop: switchboard pack makes the notes example an MCPB bundle; the official MCPB CLI (@anthropic-ai/mcpb) validates its manifest (and refuses one without author), reads it back (info, unpack), and the unpacked binary started as the manifest says answers"
cargo build --locked -p switchboard-examples --bin notes
./interop/pack-peers.sh target/debug/switchboard target/debug/notes

echo "== interop: issue 31's walk with the real cargo: cargo new, switchboard as a path dependency (the README's server, one tool), switchboard dev -- cargo run with one host connection: the user's serverInfo, a second tool added to the source rebuilt and restarted in place (list_changed on the same connection, the new tool listed and called), a source that does not compile shows rustc's error and the previous build keeps serving; then the built binary packed (mcpb validate, mcpb info) and its server.json valid against the registry schema (the project reuses the workspace's lock file, dev profile and target directory)"
./interop/dev-walk.sh target/debug/switchboard

echo "== interop: our client in revision 2026-07-28 (typed calls, input-required rounds, Mcp-Param headers) against the Python and TypeScript v2 SDK servers over Streamable HTTP and stdio"
cargo build --locked --bin switchboard-modern-interop
./interop/our-client-2026.sh target/debug/switchboard-modern-interop

echo "== interop: the official TypeScript v2 and Python 2.3 clients in revision 2026-07-28 (pinned and auto) against switchboard serve over stdio and Streamable HTTP"
./interop/run-clients-2026.sh target/debug/switchboard

echo "== interop: switchboard record + trace on TypeScript SDK <-> Python SDK sessions; 0 violations"
./interop/sdk-transcripts.sh target/debug/switchboard

echo "== interop: our OAuth client (headless) against a real authorization server (oidc-provider on 127.0.0.1): PKCE, resource-bound JWT access tokens, step-up, refresh rotation, client credentials (secret and private_key_jwt), client ID metadata documents; then our resource server (serve --auth-issuer) with our client and with the official TypeScript and Python SDK clients' OAuth"
./interop/oauth/e2e.sh target/debug/switchboard

echo "== interop: DPoP against a real authorization server (oidc-provider on 127.0.0.1) and our resource server (serve --auth-dpop --auth-dpop-nonce): our client (call --dpop) obtains a bound token and calls a tool; a jose client's replayed and forged proofs (htm, htu, iat, ath, another key, alg none, HMAC, bearer) are refused for their reason"
./interop/oauth/dpop-e2e.sh target/debug/switchboard

echo "== interop: two serve --http --store redis:// nodes behind round-robin nginx (Debian's redis-server and nginx on 127.0.0.1): the official TypeScript and Python SDK clients and ours through the proxy, requests alternating nodes, DELETE everywhere, the serving node killed mid-call (both clients resume on the other node: every event and the result once), Redis restarted under a live session"
./interop/cluster.sh target/debug/switchboard

echo "== conformance: the official suite (server mode, --suite all) against switchboard serve --http; no FAILURE, no WARNING"
cargo build --locked --bin switchboard --bin switchboard-conformance-client
./conformance/ci.sh server target/debug/switchboard

echo "== interop: switchboard gateway between the official SDKs and real servers: the TypeScript and Python SDK clients walk the everything contract through it (failures exactly the expected, justified list), the TypeScript SDK client sees our everything server (stdio) and server-everything (Streamable HTTP) each under its prefix, and the conformance suite (--suite all) passes against it"
./interop/gateway-peers.sh target/debug/switchboard

echo "== interop: issue 27's ten-line gateway: our everything server (stdio, 2026-07-28), the official TypeScript server-everything (Streamable HTTP, 2025-11-25) and a Python SDK server (Streamable HTTP, pinned to 2026-07-28) behind one endpoint authenticated by a real authorization server (oidc-provider): 401 without a token; with a client-credentials token the official TypeScript and Python SDK clients see each upstream's listings under its prefix and a call and a read answered as the upstream does"
./interop/gateway-three.sh target/debug/switchboard

echo "== conformance 2026-07-28: the official suite 0.2.0-alpha.12 (server mode, --spec-version 2026-07-28) against switchboard serve --http --skills: the 37 scored scenarios and the pending ones, then the tasks and skills extensions' (no spec version), no FAILURE, no WARNING, no skipped skills check"
./conformance/ci-2026.sh server target/debug/switchboard

echo "== conformance: our client (switchboard-conformance-client), the four core and the 22 OAuth client scenarios one at a time"
./conformance/ci.sh client target/debug/switchboard-conformance-client

echo "== conformance: our client at revision 2026-07-28 (suite 0.2.0-alpha.12), the seven scored client scenarios without authorization (no FAILURE), the 25 scored OAuth ones (no FAILURE, no WARNING) and the four skills ones (no FAILURE, no WARNING, no SKIPPED)"
./interop/conformance-client-2026.sh target/debug/switchboard-conformance-client

echo "== interop: skills (SEP-2640) across implementations: our client pulls and verifies skills from an rmcp 3.11 server (SkillCatalog), rmcp's client lists, gets, reads and verifies ours"
./interop/rmcp-skills.sh target/debug/switchboard

echo "== fuzz: every coverage-guided target for 20 s (libFuzzer, stable toolchain); a crash fails the build"
./fuzz/run.sh --smoke

echo "== soak (smoke mode, about 30 s: 20,000 stdio calls with RSS read, 500 HTTP sessions opened and deleted twice, 1,500 abandoned and reaped; the full runs are scripts/soak.sh --full)"
./scripts/soak.sh --smoke

echo "== benchmark (smoke mode: keeps the harness working; not a timing check)"
./bench/run.sh --smoke
