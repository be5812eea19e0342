#!/usr/bin/env bash
# The cross-SDK benchmark: builds Switchboard and every peer, runs them in turns and prints a
# markdown table (see bench/README.md).
#
#   bench/run.sh [--smoke|--full] [--out FILE.md] [--only GROUP,...]
#
# --only: run only these groups of rows: calls, large, lists, clients, sessions, cold-start, gateway (bench.py) and
#   cluster (cluster.py); the default is every group.
# --full (the default): release builds (peers: lto = "thin", codegen-units = 1), 3 rounds, the
#   median; about 10-15 minutes on 2 cores. --out also writes FILE.json with every raw report.
# --smoke: keeps the harness working in CI, never a timing check: debug builds (switchboard and
#   the load tool are already built by scripts/test-all.sh; the peers build in their dev profile,
#   since a release build of rmcp from scratch takes minutes), tiny runs, one round. Any error
#   fails it.
# A peer that fails to build or start fails the script; so does a peer whose SDK is not installed
# (the TypeScript SDK v2, @modelcontextprotocol/server, serves only the 2026-07-28 rows: without it
# those rows read "not installed" and the script fails after printing the tables).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=../interop/lib.sh
. interop/lib.sh

mode=full
out=""
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) mode=smoke ;;
    --full) mode=full ;;
    --out) out="${2:?--out needs a file}"; shift ;;
    --only) only="${2:?--only needs groups}"; shift ;;
    *) echo "usage: bench/run.sh [--smoke|--full] [--out FILE.md] [--only GROUP,...]" >&2; exit 2 ;;
  esac
  shift
done

[ -x "$NODE22" ] || interop_die "Node 22 is not installed at $NODE22; run scripts/install-peers.sh"
[ -x "$VENV_PY" ] || interop_die "the Python venv is not installed at $VENV_PY; run scripts/install-peers.sh"
[ -d "$INTEROP_DIR/node_modules/@modelcontextprotocol/sdk" ] || interop_die "the TypeScript SDK is not installed; run scripts/install-peers.sh"

target="${CARGO_TARGET_DIR:-$PWD/target}"
peers_target="$PWD/bench/peers/target"
# --full: the CLI without its `otel` feature first, copied aside; the default build below puts
# the usual binary back in place (cargo keeps both sets of artefacts). Not in --smoke: without
# `otel` reqwest loses its blocking client, so most of the workspace builds again (12 minutes
# in release on 2 cores), too long for CI's smoke run: those rows are left out there.
no_otel=""
if [ "$mode" = full ]; then
  echo "== bench: building switchboard without its otel feature (dist)" >&2
  cargo build --profile dist --locked -p switchboard-cli --no-default-features --features jemalloc
  no_otel="$target/dist/switchboard-no-otel"
  cp "$target/dist/switchboard" "$no_otel"
fi
if [ "$mode" = full ]; then
  echo "== bench: building switchboard and switchboard-load (the dist profile: thin LTO, one codegen unit)" >&2
  cargo build --profile dist --locked -p switchboard-cli -p switchboard-load
  cargo build --profile dist --locked -p switchboard --example bench_client
  cargo build --profile dist --locked -p switchboard-test-support --features oauth --example bench_auth
  echo "== bench: building the peers (release, bench/peers)" >&2
  cargo build --release --locked --manifest-path bench/peers/Cargo.toml --target-dir "$peers_target"
  bin="$target/dist"
  peers_bin="$peers_target/release"
else
  echo "== bench: building switchboard and switchboard-load (debug)" >&2
  cargo build --locked -p switchboard-cli -p switchboard-load
  cargo build --locked -p switchboard --example bench_client
  cargo build --locked -p switchboard-test-support --features oauth --example bench_auth
  echo "== bench: building the peers (dev profile, bench/peers)" >&2
  cargo build --locked --manifest-path bench/peers/Cargo.toml --target-dir "$peers_target"
  bin="$target/debug"
  peers_bin="$peers_target/debug"
fi

rustc_v="$(rustc --version)"
node_v="$("$NODE22" --version)"
py_v="$("$VENV_PY" --version 2>&1)"
rmcp_v="$(grep -A1 '^name = "rmcp"$' bench/peers/Cargo.lock | sed -n 's/^version = "\(.*\)"/\1/p')"
ts_v2_modules="${BENCH_TS_V2_MODULES:-$INTEROP_DIR/node_modules}"
ts_v2_v="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["version"])' \
  "$ts_v2_modules/@modelcontextprotocol/server/package.json" 2>/dev/null || echo "not installed")"
header="Benchmark ($mode mode), $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown): \
$(nproc) cores, $rustc_v, rmcp $rmcp_v, @modelcontextprotocol/sdk $SDK_VERSION and @modelcontextprotocol/server $ts_v2_v on Node $node_v, \
mcp $PY_MCP_VERSION on $py_v, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start. \
Command: \`bench/run.sh --$mode\`."

# Paths go through the environment, so that the runner's command line names no server.
export BENCH_SWITCHBOARD="$bin/switchboard" BENCH_LOAD="$bin/switchboard-load" BENCH_PEERS_BIN="$peers_bin"
export BENCH_CLIENT="$bin/examples/bench_client" BENCH_SWITCHBOARD_NO_OTEL="$no_otel"
export BENCH_AUTH_ISSUER="$bin/examples/bench_auth"
# The two builds must differ, or the "built without otel" rows measure the default build twice.
if [ -n "$no_otel" ] && cmp -s "$no_otel" "$bin/switchboard"; then
  interop_die "switchboard built without otel is the same file as the default build"
fi
export BENCH_NODE="$NODE22" BENCH_PYTHON="$VENV_PY" BENCH_TS_V2_MODULES="$ts_v2_modules"
args=(--header "$header")
[ "$mode" = smoke ] && args+=(--smoke)
[ -n "$out" ] && args+=(--out "$out")
# --only: the groups bench.py runs, and whether the cluster rows run.
run_bench=1 run_cluster=1
if [ -n "$only" ]; then
  groups="$(echo "$only" | tr ',' '\n' | grep -vx cluster | paste -sd, -)" || true
  [ -n "$groups" ] && args+=(--only "$groups") || run_bench=0
  echo ",$only," | grep -q ',cluster,' || run_cluster=0
fi
rc=0
if [ "$run_bench" = 1 ]; then
  echo "== bench: running ($mode mode)" >&2
  python3 bench/bench.py "${args[@]}" || rc=$?
fi
# The cluster rows: one node and two behind nginx, sessions in memory and in Redis.
if [ "$run_cluster" = 1 ]; then
  cluster_args=()
  [ "$mode" = smoke ] && cluster_args+=(--smoke)
  [ -n "$out" ] && cluster_args+=(--out "${out%.md}-cluster.md")
  echo "== bench: cluster rows ($mode mode)" >&2
  python3 bench/cluster.py "${cluster_args[@]}" || rc=$?
fi
exit "$rc"
