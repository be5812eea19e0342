#!/usr/bin/env bash
# Our conformance client against the official suite at revision 2026-07-28
# (@modelcontextprotocol/conformance 0.2.0-alpha.12, installed as `conformance-2026` next to
# 0.1.16): the seven scored client scenarios that need no authorization and the 25 scored OAuth
# client scenarios (`auth/*`), and the six agent-identity extension scenarios (client
# credentials with a secret and with `private_key_jwt`, enterprise-managed authorization, DPoP
# with and without nonces, workload identity federation) and the four skills extension scenarios
# (SEP-2640: no prefetch, digest, size and frontmatter verification) without a spec version; the others one process each, with
# `--spec-version 2026-07-28` (the suite then sets MCP_CONFORMANCE_PROTOCOL_VERSION=2026-07-28,
# which selects the client's modern lifecycle). Offline, every mock server on 127.0.0.1.
#
#   interop/conformance-client-2026.sh [CLIENT_BIN]
#       CLIENT_BIN defaults to target/debug/switchboard-conformance-client.
#
# A scenario passes when the suite exits 0, wrote its checks.json, and no check is FAILURE; for
# the seven scenarios without authorization a WARNING is reported, not failed (the suite scores
# SHOULDs as warnings), for the OAuth ones a WARNING fails too, and for the skills ones a WARNING
# or a SKIPPED check fails. Results are saved under
# target/conformance/client-2026/. Exit 0 only if all passed.
#
#   SCENARIOS_ONLY="auth/iss-supported ..." interop/conformance-client-2026.sh  runs those only.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
interop_use_node22
[ -f "$CONFORMANCE_2026_JS" ] || interop_die "conformance $CONFORMANCE_2026_VERSION is not installed ($CONFORMANCE_2026_JS); run scripts/install-peers.sh"
[ "$(node -p "require('$INTEROP_DIR/node_modules/conformance-2026/package.json').version")" = "$CONFORMANCE_2026_VERSION" ] ||
  interop_die "installed conformance-2026 is not $CONFORMANCE_2026_VERSION; run scripts/install-peers.sh"

BIN="${1:-$INTEROP_REPO/target/debug/switchboard-conformance-client}"
[ -x "$BIN" ] || interop_die "no client binary at $BIN (cargo build --bin switchboard-conformance-client)"
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"

SCENARIOS=(tools_call request-metadata sep-2322-client-request-state http-standard-headers
  http-custom-headers http-invalid-tool-headers json-schema-ref-no-deref
  auth/metadata-default auth/metadata-var1 auth/metadata-var2 auth/metadata-var3 auth/basic-cimd
  auth/scope-from-www-authenticate auth/scope-from-scopes-supported
  auth/scope-omitted-when-undefined auth/scope-step-up auth/scope-retry-limit
  auth/token-endpoint-auth-basic auth/token-endpoint-auth-post auth/token-endpoint-auth-none
  auth/pre-registration auth/resource-mismatch auth/offline-access-scope
  auth/offline-access-not-supported auth/authorization-server-migration auth/iss-supported
  auth/iss-not-advertised auth/iss-supported-missing auth/iss-wrong-issuer auth/iss-unexpected
  auth/iss-normalized auth/metadata-issuer-mismatch
  auth/client-credentials-jwt auth/client-credentials-basic auth/enterprise-managed-authorization
  auth/dpop auth/dpop-nonce auth/wif-jwt-bearer
  sep-2640-client-no-prefetch sep-2640-client-verify-digest sep-2640-client-verify-size
  sep-2640-client-verify-frontmatter)
# The agent-identity extension scenarios (unscored): the suite runs them without a spec version.
EXTENSIONS=" auth/client-credentials-jwt auth/client-credentials-basic auth/enterprise-managed-authorization auth/dpop auth/dpop-nonce auth/wif-jwt-bearer sep-2640-client-no-prefetch sep-2640-client-verify-digest sep-2640-client-verify-size sep-2640-client-verify-frontmatter "
if [ -n "${SCENARIOS_ONLY:-}" ]; then read -r -a SCENARIOS <<< "$SCENARIOS_ONLY"; fi
RESULTS="$INTEROP_REPO/target/conformance/client-2026/$(date -u +%Y%m%dT%H%M%S)-$$"
mkdir -p "$RESULTS"

passed=0
failed=0
for s in "${SCENARIOS[@]}"; do
  dir="$RESULTS/${s//\//_}"
  mkdir -p "$dir"
  rc=0
  node --import "$LISTEN_PRELOAD" "$CONFORMANCE_2026_JS" client --command "$(printf '%q' "$BIN")" \
    --scenario "$s" $([[ $EXTENSIONS == *" $s "* ]] || echo --spec-version 2026-07-28) -o "$dir" > "$dir/suite.log" 2>&1 || rc=$?
  verdict="$(node -e '
    const fs = require("fs"), path = require("path");
    const [dir, rc, strict] = process.argv.slice(1);
    const files = [];
    (function walk(d) {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name === "checks.json") files.push(p);
      }
    })(dir);
    const problems = [], counts = {};
    for (const f of files) {
      for (const c of JSON.parse(fs.readFileSync(f, "utf8"))) {
        counts[c.status] = (counts[c.status] || 0) + 1;
        if (c.status === "SKIPPED" && strict === "2") problems.push(`SKIPPED ${c.id}: ${c.errorMessage || c.description}`);
        if (c.status === "FAILURE") problems.push(`${c.id}: ${c.errorMessage || c.description}`);
        if (c.status === "WARNING" && strict !== "0") problems.push(`WARNING ${c.id}: ${c.errorMessage || c.description}`);
        else if (c.status === "WARNING") console.error(`  warning ${c.id}: ${c.errorMessage || c.description}`);
      }
    }
    if (files.length === 0) problems.push("no checks.json was written");
    if (rc !== "0") problems.push(`the suite exited ${rc}`);
    const summary = Object.entries(counts).map(([s, n]) => `${n} ${s}`).join(", ");
    console.log(problems.length ? `FAIL (${summary || "no checks"}): ${problems.join("; ")}` : `PASS (${summary})`);
  ' "$dir" "$rc" "$([[ $s == sep-2640-* ]] && echo 2 || { [[ $s == auth/* ]] && echo 1 || echo 0; })")"
  case "$verdict" in
    PASS*) passed=$((passed + 1)); echo "PASS conformance client 2026-07-28 $s ${verdict#PASS }" ;;
    *) failed=$((failed + 1)); echo "FAIL conformance client 2026-07-28 $s ${verdict#FAIL } (see $dir/suite.log)" ;;
  esac
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
