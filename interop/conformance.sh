#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# interop/package-lock.json) on Node 22 from .tools/node22, offline, with every mock server the
# suite starts forced onto 127.0.0.1 (the --import preload interop/listen-localhost.mjs).
# Install first: scripts/install-peers.sh. Never use `tier-check` (it calls a remote API).
#
#   interop/conformance.sh server URL [OPTIONS...]
#       Server mode against a running Streamable HTTP server, e.g. http://127.0.0.1:PORT/mcp.
#       The host must be localhost, 127.0.0.1 or [::1]. Default `--suite all`; pass
#       `--suite active` (the 30 scored for 2025-11-25) or `--scenario NAME` instead.
#       Exit code: the suite's (1 on any FAILURE check).
#
#   interop/conformance.sh client SCENARIO CMD [ARGS...]
#       Client mode, one scenario: the suite runs `CMD ARGS... URL` (URL appended last) with
#       MCP_CONFORMANCE_SCENARIO set; killed after 30 s. Passes only if the suite passes it and,
#       for `initialize` and `auth/resource-mismatch` (which a client that does nothing "passes"),
#       the scenario's key check (mcp-client-initialization / prm-pathbased-requested) succeeded.
#
#   interop/conformance.sh client-suite core|all CMD [ARGS...]
#       Client mode, every scenario of the suite one at a time (never the CLI's parallel --suite,
#       which ignores exit codes and time-outs): `core` = the 18 scored for 2025-11-25, `all` = 26.
#       Ends with `N passed, M failed`; exit 0 only if all passed.
#
#   interop/conformance.sh list|help|--help|cli ARGS...
#       The CLI itself (`cli ARGS...` passes ARGS through).
#
# Results are saved under target/conformance/ unless -o/--output-dir is given (server mode).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
interop_use_node22
[ -f "$CONFORMANCE_JS" ] || interop_die "conformance is not installed ($CONFORMANCE_JS); run scripts/install-peers.sh"
[ "$(node -p "require('$INTEROP_DIR/node_modules/@modelcontextprotocol/conformance/package.json').version")" = "$CONFORMANCE_VERSION" ] ||
  interop_die "installed conformance is not $CONFORMANCE_VERSION; run scripts/install-peers.sh"

RESULTS="$INTEROP_REPO/target/conformance"

suite() {
  node --import "$LISTEN_PRELOAD" "$CONFORMANCE_JS" "$@"
}

usage() {
  sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'
}

# Shell-quotes each argument and joins them: the suite runs the command through /bin/sh.
join_command() {
  local out="" a
  for a in "$@"; do out+="$(printf '%q' "$a") "; done
  printf '%s' "${out% }"
}

# client_one SCENARIO CMD...: prints one PASS/FAIL line; returns 0 on pass.
client_one() {
  local scenario="$1"
  shift
  local dir rc=0 key=""
  dir="$RESULTS/client/$(date -u +%Y%m%dT%H%M%S)-${scenario//\//_}"
  mkdir -p "$dir"
  suite client --command "$(join_command "$@")" --scenario "$scenario" -o "$dir" > "$dir/suite.log" 2>&1 || rc=$?
  case "$scenario" in
    initialize) key="mcp-client-initialization" ;;
    auth/resource-mismatch) key="prm-pathbased-requested" ;;
  esac
  if [ "$rc" != 0 ]; then
    echo "FAIL conformance client $scenario: the suite failed it (exit $rc; see $dir)"
    return 1
  fi
  if [ -n "$key" ]; then
    local checks
    checks="$(find "$dir" -name checks.json | head -n 1)"
    if [ -z "$checks" ] || ! node -e '
      const checks = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
      process.exit(checks.some((c) => c.id === process.argv[2] && c.status === "SUCCESS") ? 0 : 1);
    ' "$checks" "$key"; then
      echo "FAIL conformance client $scenario: key check $key did not succeed (see $dir)"
      return 1
    fi
  fi
  echo "PASS conformance client $scenario"
}

# Client scenario names from the CLI's own list; `core` keeps those tagged 2025-11-25.
client_scenarios() {
  suite list | awk -v which="$1" '
    /^Client scenarios/ { inside = 1; next }
    /^[A-Za-z].*scenarios/ { inside = 0 }
    inside && /^ *- / {
      name = $2
      if (which == "all" || index($0, "2025-11-25") > 0) print name
    }'
}

mode="${1:-help}"
[ $# -gt 0 ] && shift
case "$mode" in
  server)
    [ $# -ge 1 ] || interop_die "usage: interop/conformance.sh server URL [OPTIONS...]"
    url="$1"
    shift
    case "$url" in
      http://localhost:*/* | http://127.0.0.1:*/* | "http://[::1]:"*/*) ;;
      *) interop_die "server URL must be http://localhost|127.0.0.1|[::1]:PORT/PATH, got $url" ;;
    esac
    extra=("$@")
    have_selection=0
    have_output=0
    for a in "$@"; do
      case "$a" in
        --suite | --scenario | --suite=* | --scenario=*) have_selection=1 ;;
        -o | --output-dir | --output-dir=*) have_output=1 ;;
      esac
    done
    [ "$have_selection" = 1 ] || extra+=(--suite all)
    [ "$have_output" = 1 ] || { mkdir -p "$RESULTS/server" && extra+=(-o "$RESULTS/server"); }
    exec node --import "$LISTEN_PRELOAD" "$CONFORMANCE_JS" server --url "$url" "${extra[@]}"
    ;;
  client)
    [ $# -ge 2 ] || interop_die "usage: interop/conformance.sh client SCENARIO CMD [ARGS...]"
    client_one "$@"
    ;;
  client-suite)
    [ $# -ge 2 ] || interop_die "usage: interop/conformance.sh client-suite core|all CMD [ARGS...]"
    which="$1"
    shift
    case "$which" in core | all) ;; *) interop_die "client-suite: core or all, got $which" ;; esac
    mapfile -t scenarios < <(client_scenarios "$which")
    [ "${#scenarios[@]}" -gt 0 ] || interop_die "no client scenarios listed by the suite"
    p=0
    f=0
    for s in "${scenarios[@]}"; do
      if client_one "$s" "$@"; then p=$((p + 1)); else f=$((f + 1)); fi
    done
    echo "$p passed, $f failed"
    [ "$f" = 0 ]
    ;;
  list) suite list "$@" ;;
  cli) suite "$@" ;;
  help | -h | --help) usage ;;
  *)
    usage >&2
    exit 2
    ;;
esac
