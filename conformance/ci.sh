#!/usr/bin/env bash
# The official MCP conformance suite in CI (called by scripts/test-all.sh), 127.0.0.1 only.
# A run that cannot start fails; so does any FAILURE, and any WARNING.
#
#   conformance/ci.sh server SWITCHBOARD_BIN
#       Starts `SWITCHBOARD_BIN serve --http 127.0.0.1:0` (the kernel picks a free port, read
#       back from its "listening on" line), runs `interop/conformance.sh server URL --suite all`
#       into a directory of its own under target/conformance/server/, then requires exit 0,
#       one checks.json per scenario the suite announced, and no FAILURE or WARNING check in
#       them. The server is killed on exit, whatever happens.
#
#   conformance/ci.sh judge DIR
#       Judges a saved server run again (as above, from DIR's own files).
#
#   conformance/ci.sh client CLIENT_BIN
#       The four core client scenarios (initialize, tools_call,
#       elicitation-sep1034-client-defaults, sse-retry) and the 22 OAuth client scenarios
#       (auth/*: core, back-compat, draft and extension), one at a time with
#       `interop/conformance.sh client SCENARIO CLIENT_BIN` (single-scenario mode counts a
#       WARNING as a failure). All run; the script fails if any failed.
set -euo pipefail
cd "$(dirname "$0")/.."
. interop/lib.sh

CLIENT_SCENARIOS=(initialize tools_call elicitation-sep1034-client-defaults sse-retry
  auth/metadata-default auth/metadata-var1 auth/metadata-var2 auth/metadata-var3 auth/basic-cimd
  auth/scope-from-www-authenticate auth/scope-from-scopes-supported
  auth/scope-omitted-when-undefined auth/scope-step-up auth/scope-retry-limit
  auth/token-endpoint-auth-basic auth/token-endpoint-auth-post auth/token-endpoint-auth-none
  auth/pre-registration auth/2025-03-26-oauth-metadata-backcompat
  auth/2025-03-26-oauth-endpoint-fallback auth/resource-mismatch auth/offline-access-scope
  auth/offline-access-not-supported auth/client-credentials-jwt auth/client-credentials-basic
  auth/cross-app-access-complete-flow)

# judge DIR: a saved server run, from its own files only: the suite's exit code 0, one
# checks.json per scenario the suite announced, and no FAILURE or WARNING check among them.
judge() {
  local dir="$1" announced rc
  [ -f "$dir/suite.log" ] && [ -f "$dir/exit-code" ] || interop_die "$dir is not a saved server run"
  announced="$(sed -n 's/.*Running [a-z]* suite (\([0-9]*\) scenarios).*/\1/p' "$dir/suite.log" | head -n 1)"
  rc="$(cat "$dir/exit-code")"
  interop_use_node22
  node -e '
    const fs = require("fs"), path = require("path");
    const [dir, announced, rc] = process.argv.slice(1);
    const files = [];
    (function walk(d) {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name === "checks.json") files.push(p);
      }
    })(dir);
    const problems = [];
    const counts = {};
    for (const f of files) {
      const scenario = path.basename(path.dirname(f)).replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
      for (const c of JSON.parse(fs.readFileSync(f, "utf8"))) {
        counts[c.status] = (counts[c.status] || 0) + 1;
        if (c.status === "FAILURE" || c.status === "WARNING") {
          problems.push(`${c.status} ${scenario} / ${c.id}: ${c.errorMessage || c.description}`);
        }
      }
    }
    if (!/^\d+$/.test(announced)) problems.push("the suite did not announce its scenarios (it did not start?)");
    else if (files.length !== Number(announced)) problems.push(`the suite announced ${announced} scenarios but ${files.length} wrote checks.json`);
    if (rc !== "0") problems.push(`the suite exited ${rc}`);
    const summary = Object.entries(counts).map(([s, n]) => `${n} ${s}`).join(", ");
    console.log(`conformance server: ${files.length} scenarios, checks: ${summary || "none"}`);
    for (const p of problems) console.log(`conformance server: ${p}`);
    process.exit(problems.length ? 1 : 0);
  ' "$dir" "$announced" "$rc"
}

server_mode() {
  local bin="$1"
  [ -x "$bin" ] || interop_die "no switchboard binary at $bin (cargo build --bin switchboard)"
  local out log url="" rc=0
  out="target/conformance/server/ci-$(date -u +%Y%m%dT%H%M%S)-$$"
  mkdir -p "$out"
  log="$out/serve.log"
  server_pid=""
  trap 'if [ -n "$server_pid" ]; then kill "$server_pid" 2> /dev/null || true; wait "$server_pid" 2> /dev/null || true; fi' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  start_switchboard_http "$bin" "$log"
  server_pid="$SB_HTTP_PID"
  url="$SB_HTTP_URL"
  echo "conformance: $bin serve --http listening on $url; results in $out"

  ./interop/conformance.sh server "$url" --suite all -o "$out" > "$out/suite.log" 2>&1 || rc=$?
  kill -0 "$server_pid" 2> /dev/null || interop_die "the server died during the run (see $log)"

  echo "$rc" > "$out/exit-code"
  if ! judge "$out"; then
    tail -n 40 "$out/suite.log"
    echo "FAIL conformance server --suite all (suite output: $out/suite.log)"
    return 1
  fi
  echo "PASS conformance server --suite all: no FAILURE, no WARNING"
}

client_mode() {
  local bin="$1" failed=0 s
  [ -x "$bin" ] || interop_die "no client binary at $bin (cargo build --bin switchboard-conformance-client)"
  for s in "${CLIENT_SCENARIOS[@]}"; do
    ./interop/conformance.sh client "$s" "$bin" || failed=$((failed + 1))
  done
  if [ "$failed" != 0 ]; then
    echo "FAIL conformance client: $failed of ${#CLIENT_SCENARIOS[@]} scenarios failed"
    return 1
  fi
  echo "PASS conformance client: ${#CLIENT_SCENARIOS[@]} of ${#CLIENT_SCENARIOS[@]} scenarios"
}

case "${1:-}" in
  server)
    [ $# = 2 ] || interop_die "usage: conformance/ci.sh server SWITCHBOARD_BIN"
    server_mode "$2"
    ;;
  judge)
    [ $# = 2 ] || interop_die "usage: conformance/ci.sh judge target/conformance/server/ci-..."
    judge "$2"
    ;;
  client)
    [ $# = 2 ] || interop_die "usage: conformance/ci.sh client CLIENT_BIN"
    client_mode "$2"
    ;;
  *)
    sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
