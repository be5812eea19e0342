#!/usr/bin/env bash
# Builds and runs the coverage-guided fuzz targets (libFuzzer, stable rustc; docs/FUZZ.md).
#
#   fuzz/run.sh [--smoke | --budget SECONDS] [--cpu SECONDS] [TARGET...]
#                                                           run each target for the budget
#   fuzz/run.sh --install                                   only install what the runs need
#   fuzz/run.sh --merge [TARGET...]                          fold the working corpus into the seeds
#   fuzz/run.sh --list                                       the targets
#
# --smoke is 20 s per target (what scripts/test-all.sh runs); the default budget is 60 s of
# wall time. --cpu stops each target after that many CPU seconds instead (on a shared machine
# wall time says little); the wall budget then only caps it.
# Each run starts from the committed seeds (fuzz/corpus/<target>) and a working corpus kept
# between runs (target/fuzz/corpus/<target>, not committed). A crash, a timeout or an
# out-of-memory stops that target, its input is copied to fuzz/regressions/<target>/ (replayed
# by `cargo test -p switchboard-fuzz-targets` from then on) and the script exits 1.
# The last line is `fuzz: N passed, M failed`.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
ALL_TARGETS=(ndjson sse sse_load frame http inspect uri_template pagination)

mode=run
budget=60
cpu_budget=
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) budget=20 ;;
    --budget) budget="${2:?--budget needs a number of seconds}"; shift ;;
    --cpu) cpu_budget="${2:?--cpu needs a number of seconds}"; shift ;;
    --install) mode=install ;;
    --merge) mode=merge ;;
    --list) printf '%s\n' "${ALL_TARGETS[@]}"; exit 0 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz/run.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1") ;;
  esac
  shift
done
[ ${#targets[@]} -gt 0 ] || targets=("${ALL_TARGETS[@]}")
for t in "${targets[@]}"; do
  [[ " ${ALL_TARGETS[*]} " == *" $t "* ]] || { echo "fuzz/run.sh: no target $t (--list)" >&2; exit 2; }
done

export CARGO_INCREMENTAL=0
OUT="${FUZZ_TARGET_DIR:-$ROOT/target/fuzz}"
HOST="$(rustc -vV | sed -n 's/^host: //p')"
BIN_DIR="$OUT/$HOST/release"

# libfuzzer-sys compiles libFuzzer's C++ sources: a C++ compiler is the one system tool needed.
install() {
  if ! command -v c++ > /dev/null && ! command -v g++ > /dev/null; then
    echo "== fuzz: installing g++ (Debian)"
    apt-get update -qq && apt-get install -y -qq g++ > /dev/null
  fi
  sync_lock
  echo "== fuzz: fetching the fuzz workspace's crates"
  (cd fuzz && cargo fetch --locked)
}

# fuzz/Cargo.lock is the root Cargo.lock plus libFuzzer's crates. When the root workspace's
# dependencies change, it is rebuilt from the root lock (so the targets are built with the
# versions the project is), and only libFuzzer's crates are resolved anew.
sync_lock() {
  if ! (cd fuzz && cargo metadata --locked --format-version 1 > /dev/null 2>&1); then
    echo "== fuzz: fuzz/Cargo.lock is behind Cargo.lock; rebuilt from it (commit the result)"
    cp Cargo.lock fuzz/Cargo.lock
    (cd fuzz && cargo metadata --format-version 1 > /dev/null)
  fi
}

# Coverage instrumentation with stable rustc's own flags: LLVM's SanitizerCoverage pass with
# inline 8-bit counters, the PC table and comparison tracing, which is what libFuzzer reads.
# `--target` keeps these flags off build scripts and proc macros (they do not link libFuzzer).
build() {
  echo "== fuzz: building ${targets[*]} (release, instrumented, into $OUT)"
  local bins=()
  for t in "${targets[@]}"; do bins+=(--bin "$t"); done
  (cd fuzz && RUSTFLAGS="-Cpasses=sancov-module \
      -Cllvm-args=-sanitizer-coverage-level=4 \
      -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
      -Cllvm-args=-sanitizer-coverage-pc-table \
      -Cllvm-args=-sanitizer-coverage-trace-compares \
      --cfg fuzzing" \
    CARGO_TARGET_DIR="$OUT" cargo build --locked --release --target "$HOST" "${bins[@]}")
}

# CPU seconds used so far by this script's finished children (user + system), read from
# `times` in this shell (a subshell would see only its own children): the machine may be
# shared, so a run is measured in CPU time, not only in wall time.
cpu_seconds() {
  times > "$OUT/logs/times.$$"
  tail -n 1 "$OUT/logs/times.$$" | awk '{ n = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); n += a[1] * 60 + a[2] } printf "%d\n", n }'
}

# The largest input each target is given.
max_len() {
  case "$1" in
    uri_template | pagination) echo 1024 ;;
    frame) echo 8192 ;;
    *) echo 16384 ;;
  esac
}

# The dictionary of each target (libFuzzer takes one file).
dict() {
  local file="$OUT/dict/$1.dict"
  mkdir -p "$OUT/dict"
  case "$1" in
    sse | sse_load) cat fuzz/dict/sse.dict fuzz/dict/json.dict ;;
    http) cat fuzz/dict/http.dict fuzz/dict/json.dict ;;
    uri_template | pagination) cat fuzz/dict/uri.dict ;;
    *) cat fuzz/dict/json.dict ;;
  esac > "$file"
  echo "$file"
}

# Extra seed folders: the official example messages, read from shared/ (never copied).
extra_seeds() {
  local examples="$ROOT/../shared/spec/schema/2026-07-28/examples"
  if [ "$1" = frame ] && [ -d "$examples" ]; then
    local dir="$OUT/seeds/frame-examples"
    mkdir -p "$dir"
    find "$examples" -name '*.json' -exec cp {} "$dir/" \;
    echo "$dir"
  fi
}

if [ "$mode" = install ]; then
  install
  exit 0
fi

if [ "$mode" = merge ]; then
  sync_lock
  build
  mkdir -p "$OUT/logs"
  for t in "${targets[@]}"; do
    before=$(find "fuzz/corpus/$t" -type f | wc -l)
    # Edges only (no hit counts): the smallest set of inputs that reaches every edge reached.
    "$BIN_DIR/$t" -merge=1 -use_counters=0 -max_len="$(max_len "$t")" "fuzz/corpus/$t" "$OUT/corpus/$t" \
      > "$OUT/logs/$t.merge.log" 2>&1 || { tail -n 20 "$OUT/logs/$t.merge.log"; exit 1; }
    after=$(find "fuzz/corpus/$t" -type f | wc -l)
    echo "fuzz: $t: seeds $before -> $after ($(du -sh "fuzz/corpus/$t" | cut -f1))"
  done
  exit 0
fi

install
build
mkdir -p "$OUT/logs"
passed=0
failed=0
summary=()
for t in "${targets[@]}"; do
  corpus="$OUT/corpus/$t"
  artifacts="$OUT/artifacts/$t"
  log="$OUT/logs/$t.log"
  mkdir -p "$corpus" "$artifacts"
  rm -f "$artifacts"/*
  echo "== fuzz: $t for ${budget}s${cpu_budget:+ or $cpu_budget CPU s}"
  rc=0
  seeds=("fuzz/corpus/$t")
  extra="$(extra_seeds "$t")"
  [ -z "$extra" ] || seeds+=("$extra")
  cpu_seconds > "$OUT/logs/$t.cpu.before"
  "$BIN_DIR/$t" "$corpus" "${seeds[@]}" \
    -max_total_time="$budget" -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$t")" \
    -dict="$(dict "$t")" -artifact_prefix="$artifacts/" -print_final_stats=1 \
    > "$log" 2>&1 &
  pid=$!
  interrupted=
  if [ -n "$cpu_budget" ]; then
    while kill -0 "$pid" 2> /dev/null; do
      used=$(ps -o times= -p "$pid" 2> /dev/null | tr -d ' ' || true)
      if [ -n "$used" ] && [ "$used" -ge "$cpu_budget" ]; then
        interrupted=1
        kill -INT "$pid" 2> /dev/null || true
        break
      fi
      sleep 5
    done
  fi
  wait "$pid" || rc=$?
  # libFuzzer exits 72 when interrupted, after printing its final figures.
  if [ -n "$interrupted" ] && [ "$rc" = 72 ]; then rc=0; fi
  cpu_seconds > "$OUT/logs/$t.cpu.after"
  cpu=$(( $(cat "$OUT/logs/$t.cpu.after") - $(cat "$OUT/logs/$t.cpu.before") ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1 || true)
  files=$(find "$corpus" -type f | wc -l)
  line="$t: ${execs:-?} execs in ${cpu} CPU s (${rate:-?}/s of wall time), ${cov:-no coverage line}, working corpus $files files"
  crashes=$(find "$artifacts" -type f | wc -l)
  if [ "$rc" = 0 ] && [ "$crashes" = 0 ]; then
    passed=$((passed + 1))
    echo "   $line"
  else
    failed=$((failed + 1))
    mkdir -p "fuzz/regressions/$t"
    for f in "$artifacts"/*; do
      [ -f "$f" ] || continue
      cp "$f" "fuzz/regressions/$t/"
      echo "   FOUND $(basename "$f") -> fuzz/regressions/$t/ (replay: $BIN_DIR/$t $f)"
    done
    grep -E -B2 -A25 'panicked at|ERROR: libFuzzer|SUMMARY' "$log" | head -n 60 || tail -n 40 "$log"
    line="$line, FAILED (exit $rc, $crashes artefacts; log $log)"
    echo "   $line"
  fi
  summary+=("$line")
done
echo "== fuzz summary (budget ${budget}s per target)"
printf '   %s\n' "${summary[@]}"
echo "fuzz: $passed passed, $failed failed"
[ "$failed" = 0 ]
