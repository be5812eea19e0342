#!/usr/bin/env bash
# Telemetry across SDKs: traces and metrics, read from what each side exported.
#   (a) the official Python SDK (mcp 2.3.0; OpenTelemetry on by default) as client against
#       `switchboard serve --http --otlp`: our server span's parent is the Python client's span,
#       in the same trace; our metrics arrive over OTLP too.
#   (b) `switchboard call --otlp` against a Python SDK server: the Python server span's parent is
#       our client span, in the same trace.
#   Both sides export OTLP/HTTP to interop/otel_receiver.py, which decodes with the official
#   protobuf definitions (opentelemetry-proto).
#   (c) a real Prometheus (Debian's `prometheus`) on a loopback port scrapes `serve --metrics`;
#       its HTTP query API returns the tools/call request counter after a known number of calls.
# A peer that cannot start fails the script. Ends with `N passed, M failed`; exit 0 only if
# nothing failed. Install first: scripts/install-peers.sh.
#
#   interop/otel-peers.sh path/to/switchboard
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:?usage: interop/otel-peers.sh path/to/switchboard}"
. interop/lib.sh
[ -x "$BIN" ] || interop_die "no switchboard binary at $BIN (cargo build --bin switchboard)"
[ -x "$VENV_PY" ] || interop_die "the Python venv is not installed at $VENV_DIR; run scripts/install-peers.sh"
"$VENV_PY" -c 'import opentelemetry.sdk, opentelemetry.proto, opentelemetry.exporter.otlp.proto.http' ||
  interop_die "the OpenTelemetry Python packages are missing from $VENV_DIR; run scripts/install-peers.sh"
PROMETHEUS="$(command -v prometheus || echo /usr/bin/prometheus)"
[ -x "$PROMETHEUS" ] || interop_die "prometheus is not installed; run scripts/install-peers.sh"

WORK="$(mktemp -d)"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do
    kill "$p" 2> /dev/null || true
    wait "$p" 2> /dev/null || true
  done
  rm -rf "$WORK"
}
trap cleanup EXIT
OUT="$WORK/otlp.jsonl"
touch "$OUT"
# Our exporters batch: short delays so that the spans and metrics arrive within the waits below.
export OTEL_BSP_SCHEDULE_DELAY=100 OTEL_METRIC_EXPORT_INTERVAL=500

# wait_for FILE PATTERN WHAT: up to 60 s for PATTERN (grep -E) in FILE; fails the script if not.
wait_for() {
  for _ in $(seq 600); do
    grep -qE "$2" "$1" 2> /dev/null && return 0
    sleep 0.1
  done
  interop_die "$3 did not start: $(tail -c 2000 "$1")"
}

# The receiver.
"$VENV_PY" interop/otel_receiver.py "$OUT" > "$WORK/receiver.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/receiver.log" '^listening on ' "the OTLP receiver"
OTLP="$(sed -n 's/^listening on //p' "$WORK/receiver.log")"

# spans_check NAME PYTHON-EXPR: up to 60 s for the expression over `spans` (every span the
# receiver decoded, as dicts) and `metrics` to be true; prints what was seen when it never is.
spans_check() {
  local name="$1" expr="$2"
  if python3 - "$OUT" "$expr" <<'PY'
import json, sys, time
path, expr = sys.argv[1], sys.argv[2]
deadline = time.monotonic() + 60
while True:
    rows = [json.loads(l) for l in open(path) if l.strip()]
    spans = [r for r in rows if r["signal"] == "span"]
    metrics = [r for r in rows if r["signal"] == "metric"]
    def one(service, name, kind):
        found = [s for s in spans if s["service"] == service and s["name"] == name and s["kind"] == kind]
        return found[-1] if found else None
    try:
        ok, err = eval("(" + expr + ")"), None
    except Exception as e:  # a span the expression needs is not there yet
        ok, err = False, e
    if ok:
        sys.exit(0)
    if time.monotonic() > deadline:
        print(f"  last evaluation: {err!r}", file=sys.stderr)
        for s in spans:
            print(f"  seen: {s['service']} {s['kind']} {s['name']!r} trace={s['trace_id']} span={s['span_id']} parent={s['parent_span_id']}", file=sys.stderr)
        sys.exit(1)
    time.sleep(0.2)
PY
  then
    pass "$name"
  else
    fail "$name" "not seen in what was exported (above)"
  fi
}

echo "== (a) the Python SDK client against switchboard serve --http --otlp"
start_switchboard_http "$BIN" "$WORK/serve-a.log" --example add --otlp "$OTLP"
PIDS+=("$SB_HTTP_PID")
if timeout 120 "$VENV_PY" interop/py_otel_peer.py client "$SB_HTTP_URL" "$OTLP" > "$WORK/py-client.log" 2>&1; then
  pass "python client called add on our server"
else
  fail "python client called add on our server" "$(tail -c 1000 "$WORK/py-client.log")"
fi
spans_check "our server span's parent is the Python client's span, same trace" '
(c := one("py-client", "MCP send tools/call add", "CLIENT")) and
(s := one("switchboard-serve", "tools/call add", "SERVER")) and
s["trace_id"] == c["trace_id"] and s["parent_span_id"] == c["span_id"] and
s["attributes"].get("mcp.method.name") == "tools/call" and s["attributes"].get("gen_ai.tool.name") == "add" and
s["attributes"].get("network.transport") == "tcp" and bool(s["attributes"].get("mcp.session.id"))'
spans_check "our metrics arrive over OTLP (switchboard.requests for tools/call)" '
any(m["service"] == "switchboard-serve" and m["name"] == "switchboard.requests" and
    m["attributes"].get("mcp.method.name") == "tools/call" and m["value"] >= 1 for m in metrics)'

echo "== (b) switchboard call --otlp against a Python SDK server"
"$VENV_PY" interop/py_otel_peer.py server "$OTLP" > "$WORK/py-server.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/py-server.log" 'listening on http://127\.0\.0\.1:[0-9]+/mcp' "the Python SDK server"
PY_URL="$(grep -oE 'http://127\.0\.0\.1:[0-9]+/mcp' "$WORK/py-server.log" | head -n 1)"
if timeout 60 "$BIN" call --url "$PY_URL" --otlp "$OTLP" tools/call add a=2 b=3 > "$WORK/call.out" 2> "$WORK/call.err" &&
  grep -q '5' "$WORK/call.out"; then
  pass "switchboard call --otlp called add on the Python server"
else
  fail "switchboard call --otlp called add on the Python server" "$(tail -c 1000 "$WORK/call.err") $(tail -c 500 "$WORK/call.out")"
fi
spans_check "the Python server span's parent is our client span, same trace" '
(c := one("switchboard-call", "tools/call add", "CLIENT")) and
(s := one("py-server", "tools/call add", "SERVER")) and
s["trace_id"] == c["trace_id"] and s["parent_span_id"] == c["span_id"]'

echo "== (c) a real Prometheus scrapes switchboard serve --metrics"
start_switchboard_http "$BIN" "$WORK/serve-c.log" --example add --metrics
PIDS+=("$SB_HTTP_PID")
TARGET="${SB_HTTP_URL#http://}"
TARGET="${TARGET%/mcp}"
PROM_PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')"
cat > "$WORK/prometheus.yml" <<YML
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: switchboard
    metrics_path: /metrics
    static_configs:
      - targets: ["$TARGET"]
YML
"$PROMETHEUS" --config.file="$WORK/prometheus.yml" --web.listen-address="127.0.0.1:$PROM_PORT" \
  --storage.tsdb.path="$WORK/tsdb" > "$WORK/prometheus.log" 2>&1 &
PIDS+=($!)
wait_for "$WORK/prometheus.log" 'Server is ready to receive web requests' "prometheus"
CALLS=5
ok_calls=0
for i in $(seq "$CALLS"); do
  if timeout 60 "$BIN" call --url "$SB_HTTP_URL" tools/call add a="$i" b=1 > /dev/null 2>> "$WORK/calls.err"; then
    ok_calls=$((ok_calls + 1))
  fi
done
[ "$ok_calls" = "$CALLS" ] || fail "$CALLS calls made" "only $ok_calls succeeded: $(tail -c 500 "$WORK/calls.err")"
if python3 - "$PROM_PORT" "$CALLS" <<'PY'
import json, sys, time, urllib.parse, urllib.request
port, want = sys.argv[1], float(sys.argv[2])
q = 'sum(switchboard_requests_total{mcp_method_name="tools/call",switchboard_side="server",switchboard_outcome="ok"})'
url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": q})
deadline, last = time.monotonic() + 60, None
while time.monotonic() < deadline:
    try:
        body = json.load(urllib.request.urlopen(url, timeout=5))
        result = body["data"]["result"]
        last = result
        if result and float(result[0]["value"][1]) == want:
            print(f"  prometheus: {q} = {result[0]['value'][1]}")
            sys.exit(0)
    except Exception as e:  # not up yet, or no sample yet
        last = e
    time.sleep(0.5)
print(f"  prometheus never returned {want}: last {last}", file=sys.stderr)
sys.exit(1)
PY
then
  pass "prometheus's query API returns $CALLS tools/call requests"
else
  fail "prometheus's query API returns $CALLS tools/call requests" "$(tail -c 1500 "$WORK/prometheus.log")"
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
