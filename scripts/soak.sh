#!/usr/bin/env bash
# Soak and scale runs against `switchboard serve` (docs/SOAK.md), with switchboard-load:
#   1. stdio: N tools/call, 32 in flight, the server's RSS read every second; fails when it grew
#      past the bound after the warm-up, or when any call failed.
#   2. HTTP sessions: S sessions open at once (initialize, initialized, one tools/call each), then
#      all DELETEd, twice; the server's session bound is S, so the second round opens only if
#      the first one's sessions are all gone; fails on any error or when RSS after the second
#      round's DELETE grew past the bound against the first's.
#   3. HTTP churn: C sessions opened at a steady rate and abandoned (no DELETE) against a server
#      with a 1 s idle timeout and a session bound far below C; fails when one is refused (the
#      reaper did not keep up) or when RSS grew past the bound after the warm-up; then, once the
#      idle timeout has passed, as many sessions as the bound must open again (the map is empty).
#
#   scripts/soak.sh [--smoke|--full] [--bin DIR] [--json-dir DIR]
#
# --smoke (the default; scripts/test-all.sh): debug builds, small counts, about 20 s of runs.
# --full: release builds; 1,000,000 calls, 10,000 sessions, 20,000 abandoned sessions; about
#   5 minutes on 2 cores. --json-dir keeps every switchboard-load report. --bin DIR takes
#   `switchboard` and `switchboard-load` from DIR as they are (no build).
# Servers listen on 127.0.0.1 with port 0; every run is bounded in count and in time.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=smoke
json_dir=""
bin_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) mode=smoke ;;
    --full) mode=full ;;
    --json-dir) json_dir="${2:?--json-dir needs a directory}"; shift ;;
    --bin) bin_dir="${2:?--bin needs a directory}"; shift ;;
    *) echo "usage: scripts/soak.sh [--smoke|--full] [--bin DIR] [--json-dir DIR]" >&2; exit 2 ;;
  esac
  shift
done

target="${CARGO_TARGET_DIR:-$PWD/target}"
if [ "$mode" = full ]; then
  [ -n "$bin_dir" ] || cargo build --release --locked -p switchboard-cli -p switchboard-load
  bin="$target/release"
  calls=1000000 warmup=100000 rss_every=1000 stdio_growth=1024 stdio_secs=900
  sessions=10000 session_growth=4096 session_secs=600
  churn=20000 churn_warmup=4000 churn_rate=200 churn_bound=400 churn_growth=2048 churn_secs=300
else
  [ -n "$bin_dir" ] || cargo build --locked -p switchboard-cli -p switchboard-load
  bin="$target/debug"
  calls=20000 warmup=5000 rss_every=250 stdio_growth=1024 stdio_secs=60
  sessions=500 session_growth=2048 session_secs=60
  churn=1500 churn_warmup=500 churn_rate=200 churn_bound=400 churn_growth=2048 churn_secs=60
fi
[ -n "$bin_dir" ] && bin="$bin_dir"
sb="$bin/switchboard"
load="$bin/switchboard-load"
[ -n "$json_dir" ] && mkdir -p "$json_dir"
tmp="$(mktemp -d)"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# The tool called everywhere: the everything server's structured tool (input and output schemas
# checked on every call).
tool=(--tool test_structured_output --arguments '{"a":1,"b":2}')

# Runs switchboard-load with --json; keeps the report as $tmp/NAME.json (and in --json-dir);
# its exit code is returned.
run_load() {
  local name="$1"; shift
  local rc=0
  "$load" "$@" --json > "$tmp/$name.json" || rc=$?
  [ -n "$json_dir" ] && cp "$tmp/$name.json" "$json_dir/$name.json"
  return "$rc"
}

# Reads fields of a report: `field NAME KEY...` prints one line per key.
field() {
  local name="$1"; shift
  python3 - "$tmp/$name.json" "$@" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for k in sys.argv[2:]:
    print(json.dumps(r.get(k), separators=(",", ":")))
PY
}

fail() { echo "soak: FAILED: $*" >&2; exit 1; }

# Starts `switchboard serve --http 127.0.0.1:0 ARGS...`; sets server_pid and url.
start_server() {
  "$sb" serve --http 127.0.0.1:0 "$@" 2> "$tmp/server.log" &
  server_pid=$!
  url=""
  for _ in $(seq 1 100); do
    url="$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' "$tmp/server.log" | head -n 1 || true)"
    [ -n "$url" ] && return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  cat "$tmp/server.log" >&2
  fail "the HTTP server did not start"
}

stop_server() {
  kill "$server_pid" 2>/dev/null || true
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
}

echo "== soak ($mode): stdio, $calls tools/call after $warmup of warm-up, 32 in flight, RSS every ${rss_every} ms, growth bound ${stdio_growth} KiB"
rc=0
run_load stdio --stdio "$sb serve" "${tool[@]}" -n "$calls" --warmup "$warmup" -k 32 \
  --rss-every-ms "$rss_every" --max-rss-growth-kib "$stdio_growth" --max-seconds "$stdio_secs" || rc=$?
read -r n errors secs rate base growth last < <(field stdio calls errors seconds calls_per_sec rss_baseline_kib rss_growth_kib rss_last_kib | paste -sd' ')
echo "   $n calls in ${secs} s ($rate calls/s), $errors errors; RSS baseline $base KiB, growth $growth KiB, last $last KiB"
[ "$rc" -eq 0 ] || fail "stdio soak exited $rc ($(field stdio notes))"
[ "$errors" = 0 ] && [ "$n" = "$calls" ] || fail "stdio soak: $n calls, $errors errors"

echo "== soak ($mode): HTTP, $sessions sessions open at once (initialize + a call each), then DELETEd; twice, with a session bound of $sessions"
start_server --max-sessions "$sessions"
rc=0
run_load sessions --url "$url" --pid "$server_pid" --mode sessions --sessions "$sessions" --rounds 2 \
  --call "${tool[@]}" -k 32 --max-rss-growth-kib "$session_growth" --max-seconds "$session_secs" || rc=$?
read -r opened errors secs before rounds growth < <(field sessions sessions errors seconds rss_before_kib rounds growth_after_first_round_kib | paste -sd' ')
echo "   rounds (sessions, RSS KiB after open / after DELETE): $rounds; RSS before $before KiB; growth $growth KiB; first round opened in ${secs} s; $errors errors"
[ "$rc" -eq 0 ] || fail "sessions run exited $rc ($(field sessions notes))"
[ "$errors" = 0 ] || fail "sessions run: $errors errors ($(field sessions notes))"
python3 - "$tmp/sessions.json" "$sessions" <<'PY' || fail "a round did not open every session"
import json, sys
r = json.load(open(sys.argv[1]))
assert [x["sessions"] for x in r["rounds"]] == [int(sys.argv[2])] * 2, r["rounds"]
PY
stop_server

echo "== soak ($mode): HTTP churn, $churn sessions abandoned at $churn_rate/s against a 1 s idle timeout and a bound of $churn_bound sessions"
start_server --max-sessions "$churn_bound" --idle-timeout 1
rc=0
run_load churn --url "$url" --pid "$server_pid" --mode churn --sessions "$churn" --rate "$churn_rate" \
  --warmup "$churn_warmup" --call "${tool[@]}" -k 16 --rss-every-ms "$rss_every" \
  --max-rss-growth-kib "$churn_growth" --max-seconds "$churn_secs" || rc=$?
read -r opened errors secs base growth last < <(field churn sessions errors seconds rss_baseline_kib rss_growth_kib rss_last_kib | paste -sd' ')
echo "   $opened sessions opened and abandoned in ${secs} s, $errors refused or failed; RSS baseline $base KiB, growth $growth KiB, last $last KiB"
[ "$rc" -eq 0 ] || fail "churn run exited $rc ($(field churn notes))"
[ "$errors" = 0 ] && [ "$opened" = "$churn" ] || fail "churn: $opened opened, $errors errors ($(field churn notes))"
sleep 2
rc=0
run_load after-churn --url "$url" --pid "$server_pid" --mode sessions --sessions "$churn_bound" -k 16 --max-seconds 60 || rc=$?
read -r opened errors after < <(field after-churn sessions errors rss_after_delete_kib | paste -sd' ')
echo "   2 s later: $opened of $churn_bound sessions open again ($errors refused); RSS after their DELETE $after KiB"
[ "$rc" -eq 0 ] && [ "$errors" = 0 ] && [ "$opened" = "$churn_bound" ] || fail "the abandoned sessions were not all reaped"
stop_server

echo "== soak ($mode): passed"
