#!/usr/bin/env bash
# The official MCP conformance suite at revision 2026-07-28 (0.2.0-alpha.12) against our server
# (called by scripts/test-all.sh), 127.0.0.1 only. A run that cannot start fails; so does any
# scenario with a FAILURE or a WARNING.
#
#   conformance/ci-2026.sh server SWITCHBOARD_BIN
#       Starts `SWITCHBOARD_BIN serve --http 127.0.0.1:0 --skills` (the everything server with
#       its two example skills), asks the suite for its frozen scored
#       server scenarios (`conformance list --requirements 2026-07-28`; there must be 37), adds the
#       unscored ones we serve (PENDING below), and runs each in its own process with
#       `--spec-version 2026-07-28` (without the flag the suite silently runs the legacy wire).
#       Then the tasks extension's scenarios (EXTENSION below, unscored too), without the flag:
#       the suite runs an extension scenario on the 2026-07-28 wire by itself and skips it
#       ("not on the spec timeline") under an explicit version. Then the skills extension's three
#       scenarios (SKILLS below, SEP-2640), also without the flag; for them a SKIPPED check fails
#       too (the suite skips every check of a server that declares no skills).
#       Output per scenario in target/conformance/server-2026/.
#
#   conformance/ci-2026.sh url URL
#       The scored and pending server scenarios (not the extensions') against a server already
#       listening at URL, judged the same way (interop/gateway-peers.sh: the gateway).
#
#   conformance/ci-2026.sh tasks-url URL [EXPECTED_FAILING_SCENARIO...]
#       The tasks extension's scenarios against a server already listening at URL (the gateway
#       fronting a server with tasks), judged the same way, except that each scenario named
#       after URL must fail: one that passes fails the run, so the list is
#       looked at again.
#
# The suite is the npm package installed by scripts/install-peers.sh as `conformance-2026`
# (an alias of @modelcontextprotocol/conformance@0.2.0-alpha.12), or the one under
# $CONFORMANCE_2026_DIR (a directory holding node_modules/@modelcontextprotocol/conformance).
set -euo pipefail
cd "$(dirname "$0")/.."
. interop/lib.sh

SCORED_SERVER_SCENARIOS=37
# Run and reported by the suite but not scored at 2026-07-28 ("pending"); we pass them too.
PENDING=(http-header-validation http-custom-header-server-validation json-schema-2020-12)
# The tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`): run, never scored; we pass them.
EXTENSION=(tasks-lifecycle tasks-capability-negotiation tasks-wire-fields tasks-request-state-removal
  tasks-mrtr-input tasks-request-headers tasks-dispatch-and-envelope tasks-status-notifications
  tasks-required-task-error tasks-mrtr-composition)
# The skills extension (SEP-2640, `io.modelcontextprotocol/skills`): run, never scored; every
# check must pass, none skipped.
SKILLS=(sep-2640-skills-directory sep-2640-skills-enumeration sep-2640-skills-manifest)

suite_js() {
  local js
  if [ -n "${CONFORMANCE_2026_DIR:-}" ]; then
    js="$CONFORMANCE_2026_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
  else
    js="interop/node_modules/conformance-2026/dist/index.js"
  fi
  [ -f "$js" ] || interop_die "the 2026-07-28 conformance suite is not installed ($js); run scripts/install-peers.sh"
  grep -q '"version": "0.2.0-alpha.12"' "$(dirname "$js")/../package.json" ||
    interop_die "$(dirname "$js")/.. is not @modelcontextprotocol/conformance 0.2.0-alpha.12"
  echo "$js"
}

# scored_scenarios JS OUT: the suite's frozen scored server scenarios into `scored` (there must
# be SCORED_SERVER_SCENARIOS).
scored_scenarios() {
  local js="$1" out="$2"
  node "$js" list --requirements 2026-07-28 > "$out/list.txt" 2>&1 ||
    interop_die "conformance list failed: $(cat "$out/list.txt")"
  mapfile -t scored < <(sed -n '/^Server scenarios/,/^$/p' "$out/list.txt" | sed -n 's/^  - //p')
  [ "${#scored[@]}" = "$SCORED_SERVER_SCENARIOS" ] ||
    interop_die "expected $SCORED_SERVER_SCENARIOS scored server scenarios, the suite listed ${#scored[@]}"
}

# run_scenarios JS URL OUT SCENARIO...: each scenario in its own process against URL, judged
# (sets `failed` and `ran`; `server_pid`, when set, must stay alive).
run_scenarios() {
  local js="$1" url="$2" out="$3" s
  shift 3
  for s in "$@"; do
    local rc=0 summary skipped="" version=(--spec-version 2026-07-28)
    case " ${EXTENSION[*]} ${SKILLS[*]} " in *" $s "*) version=() ;; esac
    node "$js" server --url "$url" --scenario "$s" "${version[@]}" -o "$out/$s" > "$out/$s.log" 2>&1 || rc=$?
    ran=$((ran + 1))
    summary="$(sed 's/\x1b\[[0-9;]*m//g' "$out/$s.log" | grep -E '^Passed: [0-9]+/[0-9]+, [0-9]+ failed, [0-9]+ warnings' | tail -n 1 || true)"
    case " ${SKILLS[*]} " in
      *" $s "*)
        # Every check of checks.json is SUCCESS: a SKIPPED one fails the scenario.
        skipped="$(node -e '
          const fs = require("fs"), path = require("path"), bad = [];
          let n = 0;
          (function walk(d) {
            for (const e of fs.readdirSync(d, { withFileTypes: true })) {
              const p = path.join(d, e.name);
              if (e.isDirectory()) walk(p);
              else if (e.name === "checks.json")
                for (const c of JSON.parse(fs.readFileSync(p, "utf8"))) {
                  n++;
                  if (c.status !== "SUCCESS") bad.push(`${c.id} ${c.status}`);
                }
            }
          })(process.argv[1]);
          if (n === 0) bad.push("no checks.json");
          console.log(bad.join(", "));
        ' "$out/$s")"
        [ -z "$skipped" ] && summary="$summary, 0 skipped"
        ;;
    esac
    if [ "$rc" != 0 ] || [ -z "$summary" ] || [ -n "$skipped" ] || ! echo "$summary" | grep -qE ', 0 failed, 0 warnings(, 0 skipped)?$'; then
      [ -n "$skipped" ] && echo "    not SUCCESS: $skipped"
      failed=$((failed + 1))
      echo "FAIL $s (exit $rc): ${summary:-no summary}"
      sed 's/\x1b\[[0-9;]*m//g' "$out/$s.log" | grep -E 'FAILURE|WARNING|Error' | head -n 10 | sed 's/^/    /'
    else
      echo "PASS $s: $summary"
    fi
    [ -z "$server_pid" ] || kill -0 "$server_pid" 2> /dev/null || interop_die "the server died during $s (see $log)"
  done
}

server_mode() {
  local bin="$1" js out log url="" failed=0 ran=0 s scored
  [ -x "$bin" ] || interop_die "no switchboard binary at $bin (cargo build --bin switchboard)"
  js="$(suite_js)"
  interop_use_node22
  out="target/conformance/server-2026/ci-$(date -u +%Y%m%dT%H%M%S)-$$"
  mkdir -p "$out"
  log="$out/serve.log"
  server_pid=""
  trap 'if [ -n "$server_pid" ]; then kill "$server_pid" 2> /dev/null || true; wait "$server_pid" 2> /dev/null || true; fi' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  start_switchboard_http "$bin" "$log" --skills
  server_pid="$SB_HTTP_PID"
  url="$SB_HTTP_URL"
  echo "conformance 2026-07-28: $bin serve --http listening on $url; results in $out"

  scored_scenarios "$js" "$out"
  run_scenarios "$js" "$url" "$out" "${scored[@]}" "${PENDING[@]}" "${EXTENSION[@]}" "${SKILLS[@]}"
  if [ "$failed" != 0 ]; then
    echo "FAIL conformance 2026-07-28 server: $failed of $ran scenarios"
    return 1
  fi
  echo "PASS conformance 2026-07-28 server: $ran of $ran scenarios ($SCORED_SERVER_SCENARIOS scored, ${#EXTENSION[@]} of the tasks extension, ${#SKILLS[@]} of the skills extension with no check skipped), no FAILURE, no WARNING"
}

# url_mode URL: the scored and pending server scenarios against a server already running at
# URL (interop/gateway-peers.sh runs them against `switchboard gateway --http`).
url_mode() {
  local url="$1" js out log="" failed=0 ran=0 scored server_pid=""
  js="$(suite_js)"
  interop_use_node22
  out="target/conformance/server-2026/url-$(date -u +%Y%m%dT%H%M%S)-$$"
  mkdir -p "$out"
  echo "conformance 2026-07-28: $url; results in $out"
  scored_scenarios "$js" "$out"
  run_scenarios "$js" "$url" "$out" "${scored[@]}" "${PENDING[@]}"
  if [ "$failed" != 0 ]; then
    echo "FAIL conformance 2026-07-28 server at $url: $failed of $ran scenarios"
    return 1
  fi
  echo "PASS conformance 2026-07-28 server at $url: $ran of $ran scenarios ($SCORED_SERVER_SCENARIOS scored, ${#PENDING[@]} pending), no FAILURE, no WARNING"
}

# tasks_url_mode URL EXPECTED_FAILING...: the tasks extension's scenarios against URL.
tasks_url_mode() {
  local url="$1" js out log="" failed=0 ran=0 server_pid="" s e expected
  shift
  expected=("$@")
  js="$(suite_js)"
  interop_use_node22
  out="target/conformance/server-2026/tasks-url-$(date -u +%Y%m%dT%H%M%S)-$$"
  mkdir -p "$out"
  echo "conformance 2026-07-28, the tasks extension: $url; results in $out"
  local run=() wrong=0
  for s in "${EXTENSION[@]}"; do
    case " ${expected[*]} " in *" $s "*) ;; *) run+=("$s") ;; esac
  done
  run_scenarios "$js" "$url" "$out" "${run[@]}"
  for e in "${expected[@]}"; do
    case " ${EXTENSION[*]} " in *" $e "*) ;; *) interop_die "$e is not a scenario of the tasks extension" ;; esac
    local before="$failed"
    run_scenarios "$js" "$url" "$out" "$e"
    if [ "$failed" = "$before" ]; then
      echo "FAIL $e passed but is listed as failing: look again, then update the list"
      wrong=1
    else
      failed="$before"
      echo "  (expected: $e is listed as failing)"
    fi
  done
  if [ "$failed" != 0 ] || [ "$wrong" != 0 ]; then
    echo "FAIL conformance 2026-07-28 tasks extension at $url: $failed unexpected failures of $ran scenarios"
    return 1
  fi
  echo "PASS conformance 2026-07-28 tasks extension at $url: $((ran - ${#expected[@]})) of $ran scenarios pass, the ${#expected[@]} listed fail as expected; the others with no FAILURE, no WARNING"
}

case "${1:-}" in
  tasks-url)
    [ $# -ge 2 ] || interop_die "usage: conformance/ci-2026.sh tasks-url URL [EXPECTED_FAILING_SCENARIO...]"
    shift
    tasks_url_mode "$@"
    ;;
  url)
    [ $# = 2 ] || interop_die "usage: conformance/ci-2026.sh url URL"
    url_mode "$2"
    ;;
  server)
    [ $# = 2 ] || interop_die "usage: conformance/ci-2026.sh server SWITCHBOARD_BIN"
    server_mode "$2"
    ;;
  *)
    interop_die "usage: conformance/ci-2026.sh server SWITCHBOARD_BIN | url URL | tasks-url URL [EXPECTED_FAILING_SCENARIO...]"
    ;;
esac
