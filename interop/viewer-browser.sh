#!/usr/bin/env bash
# The session viewer in a real browser (issue 31, item 2):
#   1. `switchboard record` relays a client script to `switchboard serve --example add` and records
#      the session: a tools/list before initialize (a violation, LC-1), the handshake, a call with a
#      progress token and a call whose tool name is `</script><script>alert(1)</script>`;
#   2. `switchboard trace --json` counts its frames and violations (the recording's line count
#      must agree), and `switchboard trace --html` renders the page to a file;
#   3. interop/browser/viewer.mjs opens it from 127.0.0.1 in Debian's headless chromium
#      (playwright-core): no request but the page's own, the counts and rows, the violations
#      marked, no script of a frame run, an answer's link to its request and back, the filter.
#   4. the live page: `switchboard record --ui` serves it during a session; interop/browser/live.mjs
#      sees a request written after the page loaded appear with its answer, no reload, own origin only.
# Ends with `N passed, M failed`; exit 0 only if nothing failed; a run that cannot start fails.
# Install first: scripts/install-peers.sh.
#
#   interop/viewer-browser.sh path/to/switchboard
set -euo pipefail
cd "$(dirname "$0")/.."
BIN_ARG="${1:?usage: interop/viewer-browser.sh path/to/switchboard}"
. interop/lib.sh
[ -x "$BIN_ARG" ] || interop_die "no switchboard binary at $BIN_ARG (cargo build --bin switchboard)"
BIN="$(cd "$(dirname "$BIN_ARG")" && pwd)/$(basename "$BIN_ARG")"
[ -x "$CHROMIUM_BIN" ] || interop_die "chromium is not installed at $CHROMIUM_BIN; run scripts/install-peers.sh"
[ -d interop/browser/node_modules/playwright-core ] || interop_die "playwright-core is not installed in interop/browser; run scripts/install-peers.sh"
interop_use_node22
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

cat > "$WORK/client.jsonl" << 'EOF_SCRIPT'
{"jsonrpc":"2.0","id":0,"method":"tools/list"}
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"viewer-test","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},"_meta":{"progressToken":"p1"}}}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"</script><script>alert(1)</script>","arguments":{}}}
EOF_SCRIPT
rc=0
timeout 60 "$BIN" record -o "$WORK/session.jsonl" --stdio "$BIN serve --example add" \
  < "$WORK/client.jsonl" > "$WORK/relayed.out" 2> "$WORK/record.err" || rc=$?
[ "$rc" = 0 ] || interop_die "switchboard record exited $rc: $(tail -c 600 "$WORK/record.err")"
[ -s "$WORK/session.jsonl" ] || interop_die "switchboard record wrote no recording"

# trace --json exits 1 when the session has violations (this one has).
rc=0
"$BIN" trace --json "$WORK/session.jsonl" > "$WORK/trace.json" 2> "$WORK/trace.err" || rc=$?
[ "$rc" = 1 ] || interop_die "switchboard trace --json exited $rc (want 1: the session holds a violation): $(head -c 300 "$WORK/trace.err")"
read -r FRAMES VIOLATIONS < <(python3 -c '
import json, sys
s = json.loads(open(sys.argv[1]).read().splitlines()[-1])["summary"]
print(s["frames"], s["violations"])' "$WORK/trace.json")
LINES="$(wc -l < "$WORK/session.jsonl")"
[ "$FRAMES" = "$LINES" ] || interop_die "trace counts $FRAMES frames, the recording holds $LINES"
[ "$VIOLATIONS" -ge 1 ] || interop_die "trace found no violation in a session holding one"
echo "-- recorded $FRAMES frames, $VIOLATIONS violation(s)"

rc=0
"$BIN" trace --html "$WORK/session.jsonl" > "$WORK/viewer.html" 2> "$WORK/html.err" || rc=$?
[ "$rc" = 1 ] || interop_die "switchboard trace --html exited $rc (want 1, as trace): $(head -c 300 "$WORK/html.err")"

echo "-- a browser: interop/browser/viewer.mjs (playwright-core, $CHROMIUM_BIN headless)"
rc=0
CHROMIUM="$CHROMIUM_BIN" timeout 300 node interop/browser/viewer.mjs "$WORK/viewer.html" "$FRAMES" "$VIOLATIONS" \
  > "$WORK/browser.out" 2> "$WORK/browser.err" || rc=$?
cat "$WORK/browser.out"
if [ "$rc" != 0 ] || ! grep -q '^[0-9]* passed, 0 failed$' "$WORK/browser.out"; then
  echo "interop: viewer-browser FAILED (exit $rc) $(tail -c 600 "$WORK/browser.err" | tr '\n' ' ')" >&2
  exit 1
fi

# The live page: `switchboard record --ui` during a session whose client is a FIFO held open
# here; interop/browser/live.mjs loads the page after the handshake, writes a tools/call into
# the FIFO and sees it and its answer appear.
echo "-- the live page: switchboard record --ui, interop/browser/live.mjs"
mkfifo "$WORK/in"
"$BIN" record -o "$WORK/live.jsonl" --ui 0 --stdio "$BIN serve --example add" \
  < "$WORK/in" > "$WORK/live.out" 2> "$WORK/live.err" &
REC=$!
exec 3> "$WORK/in"
printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"live-test","version":"1"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&3
VIEWER=""
for _ in $(seq 1 300); do
  VIEWER="$(grep -o 'http://127\.0\.0\.1:[0-9]*/' "$WORK/live.err" | head -n 1 || true)"
  [ -n "$VIEWER" ] && break
  kill -0 "$REC" 2>/dev/null || break
  sleep 0.1
done
[ -n "$VIEWER" ] || interop_die "record --ui announced no viewer: $(tail -c 600 "$WORK/live.err")"
rc=0
CHROMIUM="$CHROMIUM_BIN" timeout 300 node interop/browser/live.mjs "$VIEWER" "$WORK/in" \
  > "$WORK/live-browser.out" 2> "$WORK/live-browser.err" || rc=$?
exec 3>&-
wait "$REC" || true
cat "$WORK/live-browser.out"
if [ "$rc" != 0 ] || ! grep -q '^[0-9]* passed, 0 failed$' "$WORK/live-browser.out"; then
  echo "interop: viewer-browser (live) FAILED (exit $rc) $(tail -c 600 "$WORK/live-browser.err" | tr '\n' ' ')" >&2
  exit 1
fi
grep -q 'tools/call' "$WORK/live.jsonl" || interop_die "the recording lacks the call the page saw"
