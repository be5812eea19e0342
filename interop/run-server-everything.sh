#!/usr/bin/env bash
# How to launch the official `@modelcontextprotocol/server-everything` (pinned in
# interop/package-lock.json) over stdio, from the installed interop/node_modules on Node 22 — a
# real server nobody on this team wrote, for our own client's tests (e.g. a Rust integration test
# spawns it). Install first: scripts/install-peers.sh.
#
#   interop/run-server-everything.sh          print the command line, shell-quoted, on one line
#   interop/run-server-everything.sh --json   print it as a JSON array of argv strings (program first)
#   interop/run-server-everything.sh --exec   run it here (stdio: JSON-RPC on stdin/stdout, logs on stderr)
#
# The command uses absolute paths and needs no environment: it can be spawned from any directory.
# Exits non-zero, with a message, if the peers are not installed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ -x "$NODE22" ] || interop_die "Node 22 is not installed at $NODE22; run scripts/install-peers.sh"
[ -f "$SERVER_EVERYTHING_JS" ] || interop_die "server-everything is not installed ($SERVER_EVERYTHING_JS); run scripts/install-peers.sh"
argv=("$NODE22" "$SERVER_EVERYTHING_JS" stdio)
case "${1:-}" in
  "") printf '%q %q %q\n' "${argv[@]}" ;;
  --json) "$NODE22" -e 'console.log(JSON.stringify(process.argv.slice(1)))' "${argv[@]}" ;;
  --exec) exec "${argv[@]}" ;;
  *) interop_die "usage: interop/run-server-everything.sh [--json|--exec]" ;;
esac
